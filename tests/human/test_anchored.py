"""Human-anchored Good%: a study draws a run's replies at random (recorded), its labels (majority, a tie counted
half; or each annotator) and the judge's verdicts on every reply give the prediction-powered estimate of
`metrics.ppi`; a stratified draw or a pairwise study is refused with the reason; the CLI shows it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "web"))
from web_support import write_eval_run

from uxbench.human.anchored import human_anchored
from uxbench.human.results import results_text, study_results
from uxbench.human.study import Study
from uxbench.metrics.ppi import prediction_powered_mean

N = 200
JUDGE = "openai:judge-x"


def _judge(i: int) -> str:
    return "good" if i % 10 < 6 else "bad"  # the judge calls 60% good


def _human(i: int) -> str:
    return "bad" if i % 10 == 5 else _judge(i)  # humans like 50%: the judge over-calls one reply in ten


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_eval_run(tmp_path_factory.mktemp("anch") / "t2", "openai:gpt-4o",
                          {JUDGE: [_judge(i) for i in range(N)]})


def test_random_draw_and_the_majority_estimate(run: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(run), n=40, annotators=2, seed=5)
    meta = study.meta()
    assert (meta["draw"], meta["population"], meta["seed"]) == ("random", "200", "5")
    items = study.items()
    a, b = study.annotators()
    index = {i["hidden"]["case_id"]: int(i["hidden"]["case_id"][1:]) for i in items}
    for k, item in enumerate(items):
        truth = _human(index[item["hidden"]["case_id"]])
        study.judge(a, item["item_id"], truth)
        study.judge(b, item["item_id"], ("bad" if truth == "good" else "good") if k == 0 else truth)  # one tie
    result = human_anchored(study)
    assert result["available"] and result["n_labelled"] == 40 and result["n_ties"] == 1
    y = [0.5 if k == 0 else float(_human(index[i["hidden"]["case_id"]]) == "good") for k, i in enumerate(items)]
    f_lab = [float(_judge(index[i["hidden"]["case_id"]]) == "good") for i in items]
    f_all = [float(_judge(i) == "good") for i in range(N)]
    expected = prediction_powered_mean(f_all, y, f_lab)
    (estimate,) = result["estimates"]
    assert estimate["judge"] == JUDGE and estimate["judge_rate_all"] == pytest.approx(0.6)
    for key in ("value", "ci_low", "ci_high", "effective_n", "width_ratio"):
        assert estimate[key] == pytest.approx(expected[key]), key
    assert estimate["ci_low"] <= 0.5 <= estimate["ci_high"] and estimate["width_ratio"] < 1
    per_annotator = human_anchored(study, annotators="each")["estimates"]
    assert [e["annotator"] for e in per_annotator] == [a.name, b.name]
    text = results_text(study_results(study, n_boot=100))
    assert "Human-anchored Good% of the 200 replies" in text and "narrower than humans alone" in text


def test_what_cannot_anchor_says_why(run: Path, tmp_path: Path) -> None:
    stratified = Study.create(tmp_path / "st", str(run), n=10, annotators=1, draw="stratified")
    assert "--draw random" in human_anchored(stratified)["reason"]
    fresh = Study.create(tmp_path / "fr", str(run), n=10, annotators=1)
    assert human_anchored(fresh)["reason"] == "no item has a human label yet"
    assert "not available (no item has a human label yet)" in results_text(study_results(fresh, n_boot=50))


def test_the_cli_draws_and_reports(run: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from uxbench.cli.main import app

    made = CliRunner().invoke(app, ["human", "new", "--from", str(run), "--n", "5", "--out", str(tmp_path / "c")])
    assert made.exit_code == 0 and "drawn random from 200 (seed 0)" in made.output
    bad = CliRunner().invoke(app, ["human", "results", str(tmp_path / "c"), "--annotators", "all"])
    assert bad.exit_code == 2 and "--annotators must be majority or each" in bad.output
