"""`uxbench report` through typer's runner: a finished run, recomputed summaries, and every kind of wrong
directory or damaged summary refused with the file and field, without a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import assert_clean_error, invoke, judge_rows, log_rows, write_jsonl


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("report")
    data = write_jsonl(root / "judge.jsonl", judge_rows(40))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_CACHE_DIR", str(root / "cache"))
        result = invoke("run", "--model", "scripted:always-good", "--quiet", "--data", data, "--out", root / "run")
    assert result.exit_code == 0, result.output
    yield root / "run"


def _copy(run: Path, where: Path) -> Path:
    where.mkdir()
    for item in run.iterdir():
        if item.is_file():
            (where / item.name).write_bytes(item.read_bytes())
    return where


def _avg_acc(output: str) -> dict[str, Any]:
    cell: dict[str, Any] = json.loads(output)["all"]["avg_acc"]
    return cell


def test_report_of_a_finished_run_in_every_format(finished: Path) -> None:
    for fmt in ("table", "md", "json", "csv"):
        result = invoke("report", finished, "--format", fmt)
        assert result.exit_code == 0, result.output
    assert "Avg-Acc" in invoke("report", finished).output
    compared = invoke("report", finished, finished)
    assert compared.exit_code == 0 and "Paired tests" in compared.output
    assert_clean_error(invoke("report", finished, "--format", "xml"), "is not a format: choose table, md, csv or json")


def test_other_bootstrap_settings_recompute_the_summary_and_rerun_nothing(finished: Path, tmp_path: Path) -> None:
    run = _copy(finished, tmp_path / "run")
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    stored = _avg_acc(invoke("report", run, "--format", "json").output)
    same = invoke("report", run, "--format", "json", "--n-boot", "2000", "--seed", "0")
    assert same.exit_code == 0 and "recomputed from the stored records" in same.stderr
    assert _avg_acc(same.stdout) == stored  # the stored settings give the stored figures back
    other = _avg_acc(invoke("report", run, "--format", "json", "--n-boot", "30", "--seed", "7").stdout)
    assert other["value"] == stored["value"] and (other["ci_low"], other["ci_high"]) != (
        stored["ci_low"], stored["ci_high"])
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # nothing written, nothing rerun
    assert invoke("report", run, run, "--n-boot", "50", "--format", "csv").exit_code == 0
    assert invoke("report", run, "--n-boot", "0").exit_code == 2


@pytest.mark.parametrize(("path", "value", "field"), [
    (("metrics", "all", "avg_acc", "value"), "0.5", "metrics.all.avg_acc.value"),
    (("metrics", "breakdowns", "scenario"), 5, "metrics.breakdowns.scenario"),
    (("metrics", "n"), [1], "metrics.n"),
    (("model",), {"spec": 1}, "model"),
    (("metrics", "valid_only"), None, "metrics.valid_only"),
])
def test_a_summary_with_wrong_value_types(finished: Path, tmp_path: Path, path: tuple[str, ...], value: Any,
                                          field: str) -> None:
    run = _copy(finished, tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    node = summary
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (run / "summary.json").write_text(json.dumps(summary))
    result = invoke("report", run)
    assert_clean_error(result, f"{run / 'summary.json'}: field '{field}'", "--n-boot")
    assert_clean_error(invoke("report", finished, run), f"field '{field}'")
    repaired = invoke("report", run, "--n-boot", "2000")  # recomputed from the records: the figures come back
    assert repaired.exit_code == 0, repaired.output


def test_report_on_what_is_not_a_finished_run(tmp_path: Path, finished: Path) -> None:
    assert_clean_error(invoke("report", tmp_path / "nope"), "no such directory")
    (tmp_path / "file").write_text("x")
    assert_clean_error(invoke("report", tmp_path / "file"), "is a file")
    (tmp_path / "empty").mkdir()
    assert_clean_error(invoke("report", tmp_path / "empty"), "not a uxbench run directory")
    unfinished = _copy(finished, tmp_path / "unfinished")
    (unfinished / "summary.json").unlink()
    assert_clean_error(invoke("report", unfinished), "has not finished")
    broken = _copy(finished, tmp_path / "broken")
    (broken / "summary.json").write_text("{not json")
    assert_clean_error(invoke("report", broken), "is not valid JSON")


def test_report_on_a_mining_output_points_to_mine_report(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", log_rows())
    mined = tmp_path / "mined"
    result = invoke("mine", "run", log, "--out", mined, "--no-llm", "--workers", "1", "--quiet")
    assert result.exit_code == 0, result.output
    report = invoke("report", mined)
    assert_clean_error(report, "is the output of `uxbench mine run`", f"uxbench mine report {mined}")
    assert "uxbench run` command" not in report.output
