"""`uxbench judge train` and `uxbench judge eval` from the command line, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("judge")

import judge_data  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from uxbench.cli.main import app  # noqa: E402


def test_train_then_eval_from_the_command_line(tmp_path: Path) -> None:
    data = judge_data.write(tmp_path / "d.jsonl", judge_data.rows(60, seed=7))
    out = tmp_path / "judge"
    runner = CliRunner()
    trained = runner.invoke(app, ["judge", "train", "--data", str(data), "--out", str(out), "--encoder", "hashing",
                                  "--data-license", "internal", "--n-boot", "100"])
    assert trained.exit_code == 0, trained.output
    assert f"lite:{out}" in trained.output and "Avg-Acc" in trained.output
    card = json.loads((out / "model_card.json").read_text())
    evaluated = runner.invoke(app, ["judge", "eval", "--judge", f"lite:{out}", "--data", str(out / "test.jsonl"),
                                    "--runs-root", str(tmp_path / "runs"), "--n-boot", "100", "--format", "json",
                                    "--quiet"])
    assert evaluated.exit_code == 0, evaluated.output
    figures = json.loads(evaluated.stdout)["judge"]
    assert figures["avg_acc"]["value"] == pytest.approx(card["test"]["avg_acc"]["value"])


def test_eval_of_a_trained_judge_writes_its_runs_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not into the user's runs/, where `leaderboard` and `view` would list them as runs of their own; it says where."""
    monkeypatch.chdir(tmp_path)
    data = judge_data.write(tmp_path / "d.jsonl", judge_data.rows(40, seed=3))
    runner = CliRunner()
    assert runner.invoke(app, ["judge", "train", "--data", str(data), "--out", "judge", "--encoder", "hashing",
                               "--n-boot", "50"]).exit_code == 0
    evaluated = runner.invoke(app, ["judge", "eval", "--judge", "lite:judge", "--data", "judge/test.jsonl",
                                    "--n-boot", "50"])
    assert evaluated.exit_code == 0, evaluated.output
    assert "its runs go to judge/eval-runs" in evaluated.stderr, evaluated.stderr
    assert any((tmp_path / "judge" / "eval-runs").iterdir()) and not (tmp_path / "runs").exists()


def test_train_errors_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    rows = [r for r in judge_data.rows(30) if r["ground_truth"] == -1]
    data = judge_data.write(tmp_path / "bad_only.jsonl", rows)
    runner = CliRunner()
    result = runner.invoke(app, ["judge", "train", "--data", str(data), "--out", str(tmp_path / "j"),
                                 "--encoder", "hashing"])
    assert result.exit_code == 2
    assert f"one class only: 0 good, {len(rows)} bad" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["judge", "train", "--data", str(data), "--out", str(tmp_path / "j"),
                                 "--method", "svm"])
    assert result.exit_code == 2 and "--method 'svm'" in result.output and "lite or lora" in result.output
    result = runner.invoke(app, ["judge", "train", "--data", str(data), "--out", str(tmp_path / "j"),
                                 "--split-date", "not a date"])
    assert result.exit_code == 2 and "--split-date" in result.output
    result = runner.invoke(app, ["judge", "train", "--data", str(data), "--out", str(tmp_path / "j"),
                                 "--method", "lora"])
    assert result.exit_code == 2 and "--base-model" in result.output


def test_train_with_a_split_date_and_an_excluded_test_set(tmp_path: Path) -> None:
    rows = judge_data.rows(60, seed=8)
    data = judge_data.write(tmp_path / "d.jsonl", rows)
    official = judge_data.write(tmp_path / "official.jsonl", rows[:5])  # five rows we must never train on
    out = tmp_path / "judge"
    result = CliRunner().invoke(app, ["judge", "train", "--data", str(data), "--out", str(out), "--encoder", "hashing",
                                      "--split-date", "2024-05-02T12:00:00Z", "--exclude", str(official),
                                      "--n-boot", "50"])
    assert result.exit_code == 0, result.output
    card = json.loads((out / "model_card.json").read_text())
    assert card["split"]["kind"] == "temporal" and card["split"]["split_date"].startswith("2024-05-02T12:00")
    assert card["data"]["near_duplicates_left_out"] >= 5
    kept = {json.loads(line)["cid"] for name in ("train.jsonl", "test.jsonl")
            for line in (out / name).read_text().splitlines()}
    assert not kept & {str(r["cid"]) for r in rows[:5]}


@pytest.mark.parametrize(("args", "message"), [
    (["--c", "-1"], "--c -1: must be a number above 0"),
    (["--c", "lots"], "--c 'lots': give auto or a number"),
    (["--c", "0"], "--c 0: must be a number above 0"),
    (["--test-fraction", "1.5"], "--test-fraction 1.5"),
    (["--n-boot", "0"], "--n-boot 0"),
    (["--min-label-precision", "1.2"], "--min-label-precision 1.2"),
    (["--prior", "0"], "--prior '0'"),
    (["--prior", "trian"], "--prior 'trian'"),
    (["--class-weight", "balance"], "did you mean balanced"),
    (["--format", "xml"], "--format 'xml'"),
    (["--max-steps", "5"], "--max-steps does not apply to --method lite"),
    (["--method", "lora", "--base-model", "embedded", "--encoder", "hashing"], "--encoder does not apply"),
    (["--method", "lora", "--base-model", "embedded", "--batch-size", "0"], "--batch-size 0"),
])
def test_bad_numbers_and_options_that_do_not_apply_are_one_line_errors(tmp_path: Path, args: list[str],
                                                                         message: str) -> None:
    data = judge_data.write(tmp_path / "d.jsonl", judge_data.rows(20))
    result = CliRunner().invoke(app, ["judge", "train", "--data", str(data), "--out", str(tmp_path / "j"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "j").exists()


def test_help_has_no_python_type_names() -> None:
    """The options' metavars are in words. (Typer 0.29, the shared venv's, labels a positional argument `<str>`
    whatever its metavar; the CLI-wide help conventions of issue 17 replace that label for every command, so only
    the option rows are checked here.)"""
    for command in ("train", "eval", "serve"):
        shown = CliRunner().invoke(app, ["judge", command, "--help"], env={"COLUMNS": "160"})
        assert shown.exit_code == 0
        options = "\n".join(line for line in shown.output.splitlines() if " --" in line)
        assert options
        for name in ("<int>", "<float>", "<str>", "<path>", "INTEGER", "FLOAT", "TEXT ", "x>=", "list["):
            assert name not in options, (command, name)
