"""Resume: `sim run` killed (SIGKILL) during a 300-session run, then the same command again: no session lost or
duplicated, and the summary equals an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _command(out: Path) -> list[str]:
    return [sys.executable, "-m", "uxbench", "sim", "run", "--personas", "demo", "--lang", "en", "--trials", "25",
            "--model", "scripted:always-bad", "-M", "latency_ms=40", "--simulator", "scripted:user",
            "--concurrency", "12", "--out", str(out), "--n-boot", "300", "--quiet", "--format", "json",
            "--no-cache"]


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
    except sqlite3.Error:
        return 0


def _answered(value: object) -> object:
    """A summary block without the counts of requests sent (a killed run sent more than it recorded)."""
    if isinstance(value, dict):
        return {k: _answered(v) for k, v in value.items()
                if k not in ("requests_sent", "unanswered_requests", "unanswered_cost_usd_max")}
    return value


@pytest.mark.slow
def test_kill_and_rerun_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "UXBENCH_CACHE_DIR": str(tmp_path / "cache")}
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_command(killed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _stored(killed / "sim.sqlite") < 60 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    partial = _stored(killed / "sim.sqlite")
    assert 0 < partial < 300 and not (killed / "summary.json").exists()

    resumed = subprocess.run(_command(killed), env=env, capture_output=True, text=True, timeout=300, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" not in resumed.stderr or f"{partial} sessions already done" in resumed.stderr
    straight = subprocess.run(_command(tmp_path / "straight"), env=env, capture_output=True, text=True, timeout=300,
                              check=False)
    assert straight.returncode == 0, straight.stderr

    with sqlite3.connect(killed / "sim.sqlite") as conn:
        ids = [row[0] for row in conn.execute("SELECT session_id FROM sessions")]
    assert len(ids) == len(set(ids)) == 300
    rows = [json.loads(line) for line in (killed / "sessions.jsonl").read_text().splitlines()]
    keys = [(r["conversation_id"], r["turn_index"]) for r in rows]
    assert len(keys) == len(set(keys)) and len({r["conversation_id"] for r in rows}) == 300
    a = json.loads((killed / "summary.json").read_text())
    b = json.loads((tmp_path / "straight" / "summary.json").read_text())
    for key in ("metrics", "metrics_unflagged", "gate", "n_sessions", "usage", "discarded", "by_lang"):
        assert _answered(a[key]) == _answered(b[key]), key
    # the requests in flight at the kill were sent, and are counted as such beside the calls the sessions hold
    sent, calls = a["usage"]["assistant"]["requests_sent"], a["usage"]["assistant"]["calls"]
    assert sent >= calls == b["usage"]["assistant"]["requests_sent"]
    assert a["usage"]["assistant"]["unanswered_requests"] == sent - calls
    assert a["invocation"]["resumed_sessions"] == partial
