"""`uxbench pairwise`, `uxbench bias` and `uxbench leaderboard` as a user runs them: Task 2 runs made with the
scripted provider, scored by two judges, compared pairwise (resumable), analysed and ranked; bad input refused
with one clear line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import assert_clean_error, invoke, judge_rows, write_jsonl

ROWS = [{"cid": f"e{i:02d}", "lang": "en", "history": [], "query": f"how do I do thing {i}?", "scenario": "s"}
        for i in range(8)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("reports")
    data = write_jsonl(root / "eval.jsonl", ROWS)
    rules = root / "short.json"
    rules.write_text(json.dumps({"rules": [], "default": "Sure."}), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_CACHE_DIR", str(root / "cache"))
        for name, model in (("echo", "scripted:echo"), ("short", f"scripted:file:{rules}")):
            result = invoke("run", "--task", "eval", "--model", model, "--judge", "scripted:always-good",
                            "--judge-mode", "pointwise", "--data", data, "--out", root / "runs" / f"eval-{name}",
                            "--quiet")
            assert result.exit_code == 0, result.output
        result = invoke("score", root / "runs" / "eval-echo", "--judge", "scripted:always-bad", "--judge-mode",
                        "pointwise", "--quiet")
        assert result.exit_code == 0, result.output
        task1 = write_jsonl(root / "judge.jsonl", judge_rows(12))
        result = invoke("run", "--model", "scripted:always-good", "--data", task1, "--out", root / "runs" / "t1",
                        "--quiet")
        assert result.exit_code == 0, result.output
    yield root


def test_pairwise_compares_both_orders_and_resumes(runs: Path, tmp_path: Path) -> None:
    # A judge that always names the reply shown first: every pair is position-inconsistent, so a tie.
    judge = tmp_path / "first.json"
    judge.write_text(json.dumps({"rules": [], "default": "A"}), encoding="utf-8")
    args = ("pairwise", runs / "runs" / "eval-echo", runs / "runs" / "eval-short", "--judge",
            f"scripted:file:{judge}", "--out", tmp_path / "cmp", "--quiet")
    result = invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["n_decided"] == 8 and figures["position_inconsistent"] == 8
    assert figures["win_rate_a"]["value"] == 0.5 and figures["position_inconsistency"]["value"] == 1.0
    assert figures["first_position_picked"]["value"] == 1.0
    again = invoke(*args, "--format", "json")
    assert json.loads(again.stdout)["invocation"]["already_done"] == 16 and "resuming" in again.stderr
    table = invoke(*args)
    assert "A over B, win rate % (ties half)" in table.stdout and "50.0 [" in table.stdout
    assert "Comparison directory:" in table.stderr


def test_bias_reads_scored_runs_task1_and_pairwise_dirs(runs: Path, tmp_path: Path) -> None:
    judge = tmp_path / "first.json"
    judge.write_text(json.dumps({"rules": [], "default": "B"}), encoding="utf-8")
    out = tmp_path / "cmp"
    assert invoke("pairwise", runs / "runs" / "eval-echo", runs / "runs" / "eval-short", "--judge",
                  f"scripted:file:{judge}", "--out", out, "--quiet").exit_code == 0
    result = invoke("bias", runs / "runs", out, "--format", "json", "--n-boot", "50")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    section = report["tasks"]["eval"]
    assert {j["spec"] for j in section["self_preference"]["judges"]} == {"scripted:always-good",
                                                                         "scripted:always-bad"}
    (agreement,) = section["agreement"]
    assert agreement["n"] == 8 and agreement["agreement"]["value"] == 0.0
    assert report["pairwise"][0]["win_rate_a"]["value"] == 0.5
    assert any("without probability verdicts" in n for n in report["notes"])  # the Task 1 run
    table = invoke("bias", runs / "runs", "--n-boot", "50", "--width", "80")
    assert table.exit_code == 0 and max(len(line) for line in table.stdout.splitlines()) <= 80
    assert "Good % by judge" in table.stdout and "Cohen's kappa" in table.stdout


def test_leaderboard_over_a_glob_and_a_parent_in_every_format(runs: Path) -> None:
    result = invoke("leaderboard", str(runs / "runs" / "eval-*"), "--format", "json", "--n-boot", "100")
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)["tasks"]["eval"]
    assert [r["rank"] for r in board["rows"]] == [1, 1] and board["rows"][0]["metric"]["value"] == 1.0
    for fmt in ("table", "md", "csv"):
        out = invoke("leaderboard", runs / "runs", "--format", fmt, "--n-boot", "100", "--width", "80")
        assert out.exit_code == 0, out.output
        assert "Task 1, UX Judge" in out.stdout or fmt == "csv"
    table = invoke("leaderboard", runs / "runs", "--n-boot", "100", "--width", "80").stdout
    assert max(len(line) for line in table.splitlines()) <= 80 and "…" not in table
    by_judge = invoke("leaderboard", runs / "runs" / "eval-echo", "--judge", "scripted:always-bad", "--format",
                      "json", "--n-boot", "50")
    assert json.loads(by_judge.stdout)["tasks"]["eval"]["rows"][0]["metric"]["value"] == 0.0


def test_bad_input_is_one_clear_line(runs: Path, tmp_path: Path) -> None:
    assert_clean_error(invoke("leaderboard", tmp_path / "nowhere"), "no such directory")
    assert_clean_error(invoke("leaderboard", runs / "runs", "--format", "xml"), "--format 'xml' is not a format")
    assert_clean_error(invoke("bias", runs / "runs", "--formt", "md"), "No such option: --formt", "--format")
    assert_clean_error(invoke("bias", runs / "runs" / "t1"), "Nothing to analyse")
    assert_clean_error(invoke("pairwise", runs / "runs" / "t1", runs / "runs" / "eval-echo", "--judge",
                              "scripted:always-good"), "Task 1")
    assert_clean_error(invoke("pairwise", runs / "runs" / "eval-echo", runs / "runs" / "eval-short", "--judge",
                              "scripted:always-good", "--judge-strategy", "few", "--out", tmp_path / "x"),
                       "--judge-strategy")
    assert_clean_error(invoke("pairwise", runs / "runs" / "eval-echo", runs / "runs" / "eval-short", "--judge",
                              "nope"), "PROVIDER:MODEL")


def test_help_lists_the_new_commands() -> None:
    listing = invoke("--help").output
    for name in ("pairwise", "bias", "leaderboard"):
        assert name in listing
        assert invoke(name, "--help").exit_code == 0
