"""`report.plot_data` and `report.plots`: each plot's values equal the summary, bias report, leaderboard or mining
report they come from, and the files are real PNG / SVG whose text labels carry those values. The drawing tests
skip when matplotlib (the `plot` extra) is absent; the data tests always run."""

from __future__ import annotations

import datetime as dt
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from runs_support import write_eval_run, write_judge_run

from extra_skip import require_extra
from uxbench.errors import ConfigError, UxbenchError
from uxbench.report.bias import bias_report
from uxbench.report.leaderboard import leaderboard
from uxbench.report.plot_data import (
    BarChart,
    chart_for,
    funnel,
    reliability,
    scaling,
    scenario_bars,
    self_preference,
)

G, B = "good", "bad"
MINI, FLASH = "openai:gpt-4o-mini", "google:gemini-2.5-flash"
SVG_NS = "{http://www.w3.org/2000/svg}"


def _summary(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((path / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def task1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plots")
    outcomes = [(G, True), (B, False), (G, True), (B, True)] * 3
    return write_judge_run(root / "t1", "openai:gpt-4o", outcomes, scores=[0.9, 0.7, 0.6, 0.2] * 3,
                           scenarios=["travel", "travel", "code", "code", "travel", "travel", "code", "chat", "chat",
                                      "chat", "travel", "travel"])


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plot-evals")
    write_eval_run(root / "gpt", "openai:gpt-4o", ["reply"] * 10, {MINI: [G] * 8 + [B] * 2, FLASH: [G] * 5 + [B] * 5})
    write_eval_run(root / "claude", "anthropic:claude-sonnet-4-5", ["reply"] * 10,
                   {MINI: [G] * 3 + [B] * 7, FLASH: [G] * 6 + [B] * 4})
    write_eval_run(root / "gemini", "google:gemini-2.5-pro", ["reply"] * 10,
                   {MINI: [G] * 2 + [B] * 8, FLASH: [G] * 4 + [B] * 6})
    return root


def test_task1_scenario_bars_equal_the_summary(task1: Path) -> None:
    chart = scenario_bars([_summary(task1)])
    by_scenario = _summary(task1)["metrics"]["breakdowns"]["scenario"]
    assert chart.categories == ["travel", "chat", "code"]  # by n, then name
    (series,) = chart.series
    for i, key in enumerate(chart.categories):
        cell = by_scenario[key]["avg_acc"]
        assert series.values[i] == pytest.approx(100 * cell["value"])
        assert series.low[i] == pytest.approx(100 * cell["ci_low"])
        assert series.high[i] == pytest.approx(100 * cell["ci_high"])
        assert series.n[i] == by_scenario[key]["n"]
    assert "Avg-Acc" in chart.title


def test_task2_scenario_bars_one_series_per_run_and_judge(evals: Path) -> None:
    summaries = [_summary(evals / "gpt"), _summary(evals / "claude")]
    chart = scenario_bars(summaries)
    assert len(chart.series) == 4 and chart.categories == ["s"]
    first = summaries[0]["judges"]
    expected = {f"openai:gpt-4o, judge {j['spec']}": 100 * j["metrics"]["breakdowns"]["scenario"]["s"]
                ["good_rate_scored_only"]["value"] for j in first.values()}
    got = {s.name: s.values[0] for s in chart.series if s.name.startswith("openai:gpt-4o,")}
    assert got == pytest.approx(expected) and sorted(got.values()) == pytest.approx([50.0, 80.0])
    with pytest.raises(ConfigError, match="one task at a time"):
        scenario_bars([*summaries, {"task": "judge"}])


def test_reliability_uses_the_calibration_bins(task1: Path, evals: Path) -> None:
    cal = _summary(task1)["calibration"]
    chart = reliability([_summary(task1)])
    (curve,) = chart.curves
    filled = [b for b in cal["bins"] if b["n"]]
    assert curve.x == pytest.approx([100 * b["mean_p"] for b in filled])
    assert curve.y == pytest.approx([100 * b["good_rate"] for b in filled])
    assert curve.n == [b["n"] for b in filled] and curve.ece == cal["ece"]
    with pytest.raises(UxbenchError, match="probability verdicts"):
        reliability([_summary(evals / "gpt")])


def test_self_preference_heatmap_equals_the_bias_report(evals: Path) -> None:
    report = bias_report([evals], n_boot=100)
    chart = self_preference(report)
    matrix = report["tasks"]["eval"]["self_preference"]
    for i, judge in enumerate(matrix["judges"]):
        for j, cand in enumerate(matrix["candidates"]):
            cell = matrix["cells"][judge["key"]][cand["label"]]
            assert chart.values[i][j] == pytest.approx(100 * cell["rate"]["value"])
            assert chart.n[i][j] == cell["rate"]["n"] and chart.marks[i][j] == cell["relation"]
    assert "*" in {m for row in chart.marks for m in row}  # gpt-4o-mini judging gpt-4o: same family
    with pytest.raises(ConfigError, match="--task recovery"):
        self_preference(report, "recovery")


def test_scaling_points_equal_the_leaderboard(evals: Path) -> None:
    board = leaderboard([evals], n_boot=100)
    chart = scaling(board, "eval", "release")
    rows = {r["model"]: r for r in board["tasks"]["eval"]["rows"]}
    assert {p.label for p in chart.points} == set(rows)
    for p in chart.points:
        assert p.y == pytest.approx(100 * rows[p.label]["metric"]["value"])
        assert dt.date.fromordinal(int(p.x)).isoformat() == rows[p.label]["released"]
    assert chart.x_is_date and chart.note == "Trend: not estimable (3 models; a trend needs 5)"
    with pytest.raises(ConfigError, match="release, size or params"):
        scaling(board, "eval", "age")


def test_funnel_has_one_unit_per_panel_in_pipeline_order() -> None:
    counts = {"ingest": {"rows": 30, "invalid_rows": 2}, "sessions": {"sessions": 8},
              "gate": {"checked": 8, "gated": 1}, "prefilter": {"kept": 6},
              "signals": {"sessions_with_dissatisfied": 4, "sessions": 6}, "dedup": {"kept": 5},
              "agents": {"candidates": 7, "bad_kept": 2, "good_kept": 1, "bad_rejected": 4},
              "cases": {"selected": 3}}
    counts["signals"].update(assistant_turns=20, dissatisfied_turns=5)
    chart = funnel(counts)
    assert [(p.unit, p.steps) for p in chart.panels] == [
        ("conversations", [("grouped from the log", 8), ("past the safety gate", 7), ("kept by the prefilter", 6),
                           ("not near-duplicates", 5)]),
        ("replies", [("assistant replies", 20), ("met with dissatisfaction", 5)]),
        ("cases", [("candidates proposed by the agents", 7), ("candidates kept by the judge and QA", 3),
                   ("cases selected and exported", 3)])]
    assert chart.panels[0].note == "from 30 log rows (2 invalid, left out)"
    assert chart.panels[1].note.startswith("in 4 of 6 conversations")
    with pytest.raises(UxbenchError, match="no stage counts"):
        funnel({})


def test_unknown_kind_and_wrong_directories(tmp_path: Path, evals: Path) -> None:
    with pytest.raises(ConfigError, match="Did you mean 'funnel'"):
        chart_for("funel", [str(evals)])
    with pytest.raises(UxbenchError, match="not a mining output directory"):
        chart_for("funnel", [str(tmp_path)])
    with pytest.raises(UxbenchError, match="is not a run directory"):
        chart_for("scenario", [str(tmp_path)])


# --- drawing (needs matplotlib) -------------------------------------------------------------------------------


def _svg_texts(data: bytes) -> list[str]:
    root = ET.fromstring(data)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]


def test_png_and_svg_files_parse_and_carry_the_values(tmp_path: Path, task1: Path) -> None:
    require_extra("plot")
    from uxbench.report.plots import render, write

    chart = scenario_bars([_summary(task1)])
    png = write(chart, tmp_path / "bars.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    svg = render(chart, "svg")
    texts = _svg_texts(svg)
    for value, n in zip(chart.series[0].values, chart.series[0].n, strict=True):
        assert f"{value:.1f}" in " ".join(texts) and f"n={n}" in " ".join(texts)
    assert render(chart, "svg") == svg  # reproducible: no date, fixed ids
    with pytest.raises(ConfigError, match=r"\.png or \.svg"):
        write(chart, tmp_path / "bars.jpg")


@pytest.mark.parametrize("kind", ["reliability", "selfpref", "scaling"])
def test_every_run_plot_draws(tmp_path: Path, task1: Path, evals: Path, kind: str) -> None:
    require_extra("plot")
    from uxbench.report.plots import render

    paths = [str(task1)] if kind == "reliability" else [str(evals)]
    chart = chart_for(kind, paths, n_boot=100)
    texts = " ".join(_svg_texts(render(chart, "svg")))
    if kind == "reliability":
        assert all(f"{y:.1f} (n={n})" in texts for y, n in zip(chart.curves[0].y, chart.curves[0].n, strict=True))  # type: ignore[union-attr]
    elif kind == "selfpref":
        assert "80.0*" in texts and "n=10" in texts
    else:
        assert "openai:gpt-4o" in texts and "not estimable" in texts
    assert render(chart, "png").startswith(b"\x89PNG")


def test_bars_without_ci_and_lines_draw(tmp_path: Path) -> None:
    require_extra("plot")
    from uxbench.report.plot_data import Series
    from uxbench.report.plots import render

    lines = BarChart(title="t", ylabel="%", categories=["2024-05-01", "2024-05-02"], lines=True,
                     series=[Series("dissatisfied", [80.0, 16.7], [37.6, 3.0], [96.4, 56.4], [5, 6]),
                             Series("complaint", [20.0, None], [None, None], [None, None], [5, 6])])
    texts = " ".join(_svg_texts(render(lines, "svg")))
    assert "80.0" in texts and "16.7" in texts and "20.0" in texts and "2024-05-02" in texts
