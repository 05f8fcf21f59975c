"""Kill `uxbench run` mid-run (SIGKILL and Ctrl-C), rerun the same command: same summary, no duplicates."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_support import judge_row, write_jsonl

from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

N = 40


@pytest.fixture
def slow_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(LoopbackConfig(latency_ms=150)) as srv:
        yield srv


def _cmd(data: Path, out: Path, srv: LoopbackServer) -> list[str]:
    return [
        sys.executable, "-m", "uxbench", "run", "--model", "openai:loopback", "--model-arg", f"base_url={srv.base_url}",
        "--data", str(data), "--out", str(out), "--concurrency", "4", "--quiet", "--lang", "zh",
    ]


def _rows_done(out: Path) -> int:
    db = out / "samples.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM records").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def _interrupt_midway(cmd: list[str], out: Path, env: dict[str, str], sig: int) -> None:
    # A test run started in the background of a script inherits SIGINT ignored (bash does that without job
    # control), and so would the run: it gets Ctrl+C's default back, as from a terminal.
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while _rows_done(out) < 8:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.05)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert 8 <= _rows_done(out) < N, "the interruption should leave the run unfinished"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_interrupted_run_resumes_to_the_same_summary(tmp_path: Path, slow_server: LoopbackServer, sig: int) -> None:
    rows = [judge_row(f"c{i:02d}", "good" if i % 2 else "bad", ["好", "差", "嗯"][i % 3]) for i in range(N)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  loopback: {input: 1.0, output: 2.0}\n", encoding="utf-8")
    env = {**os.environ, "UXBENCH_CACHE_DIR": str(tmp_path / "cache"), "UXBENCH_PRICES": str(prices)}

    reference = tmp_path / "reference"
    subprocess.run(_cmd(data, reference, slow_server), env=env, check=True, capture_output=True, timeout=300)

    assert json.loads((reference / "summary.json").read_text(encoding="utf-8"))["usage"]["model"]["requests_sent"] == N
    slow_server.stats.reset()
    out = tmp_path / "interrupted"
    env_fresh = {**env, "UXBENCH_CACHE_DIR": str(tmp_path / "cache2")}  # the rerun must really call the server
    _interrupt_midway(_cmd(data, out, slow_server), out, env_fresh, sig)
    done = subprocess.run(_cmd(data, out, slow_server), env=env_fresh, capture_output=True, timeout=300, text=True)
    assert done.returncode == 0, done.stderr
    assert "resuming" in done.stderr

    want = json.loads((reference / "summary.json").read_text(encoding="utf-8"))
    got = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert got["metrics"] == want["metrics"]
    assert got["n_selected"] == want["n_selected"] == N and got["complete"]
    assert _rows_done(out) == N
    ids = [json.loads(x)["sample_id"] for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(ids) == len(set(ids)) == N
    # Usage and cost are sums over the records, not over the last invocation (which made only the missing calls).
    usage, ref = got["usage"]["model"], want["usage"]["model"]
    assert usage["requests"] == ref["requests"] == N
    assert (usage["input_tokens"], usage["output_tokens"]) == (ref["input_tokens"], ref["output_tokens"])
    assert usage["cost_usd"] == ref["cost_usd"]
    assert got["invocation"]["usage"]["openai:loopback"]["requests"] < N
    # The requests in flight at the interruption were sent (and served) but never recorded: they are counted as
    # sent (at most the 4 in flight beyond what the server saw, sent as the run died).
    served = slow_server.stats.requests
    assert served >= N and served <= usage["requests_sent"] <= served + 4
    # ... and counted as spent, apart: at most the mean cost of an answer each (issue 28)
    lost = usage["requests_sent"] - N
    assert usage["unanswered_requests"] == lost
    assert usage["cost_usd"] and usage["unanswered_cost_usd_max"] == pytest.approx(usage["cost_usd"] / N * lost,
                                                                                   abs=1e-6)
    assert got["cost_usd_max"] == pytest.approx(got["cost_usd"] + usage["unanswered_cost_usd_max"], abs=1e-6)
    if lost:
        assert "unanswered" in done.stderr + done.stdout and "up to" in done.stderr + done.stdout
