"""Judge resolution in `uxbench bias`: the tie rate (two models' replies to one case within 0.01 of p(good) for a
GRM judge, the same verdict for a pointwise one) by hand, and Kendall's tau between two judges' leaderboards with
its bootstrap interval, equal to scipy on the same rates."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from runs_support import write_eval_run
from scipy.stats import kendalltau

from uxbench.metrics.correlation import kendall_tau_b, leaderboard_agreement
from uxbench.report.bias import bias_report
from uxbench.report.bias_render import render_bias

N = 60
GRM, TEXT = "openai:grm", "openai:judge-y"


def _scores(model: int) -> list[float]:
    # p(good) rises by 0.15 a model; model 1 is 0.005 above model 0 on every third case (20 ties of 60)
    base = [0.2 + 0.15 * model + 0.02 * (i % 5) for i in range(N)]
    if model == 1:
        base = [0.2 + 0.02 * (i % 5) + 0.005 if i % 3 == 0 else b for i, b in enumerate(base)]
    return [round(b, 4) for b in base]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("res")
    for m in range(4):
        scores = _scores(m)
        text = ["good" if (i + m) % 4 != 0 or i < 10 * m else "bad" for i in range(N)]
        write_eval_run(root / f"m{m}", f"scripted:m{m}", ["r"] * N,
                       {GRM: ["good" if s >= 0.5 else "bad" for s in scores], TEXT: text},
                       scores={GRM: scores}, modes={GRM: "grm"})
    return root


def test_tie_rates_by_hand(root: Path) -> None:
    report = bias_report([root], n_boot=200)
    ties = {e["label"]: e for e in report["tasks"]["eval"]["resolution"]["ties"]}
    scores = [_scores(m) for m in range(4)]
    expected = sum(abs(a[i] - b[i]) <= 0.01 for a, b in itertools.combinations(scores, 2) for i in range(N))
    assert expected == 20 and ties[GRM]["measure"] == "p(good) within 0.01" and ties[GRM]["rate"]["k"] == expected
    assert ties[GRM]["n_pairs"] == 6 * N
    texts = [["good" if (i + m) % 4 != 0 or i < 10 * m else "bad" for i in range(N)] for m in range(4)]
    same = sum(a[i] == b[i] for a, b in itertools.combinations(texts, 2) for i in range(N))
    assert ties[TEXT]["measure"] == "same verdict" and ties[TEXT]["rate"]["k"] == same


def test_kendall_tau_between_the_two_leaderboards(root: Path) -> None:
    report = bias_report([root], n_boot=500)
    (entry,) = report["tasks"]["eval"]["resolution"]["leaderboards"]
    grm = [sum(s >= 0.5 for s in _scores(m)) / N for m in range(4)]
    text = [sum((i + m) % 4 != 0 or i < 10 * m for i in range(N)) / N for m in range(4)]
    assert entry["n_runs"] == 4 and entry["tau"] == pytest.approx(kendalltau(grm, text).statistic)
    assert entry["ci_low"] <= entry["tau"] <= entry["ci_high"]
    table = render_bias(report, "table", width=120)
    assert "tie rate" in table and "Kendall tau" in table


def test_tau_b_equals_scipy_with_ties() -> None:
    import numpy as np

    x, y = np.array([[1.0, 2, 2, 3, 5, 5]]), np.array([[2.0, 1, 3, 3, 4, 6]])
    assert kendall_tau_b(x, y)[0] == pytest.approx(kendalltau(x[0], y[0]).statistic)
    assert leaderboard_agreement([[1.0, 0.0]] * 2, [[1.0, 0.0]] * 2)["tau"] is None  # fewer than 3 runs
