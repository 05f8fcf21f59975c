"""Every terminal report fits 80 columns and keeps every figure whole: the run summary of each task, the comparison
of runs, the protocol table. A figure is never cut ("…" never appears) and every figure the summary holds is
still printed (wrapped or left out with a note naming the column, never cropped)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from runs_support import write_eval_run, write_judge_run

from uxbench.report.compare import compare_runs, load_run
from uxbench.report.generative import render_generative_summary
from uxbench.report.layout import wrap_widths
from uxbench.report.protocol import render_protocol
from uxbench.report.render import pct, render, render_summary

G, B = "good", "bad"
LONG_JUDGE = "openai:Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4"
FIGURE = re.compile(r"[+-]?\d+\.\d \[[+-]?\d+\.\d, [+-]?\d+\.\d\]")


def _check(text: str, width: int = 80) -> str:
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width, "\n".join(line for line in lines if len(line) > width)
    assert "…" not in text
    return " ".join(re.sub(r"[│┃┏┓┗┛┡┩└┘┳┻╇━─┬┴┼]", " ", text).split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("widths")
    outcomes = [(G, True), (B, False), (G, True), (B, True)] * 5
    scenarios = ["information_and_knowledge_queries", "emotional_support", "work_productivity", "creative"] * 5
    return {
        "t1": write_judge_run(root / "t1", "openai:gpt-4o-2024-08-06", outcomes, scenarios=scenarios),
        "t1b": write_judge_run(root / "t1b", "anthropic:claude-sonnet-4-5", outcomes[::-1], scenarios=scenarios),
        "eval": write_eval_run(root / "eval", "google:gemini-2.5-pro", ["reply"] * 12,
                               {LONG_JUDGE: [G] * 9 + [B] * 2 + [None], "openai:gpt-4o-mini": [G] * 6 + [B] * 6},
                               primary=LONG_JUDGE),
    }


def _summary(path: Path) -> dict[str, Any]:
    return json.loads((path / "summary.json").read_text(encoding="utf-8"))


def test_task1_summary_fits_and_shows_both_conventions(runs: dict[str, Path]) -> None:
    summary = load_run(runs["t1"]).summary
    text = _check(render_summary(summary, "table", width=80))
    for convention in ("all", "valid_only"):
        for metric in ("avg_acc", "good_acc", "bad_acc"):
            assert pct(summary["metrics"][convention][metric]) in text
    assert "All cases" in text and "Valid answers only" in text and "n (good/bad) 20 (10/10)" in text
    # breakdowns keep the same columns in every table and say what they left out
    assert "The breakdowns leave out" in text and "information_and_knowledge_queries" in text
    assert "| Figure | All cases | Valid answers only |\n|---|---:|---:|" in render_summary(summary, "md")


def test_comparison_of_runs_fits(runs: dict[str, Path]) -> None:
    report = compare_runs([runs["t1"], runs["t1b"]], n_boot=200)
    text = _check(render(report, "table", width=80))
    for row in report["runs"]:
        assert pct(row["all"]["avg_acc"]) in text
    assert "McNemar p" in text and "leaves out" in text
    wide = render(report, "table", width=250)
    assert "leaves out" not in wide and "Unparseable %" in wide


def test_task2_summary_fits_and_names_both_denominators(runs: dict[str, Path]) -> None:
    summary = _summary(runs["eval"])
    text = _check(render_generative_summary(summary, "table", width=80))
    for judge in summary["judges"].values():
        m = judge["metrics"]
        assert pct(m["good_rate_scored_only"]) in text and pct(m["good_rate_all_cases"]) in text
    assert "of all 12 cases" in text and "of the scored" in text
    assert "openai:Qwen/Qwen2.5" in text  # a name longer than its column folds onto the next line
    assert LONG_JUDGE in render_generative_summary(summary, "table", width=200)


def test_protocol_table_fits(runs: dict[str, Path]) -> None:
    text = _check(render_protocol([_summary(runs["t1"]), _summary(runs["eval"])], "table", width=80))
    assert len(FIGURE.findall(text)) == 2 and "11 scored" in text
    assert f"scored by its primary judge, {LONG_JUDGE}" in text


def test_text_columns_keep_their_longest_word() -> None:
    header = ["Task", "Metric", "Value"]
    rows = [["Task 2, UX Eval", "Good % of scored (judge openai:gpt-4o-mini)", "80.0 [49.0, 94.3]"]]
    widths = wrap_widths(header, rows, [True, True, False], 60)
    assert widths[0] is not None and widths[1] is not None and widths[2] is None
    assert widths[1] >= len("openai:gpt-4o-mini)") and widths[0] >= len("Task")
    assert 1 + sum(3 + w for w in (widths[0], widths[1], len(rows[0][2]))) <= 60
    assert wrap_widths(header, rows, [True, True, False], 200) == [None, None, None]  # fits: natural widths
