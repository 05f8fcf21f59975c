"""`report.leaderboard`: ranks with honest ties from paired bootstraps, model metadata, scaling trends, the
judge choice for Tasks 2/3, Task 1 Avg-Acc, and output that fits 80 columns without cutting a figure."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from runs_support import judge_key, write_eval_run, write_judge_run

from uxbench.errors import ConfigError, UxbenchError
from uxbench.report.leaderboard import leaderboard
from uxbench.report.leaderboard_render import render_leaderboard

G, B = "good", "bad"
JUDGE, OTHER = "openai:judge-x", "openai:judge-y"
N = 40


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("board")
    base = [G] * 32 + [B] * 8  # 80 %
    claude = [G] * 30 + [B] * 10  # 75 %: the same as gpt-4o except two cases
    gemini = [G] * 8 + [B] * 32  # 20 %
    write_eval_run(root / "gpt", "openai:gpt-4o", ["r"] * N, {JUDGE: base, OTHER: [G] * N})
    write_eval_run(root / "claude", "anthropic:claude-3-7-sonnet", ["r"] * N, {JUDGE: claude})
    write_eval_run(root / "gemini", "google:gemini-2.5-pro", ["r"] * N, {JUDGE: gemini})
    write_eval_run(root / "unknown", "scripted:unknown", ["r"] * N, {JUDGE: [B] * N})
    judged = [("good", True)] * 18 + [("good", False)] * 2 + [("bad", True)] * 10 + [("bad", False)] * 10
    write_judge_run(root / "t1-gpt", "openai:gpt-4o", judged)
    write_judge_run(root / "t1-mini", "openai:gpt-4o-mini", [(g, True) for g, _ in judged])
    return root


def test_ranks_share_a_place_when_the_paired_ci_contains_zero(root: Path) -> None:
    board = leaderboard([root], n_boot=500)["tasks"]["eval"]
    rows = board["rows"]
    assert [r["model"] for r in rows] == ["openai:gpt-4o", "anthropic:claude-3-7-sonnet", "google:gemini-2.5-pro",
                                          "scripted:unknown"]
    assert [r["rank"] for r in rows] == [1, 1, 3, 4]
    assert [r["metric"]["value"] for r in rows] == pytest.approx([0.8, 0.75, 0.2, 0.0])
    second = rows[1]["vs_previous"]
    assert second["n"] == N and second["diff"] == pytest.approx(0.05) and second["ci_low"] <= 0 <= second["ci_high"]
    assert rows[2]["vs_previous"]["ci_low"] > 0 and rows[3]["vs_previous"]["ci_low"] > 0
    assert rows[0]["judge_spec"] == JUDGE and not board["warnings"]
    assert (rows[0]["org"], rows[0]["family"], rows[0]["released"]) == ("OpenAI", "GPT", "2024-05-13")
    assert rows[3]["org"] is None


def test_scaling_trend_over_three_models_is_not_estimable(root: Path) -> None:
    trends = leaderboard([root], n_boot=200)["tasks"]["eval"]["trends"]
    release = trends["release"]
    # gpt-4o (2024-05) < claude-3-7 (2025-02) < gemini-2.5-pro (2025-03): three models give no trend
    assert release["rho"] is None and release["p_value"] is None and release["ci_low"] is None
    assert release["reason"] == "3 models; a trend needs 5"
    assert release["n"] == 3 and release["left_out"] == ["scripted:unknown"]
    assert trends["size"]["by"] == "size" and trends["size"]["rho"] is None


def test_scaling_trend_over_six_models_is_one_test(tmp_path: Path) -> None:
    """Release order and Good% run opposite ways over six models: rho -1, an interval below 0 and a significant
    p from the same test; the terminal and the view word it the same."""
    models = ["gpt-4o", "gpt-4o-mini", "gemini-2.0-flash", "o3-mini", "gemini-2.5-pro", "gpt-4.1"]
    for i, model in enumerate(models):  # released in this order; Good% 90, 80, ... 40
        goods = 9 - i
        write_eval_run(tmp_path / model, f"openai:{model}", ["r"] * 10, {JUDGE: [G] * goods + [B] * (10 - goods)})
    report = leaderboard([tmp_path], n_boot=100)
    release = report["tasks"]["eval"]["trends"]["release"]
    assert release["n"] == 6 and release["rho"] == pytest.approx(-1.0) and release["estimable"]
    assert release["ci_low"] == -1.0 and release["ci_high"] < 0 and release["p_value"] < 0.05 and release["significant"]
    table = render_leaderboard(report, "table", width=200)
    line = next(x for x in table.splitlines() if "Scaling by release date" in x)
    assert "Spearman rho -1.00 [-1.00, " in line and "(Fisher z), significant at alpha 0.05, n = 6 models" in line


def test_task1_avg_acc_and_its_paired_ranking(root: Path) -> None:
    board = leaderboard([root / "t1-gpt", root / "t1-mini"], n_boot=500)["tasks"]["judge"]
    rows = board["rows"]
    assert [r["model"] for r in rows] == ["openai:gpt-4o-mini", "openai:gpt-4o"]
    assert rows[0]["metric"]["value"] == pytest.approx(1.0)
    assert rows[1]["metric"]["value"] == pytest.approx((18 / 20 + 10 / 20) / 2)
    assert rows[1]["vs_previous"]["diff"] == pytest.approx(0.3) and [r["rank"] for r in rows] == [1, 2]


def test_the_judge_option_and_warnings(root: Path) -> None:
    by_other = leaderboard([root / "gpt", root / "claude"], judge=OTHER, n_boot=100)["tasks"]["eval"]
    assert [r["model"] for r in by_other["rows"]] == ["openai:gpt-4o"]
    assert by_other["rows"][0]["metric"]["value"] == 1.0
    assert any("not scored by openai:judge-y" in w for w in by_other["warnings"])
    by_key = leaderboard([root / "gpt"], judge=judge_key(OTHER), n_boot=50)["tasks"]["eval"]
    assert by_key["rows"][0]["judge"] == judge_key(OTHER)


def test_different_primary_judges_are_flagged(tmp_path: Path) -> None:
    write_eval_run(tmp_path / "a", "openai:gpt-4o", ["r"] * 4, {JUDGE: [G] * 4})
    write_eval_run(tmp_path / "b", "openai:gpt-4.1", ["r"] * 4, {OTHER: [B] * 4})
    board = leaderboard([tmp_path / "a", tmp_path / "b"], n_boot=50)["tasks"]["eval"]
    assert any("different judges" in w for w in board["warnings"])
    write_eval_run(tmp_path / "c", "openai:gpt-4o", ["r"] * 4, {JUDGE: [G] * 4}, case_ids=["x1", "x2", "x3", "x4"],
                   fingerprint="other")
    report = leaderboard([tmp_path / "a", tmp_path / "c"], n_boot=50)
    # two data sets: two tables, each saying which data it is, never one ranking
    assert sorted(report["tasks"]) == ["eval-fp-eval", "eval-other"]
    for board_id, board in report["tasks"].items():
        assert [r["rank"] for r in board["rows"]] == [1] and board["data"]["fingerprint"] in board_id
    assert any("2 different data sets" in n for n in report["notes"])
    text = render_leaderboard(report, "table", width=120)
    assert "on test cases (fp-eval)" in text and "on test cases (other)" in text


def test_refusals(tmp_path: Path, root: Path) -> None:
    with pytest.raises(UxbenchError, match="matches no directory"):
        leaderboard([str(tmp_path / "nothing-*")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UxbenchError, match="holds none"):
        leaderboard([tmp_path / "empty"])
    with pytest.raises(UxbenchError):
        leaderboard([root / "gpt" / "summary.json"])
    assert leaderboard([str(root / "g*")], n_boot=20)["tasks"]["eval"]["rows"][0]["model"] == "openai:gpt-4o"


def test_spec_shared_by_two_judges_needs_the_key(tmp_path: Path) -> None:
    path = write_eval_run(tmp_path / "r", "openai:gpt-4o", ["r"] * 2, {JUDGE: [G, B]})
    manifest = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    manifest["judges"]["other-key"] = {**manifest["judges"][judge_key(JUDGE)]}
    (path / "summary.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ConfigError, match="Pass one of these labels or keys"):
        leaderboard([path], judge=JUDGE)


def test_rendering_fits_80_columns_and_every_format_reads(root: Path) -> None:
    report = leaderboard([root], n_boot=200)
    table = render_leaderboard(report, "table", width=80)
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "80.0 [" in table and "…" not in table
    assert "Scaling by release date: not estimable (3 models; a trend needs 5); no release date for: " \
           "scripted:unknown." in " ".join(table.split())
    wide = render_leaderboard(report, "table", width=160)
    assert "Family" in wide and "2024-05-13" in wide and "Δ vs above (pp)" in wide
    md = render_leaderboard(report, "md")
    assert "| Rank | Model |" in md and "Task 3" not in md
    rows = list(csv.DictReader(io.StringIO(render_leaderboard(report, "csv"))))
    eval_rows = [r for r in rows if r["task"] == "eval"]
    assert [r["rank"] for r in eval_rows] == ["1", "1", "3", "4"] and eval_rows[1]["tied_with_previous"] == "True"
    assert json.loads(render_leaderboard(report, "json"))["tasks"]["judge"]["rows"][0]["rank"] == 1
