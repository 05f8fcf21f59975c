"""`uxbench plan`: the cases a difference needs, from a stated discordance or rate and from pilot runs (their
measured discordance), equal to the textbook formula; the detectable difference at the pilots' size; refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_support import assert_clean_error, invoke

sys.path.insert(0, str(Path(__file__).parent.parent / "report"))
from runs_support import write_eval_run, write_judge_run

from uxbench.metrics.power import (
    avg_acc_design,
    independent_discordance,
    minimum_detectable_difference,
    paired_sample_size,
)


def _plan(*args: object) -> dict[str, object]:
    result = invoke("plan", *map(str, args), "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_stated_discordance_and_rate() -> None:
    assert _plan("--difference", 0.02, "--discordance", 0.3)["n_needed"] == 5885
    assert _plan("--difference", 0.02, "--rate", 0.5)["n_needed"] == paired_sample_size(
        0.02, independent_discordance(0.5, 0.02))
    table = invoke("plan", "--difference", "0.02", "--discordance", "0.3")
    assert "5,885" in table.stdout and "Connor 1987" in table.stdout


def test_pilots_give_the_measured_discordance(tmp_path: Path) -> None:
    # 200 shared cases: A good on 0..119, B on 20..129 -> A only 20, B only 10: discordance 0.15
    a = write_eval_run(tmp_path / "a", "openai:gpt-4o", ["r"] * 200,
                       {"openai:j": ["good" if i < 120 else "bad" for i in range(200)]})
    b = write_eval_run(tmp_path / "b", "openai:gpt-4.1", ["r"] * 200,
                       {"openai:j": ["good" if 20 <= i < 130 else "bad" for i in range(200)]})
    plan = _plan("--difference", 0.03, "--pilot", a, "--pilot", b)
    row = plan["rows"][0]  # type: ignore[index]
    assert row["discordance"] == pytest.approx(0.15) and plan["n_needed"] == paired_sample_size(0.03, 0.15)
    assert row["mdd_at_pilot"] == pytest.approx(minimum_detectable_difference(200, 0.15))
    one = _plan("--difference", 0.03, "--pilot", a)
    assert one["rows"][0]["discordance"] == pytest.approx(independent_discordance(0.6, 0.03))  # type: ignore[index]


def test_task1_pilots_use_the_avg_acc_design(tmp_path: Path) -> None:
    golds = ["good"] * 50 + ["bad"] * 50
    a = write_judge_run(tmp_path / "t1a", "openai:gpt-4o", [(g, i % 5 != 0) for i, g in enumerate(golds)])
    b = write_judge_run(tmp_path / "t1b", "openai:gpt-4.1", [(g, i % 4 != 0) for i, g in enumerate(golds)])
    plan = _plan("--task", "judge", "--difference", 0.05, "--pilot", a, "--pilot", b)
    disagree = {"good": 0, "bad": 0}
    for i, g in enumerate(golds):
        disagree[g] += (i % 5 != 0) != (i % 4 != 0)
    n_eff, psi = avg_acc_design(disagree["good"] / 50, 50, disagree["bad"] / 50, 50)
    assert plan["rows"][0]["discordance"] == pytest.approx(psi)  # type: ignore[index]
    assert plan["n_needed"] == paired_sample_size(0.05, psi) and n_eff == pytest.approx(100)


def test_refusals(tmp_path: Path) -> None:
    assert_clean_error(invoke("plan", "--difference", "0.02"), "Say where the discordance comes from")
    assert_clean_error(invoke("plan", "--difference", "0.02", "--rate", "0.5", "--discordance", "0.3"), "one of them")
    assert_clean_error(invoke("plan", "--difference", "2", "--rate", "0.5"), "--difference must be a share")
    assert_clean_error(invoke("plan", "--task", "evall", "--difference", "0.02", "--rate", "0.5"),
                       "Did you mean 'eval'?")
    assert_clean_error(invoke("plan", "--difference", "0.2", "--discordance", "0.1"), "disagree on more than")
    run = write_judge_run(tmp_path / "t1", "openai:gpt-4o", [("good", True), ("bad", True)])
    assert_clean_error(invoke("plan", "--difference", "0.02", "--pilot", str(run)), "of another task")
