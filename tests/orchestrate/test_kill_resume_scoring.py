"""Tasks 2/3 in two resumable steps: kill `uxbench run --task eval` during generation, rerun and kill it during
scoring, rerun to the end: the summary equals an uninterrupted run's, and no generation is repeated except
those that were in flight when the process died."""

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
from typing import Any

import pytest
from run_support import write_jsonl

from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

N = 30
CONCURRENCY = 4


def _echo(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    return str(messages[-1]["content"])


@pytest.fixture
def servers() -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    with LoopbackServer(LoopbackConfig(latency_ms=120, responder=_echo)) as gen, \
            LoopbackServer(LoopbackConfig(latency_ms=120)) as judge:
        yield gen, judge


def _cmd(data: Path, out: Path, gen: LoopbackServer, judge: LoopbackServer) -> list[str]:
    return [
        sys.executable, "-m", "uxbench", "run", "--task", "eval", "--model", "openai:gen",
        "-M", f"base_url={gen.base_url}", "--judge", "openai:grm", "-J", f"base_url={judge.base_url}",
        "--judge-lang", "en", "--data", str(data), "--out", str(out), "--concurrency", str(CONCURRENCY), "--quiet",
    ]


def _count(out: Path, table: str) -> int:
    db = out / "samples.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return int(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def _kill_when(cmd: list[str], env: dict[str, str], out: Path, table: str, at_least: int) -> None:
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while _count(out, table) < at_least:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def test_generation_and_scoring_killed_then_resumed(
    tmp_path: Path, servers: tuple[LoopbackServer, LoopbackServer]
) -> None:
    gen, judge = servers
    rows = [{"cid": f"c{i:02d}", "lang": "en", "history": [], "scenario": ["coding", "writing"][i % 2],
             "query": f"question {i} [[SAY:{'good' if i % 3 else 'bad'}]] [[P:{0.5 + (i % 5) / 10:.1f}]]"}
            for i in range(N)]
    data = write_jsonl(tmp_path / "eval.jsonl", rows)
    env = {**os.environ, "UXBENCH_CACHE_DIR": str(tmp_path / "cache")}
    reference = tmp_path / "reference"
    subprocess.run(_cmd(data, reference, gen, judge), env=env, check=True, capture_output=True, timeout=300)
    gen.stats.reset()
    judge.stats.reset()

    out = tmp_path / "interrupted"
    env2 = {**env, "UXBENCH_CACHE_DIR": str(tmp_path / "cache2")}  # no cache hits: every call is real
    _kill_when(_cmd(data, out, gen, judge), env2, out, "records", 8)
    assert _count(out, "records") < N and _count(out, "scores") == 0
    _kill_when(_cmd(data, out, gen, judge), env2, out, "scores", 8)
    assert _count(out, "records") == N and _count(out, "scores") < N
    done = subprocess.run(_cmd(data, out, gen, judge), env=env2, capture_output=True, timeout=300, text=True)
    assert done.returncode == 0, done.stderr

    want = json.loads((reference / "summary.json").read_text(encoding="utf-8"))
    got = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert got["judges"] == want["judges"]
    assert got["n_generated"] == want["n_generated"] == N
    # no generation repeated except those in flight at the kill; no score kept twice
    assert N <= gen.stats.requests <= N + CONCURRENCY
    assert N <= judge.stats.requests <= N + CONCURRENCY
    assert _count(out, "scores") == N
    # usage is summed from the records: equal to the uninterrupted run's
    assert got["usage"]["model"]["requests"] == want["usage"]["model"]["requests"] == N
