"""Prediction-powered estimates: the published formula by hand, the authors' package (`ppi_py`), the covariance
term when the labelled replies are among all, and a seeded coverage and width study."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uxbench.metrics.ppi import prediction_powered_mean

Z = 1.959963984540054


def _deterministic(size: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(size)
    y = ((i * 7919) % 100 < 45).astype(float)
    flip = (i * 104729) % 10 < 2  # the judge disagrees with the humans on 20% of the replies
    return y, np.where(flip, 1 - y, y)


def test_disjoint_sets_equal_the_published_formula() -> None:
    y_all, f_all = _deterministic(2300)
    y, f, f_unlabelled = y_all[:300], f_all[:300], f_all[300:]
    r = prediction_powered_mean(f_unlabelled, y, f, labelled_in_all=False, smoothed=False)
    theta = f_unlabelled.mean() + (y - f).mean()
    se = math.sqrt(np.var(f_unlabelled, ddof=1) / 2000 + np.var(y - f, ddof=1) / 300)
    assert r["value"] == pytest.approx(theta) and r["se"] == pytest.approx(se)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((theta - Z * se, theta + Z * se))
    # ppi_py 0.2.3 (Angelopoulos et al.), ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05, lam=1) on these arrays,
    # run outside this repository: its variances divide by n, ours by n - 1 (0.03% wider at n = 300).
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((0.394896886873877, 0.5051031131261231), rel=2e-3)
    assert r["n_labelled"] == 300 and r["n_all"] == 2000


def test_labelled_among_all_adds_the_covariance_and_the_smoothing() -> None:
    y_all, f_all = _deterministic(1000)
    y, f = y_all[:100], f_all[:100]
    r = prediction_powered_mean(f_all, y, f)
    rect = y - f
    n10, n01 = int(np.sum((y == 1) & (f == 0))), int(np.sum((y == 0) & (f == 1)))
    p10, p01 = (n10 + 0.5) / 102, (n01 + 0.5) / 102  # Agresti & Min: half a case added to each cell
    smoothed = ((p10 + p01) - (p10 - p01) ** 2) / 102
    var = np.var(f_all, ddof=1) / 1000 + smoothed + 2 * np.cov(f, rect, ddof=1)[0, 1] / 1000
    assert r["se"] == pytest.approx(math.sqrt(var))
    assert r["value"] == pytest.approx(f_all.mean() + rect.mean())
    assert r["human_only"]["value"] == pytest.approx(y.mean())
    assert r["effective_n"] == pytest.approx(np.var(y, ddof=1) / var)


def test_no_disagreement_does_not_collapse_the_interval() -> None:
    f_all = np.array([1.0] * 600 + [0.0] * 400)
    plain = prediction_powered_mean(f_all, f_all[:30], f_all[:30], smoothed=False)
    smoothed = prediction_powered_mean(f_all, f_all[:30], f_all[:30])
    assert plain["value"] == smoothed["value"] == pytest.approx(0.6)
    assert smoothed["ci_high"] - smoothed["ci_low"] > 2 * (plain["ci_high"] - plain["ci_low"])


def test_refusals() -> None:
    with pytest.raises(ValueError):
        prediction_powered_mean([1, 0], [], [])
    with pytest.raises(ValueError):
        prediction_powered_mean([1, 0], [1, 0, 1], [1, 0])
    with pytest.raises(ValueError):
        prediction_powered_mean([1], [1, 0], [1, 0])  # 2 labelled cannot be among 1 reply


@pytest.mark.parametrize(("agreement", "n_labelled"), [(0.9, 100), (0.75, 200)])
def test_coverage_and_width_against_human_only(agreement: float, n_labelled: int) -> None:
    """Seeded study: N = 2000 replies with true human labels at theta = 0.4, a judge agreeing with them on a share
    of the replies and biased towards good, humans labelling a random subset. The PPI interval holds theta in at
    least 93 of 100 repetitions and is narrower than the human-only one. (Over 4,000 repetitions its coverage is
    95.6% and 95.0% in these two settings; a 100-repetition study of any exact 95% interval falls below 93 for
    about one seed in eight, hence the fixed seed.)"""
    rng = np.random.default_rng(1)
    theta, big_n = 0.4, 2000
    covered = narrower = 0
    for _ in range(100):
        y_all = (rng.random(big_n) < theta).astype(float)
        wrong = rng.random(big_n) > agreement
        f_all = np.where(wrong, (rng.random(big_n) < 0.8).astype(float), y_all)  # errors lean to "good"
        pick = rng.choice(big_n, size=n_labelled, replace=False)
        r = prediction_powered_mean(f_all, y_all[pick], f_all[pick])
        covered += r["ci_low"] <= theta <= r["ci_high"]
        narrower += r["width_ratio"] < 1
    assert covered >= 93
    assert narrower == 100
