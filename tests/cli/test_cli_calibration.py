"""Judge-corrected Good% as a user gets it: a Task 1 run of the judge on labelled replies (`--calibration`) on
`uxbench run`, `uxbench score` (with and without a judge call), `report` and `leaderboard`; the figures equal
`metrics.judge_correction` on the counts; the out-of-range flag; clear refusals for a calibration that measured
another judge or protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import assert_clean_error, invoke, judge_row, write_jsonl

from uxbench.metrics.judge_correction import corrected_rate

JUDGE = "scripted:always-bad"  # the scripted provider answers the [[SAY:x]] marker of the judged reply
N_GOOD = N_BAD = 20
SE_HITS, SP_HITS = 16, 14  # sensitivity 0.8, specificity 0.7


def _task1_rows() -> list[dict[str, object]]:
    rows = []
    for i in range(N_GOOD):
        rows.append(judge_row(f"g{i:02d}", "good", "good" if i < SE_HITS else "bad"))
    for i in range(N_BAD):
        rows.append(judge_row(f"b{i:02d}", "bad", "bad" if i < SP_HITS else "good"))
    return rows


def _eval_rows(n: int, n_good: int) -> list[dict[str, object]]:
    # scripted:echo repeats the query, so the judge reads the marker in the reply
    return [{"cid": f"e{i:02d}", "lang": "en", "history": [], "scenario": "s",
             "query": f"question {i} [[SAY:{'good' if i < n_good else 'bad'}]]"} for i in range(n)]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("calib")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_CACHE_DIR", str(root / "cache"))
        result = invoke("run", "--model", JUDGE, "--data", write_jsonl(root / "t1.jsonl", _task1_rows()),
                        "--out", root / "t1", "--quiet")
        assert result.exit_code == 0, result.output
        result = invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", JUDGE, "--judge-mode",
                        "pointwise", "--data", write_jsonl(root / "eval.jsonl", _eval_rows(50, 30)),
                        "--calibration", root / "t1", "--out", root / "e60", "--quiet")
        assert result.exit_code == 0, result.output
        (root / "run_output.txt").write_text(result.stdout, encoding="utf-8")
        result = invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", JUDGE, "--judge-mode",
                        "pointwise", "--data", root / "eval.jsonl", "--system-prompt", "ux", "--out", root / "e60ux",
                        "--quiet")
        assert result.exit_code == 0, result.output
    return root


def _judge(run_dir: Path) -> dict[str, object]:
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return next(iter(summary["judges"].values()))


def test_run_with_calibration_gives_the_corrected_rate(root: Path) -> None:
    judge = _judge(root / "e60")
    expected = corrected_rate(30, 50, good_hits=SE_HITS, good_n=N_GOOD, bad_hits=SP_HITS, bad_n=N_BAD)
    corrected = judge["corrected"]["scored_only"]  # type: ignore[index]
    assert corrected["value"] == pytest.approx(0.6) == pytest.approx(expected["value"])
    assert (corrected["ci_low"], corrected["ci_high"]) == pytest.approx((expected["ci_low"], expected["ci_high"]))
    assert corrected["sensitivity"]["value"] == pytest.approx(0.8) and not corrected["flags"]
    record = judge["corrected"]["calibration"]  # type: ignore[index]
    assert record["counts"] == {"good_hits": 16, "good_n": 20, "bad_hits": 14, "bad_n": 20}
    manifest = json.loads((root / "e60" / "manifest.json").read_text(encoding="utf-8"))
    assert next(iter(manifest["calibrations"].values()))["counts"] == record["counts"]
    text = (root / "run_output.txt").read_text(encoding="utf-8")
    assert "Corrected" in text and "60.0 [" in text and "J = 0.500" in text


def test_recovery_rate_is_corrected_too(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Task 3: the Recovery Rate gets the same correction. The demo cases carry no marker, so the judge calls
    every recovery bad: a raw 0% lies below what this judge can produce (1 - sp = 30%), clipped and flagged."""
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    result = invoke("run", "--task", "recovery", "--model", "scripted:echo", "--judge", JUDGE, "--judge-mode",
                    "pointwise", "--calibration", root / "t1", "--out", tmp_path / "rec", "--quiet")
    assert result.exit_code == 0, result.output
    corrected = _judge(tmp_path / "rec")["corrected"]["scored_only"]  # type: ignore[index]
    assert corrected["raw"]["value"] == 0.0 and corrected["value"] == 0.0
    assert [f["code"] for f in corrected["flags"]] == ["outside_range"]
    assert "Corrected" in result.stdout and "outside what this judge can produce" in result.stdout


def test_score_attaches_a_calibration_without_calling_the_judge(root: Path) -> None:
    assert "corrected" not in _judge(root / "e60ux")
    result = invoke("score", root / "e60ux", "--calibration", root / "t1")
    assert result.exit_code == 0, result.output
    assert _judge(root / "e60ux")["corrected"]["scored_only"]["value"] == pytest.approx(0.6)  # type: ignore[index]


def test_report_and_leaderboard_after_the_fact(root: Path, tmp_path: Path) -> None:
    one = invoke("report", root / "e60", "--format", "json")
    assert one.exit_code == 0, one.output
    assert next(iter(json.loads(one.stdout)["judges"].values()))["corrected"]["scored_only"]["value"] == \
        pytest.approx(0.6)
    # a fresh copy of the run without its own calibration, corrected by --calibration in the report only
    result = invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", JUDGE, "--judge-mode", "pointwise",
                    "--data", write_jsonl(tmp_path / "eval.jsonl", _eval_rows(50, 45)), "--out", tmp_path / "e90",
                    "--quiet")
    assert result.exit_code == 0, result.output
    report = invoke("report", tmp_path / "e90", "--calibration", root / "t1")
    assert report.exit_code == 0, report.output
    assert "outside what this judge can produce" in report.stdout and "100.0 [" in report.stdout
    assert "corrected" not in _judge(tmp_path / "e90")  # nothing written
    board = invoke("leaderboard", root / "e60", root / "e60ux", "--calibration", root / "t1", "--format", "json")
    assert board.exit_code == 0, board.output
    rows = json.loads(board.stdout)["tasks"]["eval"]["rows"]
    assert [r["corrected"]["value"] for r in rows] == pytest.approx([0.6, 0.6])
    assert {r["label"] for r in rows} == {"scripted:echo (system_prompt=none)", "scripted:echo (system_prompt=ux)"}
    table = invoke("leaderboard", root / "e60", root / "e60ux", "--calibration", root / "t1", "--width", "120")
    assert "Corrected %" in table.stdout and "system_prompt=ux" in table.stdout


def test_calibration_of_another_judge_or_protocol_is_refused(root: Path, tmp_path: Path) -> None:
    other = invoke("run", "--model", "scripted:always-good", "--data", root / "t1.jsonl", "--out", tmp_path / "t1o",
                   "--quiet")
    assert other.exit_code == 0, other.output
    assert_clean_error(invoke("score", root / "e60", "--judge", JUDGE, "--judge-mode", "pointwise",
                              "--calibration", tmp_path / "t1o", "--quiet"),
                       "measured scripted:always-good, but the judge is scripted:always-bad")
    probs = invoke("run", "--model", JUDGE, "--data", root / "t1.jsonl", "--verdict-from", "logprobs",
                   "--out", tmp_path / "t1p", "--quiet")
    assert probs.exit_code == 0, probs.output
    assert_clean_error(invoke("report", root / "e60", "--calibration", tmp_path / "t1p"),
                       "rerun it with --verdict-from text")
    assert_clean_error(invoke("score", root / "e60", "--calibration", root / "e60"), "is a 'eval' run")
    assert_clean_error(invoke("run", "--model", JUDGE, "--data", root / "t1.jsonl", "--calibration", root / "t1",
                              "--quiet"), "--calibration corrects a judge's Good%")
    assert_clean_error(invoke("score", root / "e60ux", "--calibration", tmp_path / "t1o"),
                       "measured scripted:always-good, which scored nothing")
