"""A Task 1 run whose cases are read in a forked process (`data.read_ahead`) gives the records and figures of one
that reads them itself, and a rerun of it resumes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from run_support import judge_row, write_jsonl

from uxbench.data import read_ahead
from uxbench.data.loaders import load_cases
from uxbench.orchestrate.runner import RunSpec, execute
from uxbench.testing.loopback import LoopbackServer

VOLATILE = {"latency_s", "usage"}  # the loopback server's timing; token counts follow the prompt, equal anyway


def _spec(data: Path, out: Path, srv: LoopbackServer) -> RunSpec:
    return RunSpec(task="judge", model="openai:loopback", model_args={"base_url": srv.base_url, "timeout": "5"},
                   data=str(data), out=out, concurrency=8, task_options={"lang": "zh"}, use_cache=False)


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in lines]


def test_read_ahead_gives_the_same_run(tmp_path: Path, loopback: LoopbackServer,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [judge_row(f"c{i}", "good" if i % 2 else "bad", "好" if i % 3 else "差") for i in range(80)]
    rows.append(rows[4])  # an exact duplicate, left out either way
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    if not read_ahead.usable(load_cases(str(data), task="judge")):
        pytest.skip("reading ahead needs a platform that forks (Linux)")
    monkeypatch.setattr(read_ahead, "MIN_ROWS", 1)
    started: list[int] = []
    original = read_ahead.ReadAhead._start

    def start(self: read_ahead.ReadAhead) -> Any:
        started.append(1)
        return original(self)

    monkeypatch.setattr(read_ahead.ReadAhead, "_start", start)
    ahead = asyncio.run(execute(_spec(data, tmp_path / "ahead", loopback)))
    assert started == [1]
    monkeypatch.setenv("UXBENCH_READ_AHEAD", "0")
    here = asyncio.run(execute(_spec(data, tmp_path / "here", loopback)))
    assert started == [1]
    assert _records(ahead.run_dir) == _records(here.run_dir) and len(_records(here.run_dir)) == 80
    assert ahead.summary["metrics"] == here.summary["metrics"]
    assert ahead.summary["read"] == here.summary["read"] and ahead.summary["read"]["exact_duplicates"] == 1
    monkeypatch.delenv("UXBENCH_READ_AHEAD")
    again = asyncio.run(execute(_spec(data, tmp_path / "ahead", loopback)))  # a rerun: nothing left to do
    assert again.summary["invocation"]["resumed_samples"] == 80 and again.summary["metrics"] == here.summary["metrics"]
