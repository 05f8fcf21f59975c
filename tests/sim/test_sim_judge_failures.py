"""A satisfaction judge that never gives a usable answer is never a dash: `uxbench sim run --judge` with a judge
whose answers hold no rating 1-5, and with one whose calls all fail; the summary counts the unusable answers and
keeps the first of each kind, the terminal report says why on the judge's row and in a note, and the judge's calls
are in the cost table."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from uxbench.cli.main import app


def _sim(out: Path, *judge: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["sim", "run", "--quiet", "--model", "scripted:echo", "--simulator",
                                      "scripted:user", "--personas", "demo", "--trials", "1", "--max-turns", "2",
                                      "--n-boot", "50", "--max-attempts", "1", "--out", str(out), *judge])
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return summary


def test_a_judge_whose_answers_hold_no_rating_says_so(tmp_path: Path) -> None:
    summary = _sim(tmp_path / "words", "--judge", "scripted:always-good")  # answers "good": no rating 1-5
    judge = summary["judge"]
    assert isinstance(judge, dict)
    replies = judge["replies"]
    assert replies > 24 and judge["rated"] == 0 and judge["unparsed"] == replies and judge["errors"] == 0
    assert judge["unparsed_example"] == "good" and judge["sessions"] == 24
    usage = summary["usage"]
    assert isinstance(usage, dict) and usage["judge"]["calls"] + usage["judge"]["cached_calls"] == replies
    report = CliRunner().invoke(app, ["report", str(tmp_path / "words"), "--format", "md"])
    assert report.exit_code == 0, report.output
    row = next(line for line in report.stdout.splitlines() if line.startswith("| Judge satisfaction, final"))
    assert "no usable rating" in row and "| 0 |" in row
    assert (f"Satisfaction judge scripted:always-good: 0 of the {replies} replies it was asked to rate got a "
            f"rating 1-5: {replies} answers held no rating 1-5 (the first: 'good').") in report.stdout
    assert any(line.startswith("| judge |") for line in report.stdout.splitlines())


def test_a_judge_whose_calls_fail_says_so_and_a_rerun_asks_again(tmp_path: Path) -> None:
    out = tmp_path / "down"
    summary = _sim(out, "--judge", "scripted:always-good", "-J", "fail_first_n=1000000")
    judge = summary["judge"]
    assert isinstance(judge, dict)
    assert judge["rated"] == 0 and judge["errors"] == judge["replies"] > 0 and judge["sessions_failed"] == 24
    assert "injected failure" in str(judge["error_example"])
    report = CliRunner().invoke(app, ["report", str(out), "--format", "md"])
    assert "calls failed (the first: TransientModelError" in report.stdout
    assert "24 sessions' ratings are left out until a rerun of the same command asks again" in report.stdout
