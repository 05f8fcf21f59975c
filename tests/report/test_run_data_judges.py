"""Bias and leaderboard inputs hold the judges' verdicts only, never a strategy classifier's labels (which live in
the same `scores` table under `strategy-*` keys)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from uxbench.orchestrate.runner import execute
from uxbench.orchestrate.spec import JudgeSpec, RunSpec, StrategySpec
from uxbench.report.run_data import load_run_data
from uxbench.runs.store import RunStore


def test_strategy_labels_are_not_judge_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    spec = RunSpec(task="recovery", model="scripted:echo", out=tmp_path / "run",
                   judge=JudgeSpec(model="scripted:always-good"),
                   strategy_model=StrategySpec(model="scripted:always-bad"))
    asyncio.run(execute(spec))
    with RunStore(tmp_path / "run") as store:
        keys = store.judges()
    assert any(k.startswith("strategy-") for k in keys)  # both kinds are in the table
    run = load_run_data(tmp_path / "run")
    assert run.verdicts and not any(k.startswith("strategy-") for k in run.verdicts)
