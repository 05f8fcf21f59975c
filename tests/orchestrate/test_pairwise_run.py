"""`run_pairwise` over two real Task 2 run directories, judged by a loopback server: hand-counted figures,
resume after failures and after a kill (only what is missing is asked again), and refusals."""

from __future__ import annotations

import asyncio
import json
import os
import re
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

from uxbench.errors import ConfigError, DataError
from uxbench.orchestrate.pairwise import PairwiseSpec, run_pairwise
from uxbench.orchestrate.runner import RunSpec, execute
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

QUERIES = ([f"question c{i:02d}" for i in range(6)] + ["precise question c06", "precise question c07"]
           + ["garble c08", "[[FAULT:400]] c09"])


def eval_rows(queries: list[str]) -> list[dict[str, Any]]:
    return [{"cid": f"c{i:02d}", "lang": "en", "history": [], "query": q, "scenario": "s"}
            for i, q in enumerate(queries)]


def make_runs(root: Path, queries: list[str]) -> tuple[Path, Path]:
    """Run A: scripted:echo (the reply repeats the query). Run B: always 'precise answer'."""
    root.mkdir(parents=True, exist_ok=True)
    data = write_jsonl(root / "eval.jsonl", eval_rows(queries))
    rules = root / "rules.json"
    rules.write_text(json.dumps({"rules": [], "default": "precise answer"}), encoding="utf-8")
    out = []
    for name, model in (("a", "scripted:echo"), ("b", f"scripted:file:{rules}")):
        spec = RunSpec(task="eval", model=model, data=str(data), out=root / name, use_cache=False)
        asyncio.run(execute(spec))
        out.append(root / name)
    return out[0], out[1]


def _replies(messages: list[dict[str, Any]]) -> tuple[str, str]:
    user = messages[-1]["content"]
    found = re.search(r"\[Reply A\]\n(.*?)\n\n\[Reply B\]\n(.*?)\n\nAfter reading", user, re.S)
    assert found is not None, user
    return found.group(1), found.group(2)


def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Prefers the reply that says 'precise'; with both or neither, picks the first shown (position bias)."""
    first, second = _replies(messages)
    if "garble" in first + second:
        return "hmm, hard to say"
    if ("precise" in second) and ("precise" not in first):
        return "B"
    return "A"


@pytest.fixture
def judge() -> Iterator[LoopbackServer]:
    with LoopbackServer(LoopbackConfig(responder=respond)) as srv:
        yield srv


def _spec(a: Path, b: Path, srv: LoopbackServer, out: Path, **extra: Any) -> PairwiseSpec:
    return PairwiseSpec(run_a=a, run_b=b, judge="openai:judge", judge_args={"base_url": srv.base_url},
                        out=out, max_attempts=2, **extra)


def test_figures_equal_the_hand_count_and_a_rerun_asks_only_for_failures(
    tmp_path: Path, judge: LoopbackServer
) -> None:
    a, b = make_runs(tmp_path, QUERIES)
    out = tmp_path / "cmp"
    result = asyncio.run(run_pairwise(_spec(a, b, judge, out)))
    f = result.figures
    # c00-c05: B consistently (shown second: B; shown first: A); c06-c07: both say 'precise', the judge picks
    # the first position in both orders -> inconsistent -> tie; c08: unreadable; c09: the judge refuses (400).
    assert (f["a_wins"], f["b_wins"], f["ties_both_orders"], f["position_inconsistent"]) == (0, 6, 0, 2)
    assert (f["n_pairs"], f["n_decided"], f["n_unreadable"], f["n_missing"]) == (10, 8, 1, 1)
    assert f["win_rate_a"]["value"] == pytest.approx(1 / 8)  # (0 wins + 2 ties / 2) / 8
    assert f["position_inconsistency"]["value"] == pytest.approx(2 / 8)
    assert f["first_position_picked"]["value"] == pytest.approx(10 / 16)  # 6 + 4 'A' of 16 readable answers
    assert f["invocation"]["failed_now"] == 2 and f["matching"]["n_shared"] == 10
    assert judge.stats.requests == 2 * 10  # one attempt each: a 400 is not retried
    stored = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert stored["judges"][f["judge"]]["win_rate_a"] == f["win_rate_a"]
    manifest = json.loads((out / "pairwise.json").read_text(encoding="utf-8"))
    assert manifest["run_a"]["model"] == "scripted:echo" and f["judge"] in manifest["judges"]

    again = asyncio.run(run_pairwise(_spec(a, b, judge, out))).figures
    assert judge.stats.requests == 2 * 10 + 2  # only the failed case's two orders were asked again
    assert again["invocation"]["already_done"] == 18
    assert {k: again[k] for k in ("a_wins", "b_wins", "win_rate_a")} == {k: f[k] for k in ("a_wins", "b_wins",
                                                                                            "win_rate_a")}

    swapped = asyncio.run(run_pairwise(_spec(b, a, judge, tmp_path / "swapped"))).figures
    assert (swapped["a_wins"], swapped["b_wins"]) == (6, 0)  # the same verdicts, seen from the other side

    limited = asyncio.run(run_pairwise(_spec(a, b, judge, tmp_path / "limited", limit=3))).figures
    assert limited["n_pairs"] == 3


def test_cases_are_matched_by_id_and_context(tmp_path: Path, judge: LoopbackServer) -> None:
    a, _ = make_runs(tmp_path / "one", QUERIES[:4])
    changed = [*QUERIES[:2], "another question", "question c03"]
    _, b = make_runs(tmp_path / "two", changed[:3])  # c00-c02; c02's conversation differs
    f = asyncio.run(run_pairwise(_spec(a, b, judge, tmp_path / "cmp"))).figures
    assert f["matching"]["n_a"] == 4 and f["matching"]["n_b"] == 3
    assert f["matching"]["n_shared"] == 3 and f["matching"]["n_context_differs"] == 1 and f["n_pairs"] == 2


def test_refusals(tmp_path: Path, judge: LoopbackServer) -> None:
    a, b = make_runs(tmp_path, QUERIES[:3])
    with pytest.raises(ConfigError, match="holds a comparison of other runs"):
        asyncio.run(run_pairwise(_spec(a, b, judge, tmp_path / "cmp")))
        asyncio.run(run_pairwise(_spec(b, a, judge, tmp_path / "cmp")))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a pairwise comparison directory"):
        asyncio.run(run_pairwise(_spec(a, b, judge, tmp_path / "other")))
    (tmp_path / "d2").mkdir()
    lone = write_jsonl(tmp_path / "d2" / "eval.jsonl", eval_rows(["something else entirely"]))
    c = tmp_path / "c"
    asyncio.run(execute(RunSpec(task="eval", model="scripted:always-good", data=str(lone), out=c, use_cache=False)))
    with pytest.raises(DataError, match="No case can be compared"):
        asyncio.run(run_pairwise(_spec(a, c, judge, tmp_path / "none")))


def _rows(out: Path) -> int:
    db = out / "pairwise.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM verdicts WHERE status = 'ok'").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def test_a_killed_comparison_resumes_to_the_same_figures(tmp_path: Path) -> None:
    n = 24
    a, b = make_runs(tmp_path, [f"question c{i:02d}" for i in range(n)])
    env = {**os.environ, "UXBENCH_CACHE_DIR": str(tmp_path / "cache")}

    def cmd(srv: LoopbackServer, out: Path) -> list[str]:
        return [sys.executable, "-m", "uxbench", "pairwise", str(a), str(b), "--judge", "openai:judge", "-J",
                f"base_url={srv.base_url}", "--out", str(out), "--concurrency", "2", "--no-cache", "--quiet",
                "--format", "json"]

    with LoopbackServer(LoopbackConfig(responder=respond, latency_ms=100)) as srv:
        reference = subprocess.run(cmd(srv, tmp_path / "ref"), env=env, capture_output=True, text=True, timeout=300)
        assert reference.returncode == 0, reference.stderr
        out = tmp_path / "killed"
        proc = subprocess.Popen(cmd(srv, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while _rows(out) < 6:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        done_at_kill = _rows(out)
        assert 6 <= done_at_kill < 2 * n
        before = srv.stats.requests
        resumed = subprocess.run(cmd(srv, out), env=env, capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        assert srv.stats.requests - before == 2 * n - done_at_kill  # nothing stored is asked again
    want, got = json.loads(reference.stdout), json.loads(resumed.stdout)
    for key in ("a_wins", "b_wins", "ties_both_orders", "position_inconsistent", "n_decided", "win_rate_a"):
        assert got[key] == want[key], key
    assert got["b_wins"] == n and _rows(out) == 2 * n
