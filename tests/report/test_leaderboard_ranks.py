"""Honest ranks: 1 + the entries significantly better (every pair, Holm-adjusted); A > M > B with only A - B
significant ranks A and B apart while each ties with M; five runs obey the rule; the minimum detectable
difference equals the formula; runs of one model are told apart by what differs; `--judge` by label or spec, an
unknown one refused with a suggestion; two runs of one model under different judges whose scores all failed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from runs_support import judge_key, write_eval_run

from uxbench.errors import ConfigError
from uxbench.metrics.power import minimum_detectable_difference
from uxbench.metrics.ranking import holm
from uxbench.report.leaderboard import leaderboard
from uxbench.report.leaderboard_render import render_leaderboard

JUDGE = "openai:judge-x"
N = 400


def _labels(goods: list[bool]) -> list[str | None]:
    return ["good" if g else "bad" for g in goods]


def _run(root: Path, name: str, model: str, goods: list[bool], **kw: object) -> Path:
    return write_eval_run(root / name, model, ["reply"] * len(goods), {JUDGE: _labels(goods)}, **kw)  # type: ignore[arg-type]


def test_a_beats_b_but_both_tie_with_m(tmp_path: Path) -> None:
    # A 60%, M 55%, B 50% on the same 400 cases; B's good cases are A's (A - B: 40 discordant, all for A), M is
    # spread evenly (about half its disagreements each way with A and with B)
    a = [i < 240 for i in range(N)]
    b = [i < 200 for i in range(N)]
    m = [i % 20 < 11 for i in range(N)]
    for name, model, goods in (("a", "openai:gpt-4o", a), ("m", "openai:gpt-4.1", m), ("b", "openai:gpt-4o-mini", b)):
        _run(tmp_path, name, model, goods)
    board = leaderboard([tmp_path], n_boot=2000)["tasks"]["eval"]
    rows = {r["model"]: r for r in board["rows"]}
    ranks = {model: rows[model]["rank"] for model in rows}
    assert ranks == {"openai:gpt-4o": 1, "openai:gpt-4.1": 1, "openai:gpt-4o-mini": 2}
    assert rows["openai:gpt-4o"]["ties_with"] == ["openai:gpt-4.1"]
    assert rows["openai:gpt-4o-mini"]["ties_with"] == ["openai:gpt-4.1"]
    assert sorted(rows["openai:gpt-4.1"]["ties_with"]) == ["openai:gpt-4o", "openai:gpt-4o-mini"]
    assert rows["openai:gpt-4o"]["better_than"] == ["openai:gpt-4o-mini"]
    pairs = {(p["a"], p["b"]): p for p in board["pairs"]}
    ab = pairs[("openai:gpt-4o", "openai:gpt-4o-mini")]
    assert ab["significant"] and ab["diff"] == pytest.approx(0.10) and ab["ci_low"] > 0
    am = pairs[("openai:gpt-4o", "openai:gpt-4.1")]
    assert not am["significant"] and am["diff"] == pytest.approx(0.05)
    # The chain rule this replaces would have put all three on rank 1 (each neighbour ties with the next).
    assert board["separability"]["n_significant"] == 1 and board["separability"]["separability"] == pytest.approx(1 / 3)
    # Holm over the three pairs, by hand from the p-values reported
    ps = [p["p_value"] for p in board["pairs"]]
    assert [p["p_adjusted"] for p in board["pairs"]] == pytest.approx(holm(ps))
    # the detectable difference of A vs B: 40 discordant of 400 shared cases
    assert ab["mdd"]["value"] == pytest.approx(minimum_detectable_difference(400, 40 / 400))
    text = render_leaderboard(leaderboard([tmp_path], n_boot=500), "table", width=120)
    assert "Separability: 1 of 3 pairs differ significantly" in text and "Minimum detectable difference" in text


def test_five_runs_obey_the_rule(tmp_path: Path) -> None:
    # nested good sets: each run's good cases contain the next one's; rates 80, 78, 60, 58, 30 % of 200
    rates = {"m1": 160, "m2": 156, "m3": 120, "m4": 116, "m5": 60}
    for name, k in rates.items():
        _run(tmp_path, name, f"scripted:{name}", [i < k for i in range(200)])
    board = leaderboard([tmp_path], n_boot=2000)["tasks"]["eval"]
    order = [r["model"] for r in board["rows"]]
    assert order == [f"scripted:{m}" for m in rates]
    better = {r["label"]: set() for r in board["rows"]}
    for p in board["pairs"]:
        if p["significant"]:
            winner, loser = (p["a"], p["b"]) if p["diff"] > 0 else (p["b"], p["a"])
            better[loser].add(winner)
    for row in board["rows"]:
        assert row["rank"] == 1 + len(better[row["label"]])
    # 2-point gaps (4 discordant cases of 200) are not significant after Holm, the others are
    assert [r["rank"] for r in board["rows"]] == [1, 1, 3, 3, 5]
    # the bootstrap p-value tracks the normal approximation of the paired difference
    gap = next(p for p in board["pairs"] if p["a"] == "scripted:m1" and p["b"] == "scripted:m2")
    se = math.sqrt((4 / 200 - (4 / 200) ** 2) / 200)
    assert gap["se"] == pytest.approx(se, rel=0.1)


def test_runs_of_one_model_say_what_differs_and_the_judge_by_label(tmp_path: Path) -> None:
    goods = [i < 20 for i in range(40)]
    path = _run(tmp_path, "plain", "openai:gpt-4o", goods)
    other = write_eval_run(tmp_path / "cot", "openai:gpt-4o", ["r"] * 40,
                           {JUDGE: _labels(goods), "openai:judge-y": _labels(goods)}, primary="openai:judge-y")
    board = leaderboard([path, other], n_boot=100)["tasks"]["eval"]
    labels = sorted(r["label"] for r in board["rows"])
    assert labels == ["openai:gpt-4o (judge=openai:judge-x)", "openai:gpt-4o (judge=openai:judge-y)"]
    by_label = leaderboard([path, other], judge="openai:judge-x (pointwise)", n_boot=100)
    assert {r["judge"] for r in by_label["tasks"]["eval"]["rows"]} == {judge_key(JUDGE)}
    with pytest.raises(ConfigError, match="Did you mean 'openai:judge-x'"):
        leaderboard([path], judge="openai:judge-z", n_boot=50)


def test_same_run_id_different_judges_all_scores_failed(tmp_path: Path) -> None:
    """Two Task 2 runs of one model (the same run id: same model and data) whose primary judges differ and whose
    scores all failed: a table, not a KeyError."""
    write_eval_run(tmp_path / "x" / "a", "openai:gpt-4o", ["r"] * 3, {"openai:j1": [None] * 3})
    write_eval_run(tmp_path / "y" / "a", "openai:gpt-4o", ["r"] * 3, {"openai:j2": [None] * 3})
    report = leaderboard([tmp_path / "x" / "a", tmp_path / "y" / "a"], n_boot=50)
    rows = report["tasks"]["eval"]["rows"]
    assert len({r["label"] for r in rows}) == 2 and all(r["rank"] is None for r in rows)
    assert any("different judges" in w for w in report["tasks"]["eval"]["warnings"])
    assert "Traceback" not in render_leaderboard(report, "table", width=100)


def test_parameter_counts_give_their_own_trend(tmp_path: Path) -> None:
    for name, model, k in (("a", "meta:llama-3.1-8b", 20), ("b", "meta:llama-3.1-70b", 25),
                           ("c", "meta:llama-3.3-70b", 30), ("d", "hf:qwen2.5-0.5b", 10),
                           ("e", "hf:qwen3-32b", 27)):
        _run(tmp_path, name, model, [i < k for i in range(40)])
    trends = leaderboard([tmp_path], n_boot=100)["tasks"]["eval"]["trends"]
    assert trends["params"]["by"] == "params" and trends["params"]["n"] == 5  # 0.49, 8.0, 32.8, 70.6, 70.6 billion
    assert trends["size"]["by"] == "size" and trends["params"]["rho"] is not None
    assert "Scaling by parameter count" in render_leaderboard(leaderboard([tmp_path], n_boot=100), "md")


def test_significant_never_stands_beside_an_interval_holding_zero(tmp_path: Path) -> None:
    """Every pair of a board: Holm's 'significant' implies an interval that excludes 0 (they are one test, and
    Holm only raises p); the view and the site word each pair with its p and Holm's adjusted p."""
    from uxbench.report.leaderboard_render import pair_text

    for name, k in (("a", 30), ("b", 27), ("c", 24), ("d", 18), ("e", 16)):
        _run(tmp_path, name, f"openai:m-{name}", [i < k for i in range(40)])
    board = leaderboard([tmp_path], n_boot=400)["tasks"]["eval"]
    assert len(board["pairs"]) == 10
    for pair in board["pairs"]:
        excludes = pair["ci_low"] > 0 or pair["ci_high"] < 0
        assert excludes == (pair["p_value"] < 0.05)
        if pair["significant"]:
            assert excludes and pair["p_adjusted"] < 0.05
    assert any(p["significant"] for p in board["pairs"]) and not all(p["significant"] for p in board["pairs"])
    shown = pair_text(board["rows"][1]["vs_previous"])
    assert shown.startswith("+7.5 [") and "p = " in shown and "Holm " in shown and "significant" in shown
