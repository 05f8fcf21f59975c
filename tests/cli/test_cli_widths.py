"""What `uxbench run` prints for the whole protocol (Task 1 summary, Task 2/3 judge tables, recovery strategies, the
protocol table) fits 80 columns without cutting a figure, as `uxbench score` does."""

from __future__ import annotations

import re
from pathlib import Path

from cli_support import invoke

FIGURE = re.compile(r"\d+\.\d \[\d+\.\d, \d+\.\d\]")


def _fits(text: str) -> None:
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, "\n".join(line for line in lines if len(line) > 80)
    assert "…" not in text


def test_the_whole_protocol_prints_within_80_columns(tmp_path: Path) -> None:
    result = invoke("run", "--task", "judge,eval,recovery", "--model", "scripted:always-good", "--judge",
                    "scripted:always-good", "--strategy-model", "scripted:always-good", "--quiet",
                    "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    _fits(result.stdout)
    assert "UXBench protocol" in result.stdout and "Recovery strategies" in result.stdout
    assert len(FIGURE.findall(result.stdout)) >= 10  # every task's figures with their CIs
    rescored = invoke("score", tmp_path / "run" / "eval", "--judge", "scripted:always-bad", "--quiet")
    assert rescored.exit_code == 0, rescored.output
    _fits(rescored.stdout)
    assert "scripted:always-bad" in rescored.stdout and "0.0 [" in rescored.stdout
