"""Two processes on one run directory: the second gets a clear error naming the first, and calls nothing."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import judge_row, write_jsonl

from uxbench.dirlock import DirectoryBusyError
from uxbench.orchestrate.runner import RunSpec, execute
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer


def _records(out: Path) -> int:
    # read-only: a plain connect would create an empty samples.sqlite while the run is still starting, and the
    # run then (rightly) refuses a directory holding a file it did not write
    try:
        con = sqlite3.connect(f"{(out / 'samples.sqlite').as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM records").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def test_a_second_run_on_a_busy_directory_is_refused(tmp_path: Path) -> None:
    rows = [judge_row(f"c{i}", "good" if i % 2 else "bad", "好") for i in range(30)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    out = tmp_path / "run"
    env = {**os.environ, "UXBENCH_CACHE_DIR": str(tmp_path / "cache")}
    with LoopbackServer(LoopbackConfig(latency_ms=200)) as srv:
        cmd = [sys.executable, "-m", "uxbench", "run", "--model", "openai:loopback", "-M", f"base_url={srv.base_url}",
               "--data", str(data), "--out", str(out), "--concurrency", "2", "--quiet", "--lang", "zh"]
        first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while _records(out) < 1:
                assert first.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            with LoopbackServer() as other:  # the second process's own server: it must get no call at all
                spec = RunSpec(model="openai:loopback", model_args={"base_url": srv.base_url}, data=str(data),
                               out=out, task_options={"lang": "zh"}, cache_path=tmp_path / "cache2.sqlite")
                spec = spec.model_copy(update={"model_args": {"base_url": other.base_url}})
                with pytest.raises(DirectoryBusyError, match=f"pid {first.pid}"):
                    asyncio.run(execute(spec))
                assert other.stats.requests == 0
        finally:
            first.kill()
            first.wait(timeout=30)
        # once the holder is gone (even killed), the directory is free again and the run resumes
        result = asyncio.run(execute(RunSpec(model="openai:loopback", model_args={"base_url": srv.base_url},
                                             data=str(data), out=out, task_options={"lang": "zh"},
                                             cache_path=tmp_path / "cache2.sqlite")))
    assert result.summary["n_selected"] == 30 and result.summary["complete"]
