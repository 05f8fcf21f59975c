"""Bias and ranking metrics against hand-computed values: Cohen's kappa, length-controlled Good%, the
self-preference matrix, correlations and scaling trends (one test each), win rates with ties, paired
differences, ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from uxbench.metrics.agreement import cohen_kappa
from uxbench.metrics.bias import length_controlled_rates, self_preference_matrix
from uxbench.metrics.correlation import correlation, trend
from uxbench.metrics.proportions import wilson_ci
from uxbench.metrics.ranking import paired_rate_diff, significance_ranks
from uxbench.metrics.winrate import win_rate


def _labels(table: list[tuple[str, str, int]]) -> tuple[list[str | None], list[str | None]]:
    a: list[str | None] = []
    b: list[str | None] = []
    for x, y, count in table:
        a += [x] * count
        b += [y] * count
    return a, b


def test_kappa_equals_the_hand_computed_value() -> None:
    # 2x2 table [[20, 5], [10, 15]]: p_o = 35/50 = 0.7; rater A 25 good / 25 bad, rater B 30 / 20;
    # p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a, b = _labels([("good", "good", 20), ("good", "bad", 5), ("bad", "good", 10), ("bad", "bad", 15)])
    result = cohen_kappa(a, b, n_boot=500)
    assert result["n"] == 50 and result["n_missing"] == 0
    assert result["agreement"]["value"] == pytest.approx(0.7)
    assert result["p_expected"] == pytest.approx(0.5)
    assert result["kappa"]["value"] == pytest.approx(0.4)
    assert result["kappa"]["ci_low"] < 0.4 < result["kappa"]["ci_high"]
    assert result["table"] == [[15, 10], [5, 20]]  # categories sorted: bad, good
    assert (result["agreement"]["ci_low"], result["agreement"]["ci_high"]) == pytest.approx(wilson_ci(35, 50))


def test_kappa_leaves_out_unscored_items_and_is_undefined_for_one_shared_label() -> None:
    a, b = _labels([("good", "good", 4), ("good", "bad", 2)])
    a += [None, "bad"]
    b += ["good", None]
    result = cohen_kappa(a, b, n_boot=50)
    assert result["n"] == 6 and result["n_missing"] == 2
    # p_o = 4/6; A all good, B 4 good 2 bad: p_e = (6*4 + 0*2) / 36 = 2/3 -> kappa 0
    assert result["kappa"]["value"] == pytest.approx(0.0)
    same = cohen_kappa(["good"] * 5, ["good"] * 5, n_boot=50)
    assert same["agreement"]["value"] == 1.0 and same["kappa"]["value"] is None  # p_e = 1: undefined
    assert cohen_kappa([], [], n_boot=10)["kappa"]["value"] is None
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa(["good"], [])


def test_length_controlled_good_rate_equals_the_hand_computed_logistic_fit() -> None:
    # One candidate, two lengths: short (100 chars) 2 of 5 good, long (1000 chars) 4 of 5 good. Two cells and
    # two parameters: the fit is saturated, so the fitted log-odds are exactly log(2/3) at log 101 and log 4
    # at log 1001. The reference (median of the ten lengths) is 550 chars.
    lengths = [100] * 5 + [1000] * 5
    goods = [True, True, False, False, False, True, True, True, True, False]
    result = length_controlled_rates({"X": (lengths, goods)}, n_boot=200, ridge=0.0)
    slope = (math.log(4) - math.log(2 / 3)) / (math.log1p(1000) - math.log1p(100))
    logit = math.log(2 / 3) + slope * (math.log1p(550) - math.log1p(100))
    assert result["reference_chars"] == 550.0
    assert result["groups"]["X"]["lc"]["value"] == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-9)
    assert result["groups"]["X"]["raw"]["value"] == pytest.approx(0.6)
    # beta is per SD of log length: slope * sd(log1p(lengths))
    sd = float(np.log1p(np.asarray(lengths, dtype=float)).std())
    assert result["beta"]["value"] == pytest.approx(slope * sd, abs=1e-9)
    assert result["odds_ratio_per_sd"] == pytest.approx(math.exp(slope * sd))
    lc = result["groups"]["X"]["lc"]
    assert lc["ci_low"] <= lc["value"] <= lc["ci_high"]


def test_length_controlled_rates_share_one_slope_across_candidates() -> None:
    # X: short 1/4 good (log-odds -ln 3), long 3/4 (+ln 3). Y: short 1/2 (0), long 9/10 (ln 9): the same
    # log-odds step 2 ln 3 in both, so the shared-slope model reproduces every cell exactly. 6 short and 14
    # long replies: the median is long, so each LC Good% is the candidate's own long-reply rate.
    x = ([100] * 4 + [1000] * 4, [True, False, False, False, True, True, True, False])
    y = ([100] * 2 + [1000] * 10, [True, False] + [True] * 9 + [False])
    result = length_controlled_rates({"X": x, "Y": y}, n_boot=100, ridge=0.0)
    assert result["reference_chars"] == 1000.0
    assert result["groups"]["X"]["lc"]["value"] == pytest.approx(0.75, abs=1e-9)
    assert result["groups"]["Y"]["lc"]["value"] == pytest.approx(0.9, abs=1e-9)


def test_the_prior_on_the_slope_keeps_a_separated_sample_finite_and_fades_with_size() -> None:
    # Every long reply good, every short one bad: without a prior the slope has no finite maximum.
    separated = {"X": ([100] * 5 + [1000] * 5, [False] * 5 + [True] * 5)}
    fit = length_controlled_rates(separated, n_boot=50)
    assert fit["beta"] is not None and 0 < fit["beta"]["value"] < 10
    assert 0.0 < fit["groups"]["X"]["lc"]["value"] < 1.0
    # With 100 times the data, the prior's pull is negligible: LC close to the maximum-likelihood value.
    lengths = [100] * 500 + [1000] * 500
    goods = ([True] * 200 + [False] * 300) + ([True] * 400 + [False] * 100)
    exact = length_controlled_rates({"X": (lengths, goods)}, n_boot=20, ridge=0.0)["groups"]["X"]["lc"]["value"]
    prior = length_controlled_rates({"X": (lengths, goods)}, n_boot=20)["groups"]["X"]["lc"]["value"]
    assert prior == pytest.approx(exact, abs=2e-3)


def test_length_controlled_rates_handle_all_good_candidates_and_constant_lengths() -> None:
    result = length_controlled_rates({"X": ([100, 200, 300], [True, False, True]), "Z": ([50, 60], [True, True])},
                                     n_boot=50)
    assert result["groups"]["Z"]["lc"]["value"] == pytest.approx(1.0)
    flat = length_controlled_rates({"X": ([300] * 4, [True, False, True, True])}, n_boot=50)
    assert flat["beta"] is None and flat["groups"]["X"]["lc"]["value"] == pytest.approx(0.75)
    empty = length_controlled_rates({"X": ([], [])}, n_boot=10)
    assert empty["groups"]["X"]["lc"]["value"] is None and empty["reference_chars"] is None


def test_self_preference_matrix_counts_each_cell() -> None:
    rows = ([("J1", "gpt", "good")] * 3 + [("J1", "gpt", "bad")] + [("J1", "claude", "bad")] * 2
            + [("J1", "claude", None)] + [("J2", "gpt", "good")] * 2 + [("J2", "claude", "good")])
    matrix = self_preference_matrix(rows)
    assert matrix["judges"] == ["J1", "J2"] and matrix["candidates"] == ["gpt", "claude"]
    cell = matrix["cells"]["J1"]["gpt"]["rate"]
    assert (cell["k"], cell["n"], cell["value"]) == (3, 4, 0.75)
    assert (cell["ci_low"], cell["ci_high"]) == pytest.approx(wilson_ci(3, 4))
    claude = matrix["cells"]["J1"]["claude"]
    assert claude["rate"]["value"] == 0.0 and claude["rate"]["n"] == 2 and claude["n_unscored"] == 1
    assert matrix["cells"]["J2"]["claude"]["rate"]["value"] == 1.0


def test_correlation_interval_and_p_value_are_one_test() -> None:
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    r = correlation(x, y)
    assert r["value"] == pytest.approx(0.8)
    z = math.atanh(0.8)
    se = math.sqrt(1.06 / 2)
    half = 1.959963984540054 * se
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((math.tanh(z - half), math.tanh(z + half)))
    assert r["p_value"] == pytest.approx(2 * norm.sf(z / se))
    assert correlation([1, 1, 1, 1], [1, 2, 3, 4])["value"] is None
    rng = np.random.default_rng(3)
    for _ in range(200):  # whatever the data, the interval excludes 0 exactly when p < 0.05
        n = int(rng.integers(4, 40))
        c = correlation(list(rng.normal(size=n)), list(rng.normal(size=n) + rng.uniform(0, 1) * np.arange(n) / n))
        if c["ci_low"] is not None:
            assert (c["ci_low"] > 0 or c["ci_high"] < 0) == (c["p_value"] < 0.05)


def test_a_trend_over_fewer_than_five_models_is_not_estimable() -> None:
    """The scaling chart once printed 'rho -0.87 [-1.00, -0.87], p = 0.667, 3 models': an interval excluding 0
    beside p 0.667. Three or four models give no trend at all."""
    for n in (2, 3, 4):
        t = trend(list(range(n)), [0.5 - 0.001 * i for i in range(n)])
        assert t["rho"] is None and t["ci_low"] is None and t["p_value"] is None and not t["estimable"]
        assert t["reason"] == f"{n} models; a trend needs 5"
    assert trend([1, 2, 3, 4, 5], [1, 1, 1, 1, 1])["reason"] == "every model has the same value"


def test_a_trend_interval_p_value_and_verdict_never_disagree() -> None:
    t = trend([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5])  # rho = 0.829
    se = math.sqrt((1 + t["rho"] ** 2 / 2) / 3)
    assert t["rho"] == pytest.approx(0.8285714) and t["se_z"] == pytest.approx(se)
    assert t["p_value"] == pytest.approx(2 * norm.sf(math.atanh(t["rho"]) / se))
    perfect = trend([1, 2, 3, 4, 5], [10, 20, 30, 40, 50])  # |rho| = 1: tested as 0.95, halfway to the next value
    assert perfect["rho"] == 1.0 and perfect["ci_high"] == 1.0 and 0 < perfect["ci_low"] < 1
    assert perfect["p_value"] == pytest.approx(2 * norm.sf(math.atanh(0.95) / math.sqrt((1 + 0.95 ** 2 / 2) / 2)))
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(5, 16))
        x = list(rng.normal(size=n))
        y = [v * rng.uniform(-1, 1) + rng.normal() for v in x]
        t = trend(x, y)
        excludes = t["ci_low"] > 0 or t["ci_high"] < 0
        assert excludes == t["significant"] == (t["p_value"] < 0.05)
        assert t["ci_low"] <= t["rho"] <= t["ci_high"]


def test_win_rate_counts_ties_half() -> None:
    result = win_rate(6, 2, 2)
    assert result["value"] == pytest.approx(0.7) and result["n"] == 10
    assert (result["ci_low"], result["ci_high"]) == pytest.approx(wilson_ci(7.0, 10))
    assert result["ties"]["value"] == pytest.approx(0.2) and result["wins"]["k"] == 6
    assert win_rate(0, 0, 0)["value"] is None


def test_paired_difference_and_significance_ranks() -> None:
    a = [True] * 8 + [False] * 2
    b = [True] * 6 + [False] * 4
    d = paired_rate_diff(a, b, n_boot=500)
    assert d["diff"] == pytest.approx(0.2) and (d["a_only"], d["b_only"]) == (2, 0)
    assert d["ci_low"] <= 0.2 <= d["ci_high"] and 0 < d["p_value"] < 1
    # A > M > B: only A - B significant (p 0.001 x 3 pairs = 0.003); A - M, M - B not
    tests = {(0, 1): {"diff": 0.05, "p_value": 0.2}, (1, 2): {"diff": 0.05, "p_value": 0.3},
             (0, 2): {"diff": 0.10, "p_value": 0.001}}
    out = significance_ranks([0.6, 0.55, 0.5], tests)
    assert out["ranks"] == [1, 1, 2] and out["ties"] == [[1], [0, 2], [1]] and out["better_than"][0] == [2]
    assert out["separability"] == pytest.approx(1 / 3) and out["pairs"][(0, 2)]["p_adjusted"] == pytest.approx(0.003)
    # an entry without a figure is not ranked; a pair that could not be compared is a tie
    unranked = significance_ranks([0.6, None, 0.5], {(0, 2): {"diff": 0.1, "p_value": 0.5}})
    assert unranked["ranks"] == [1, None, 1] and unranked["n_pairs"] == 1


def test_paired_differences_interval_and_p_value_are_one_test() -> None:
    """The demo board once printed '+20.8 [0.0, 37.5] (n=24, significant)': a percentile interval touching 0
    beside a p-value from another approximation. Both now come from one test."""
    from uxbench.metrics.paired import paired_bootstrap_diff

    rng = np.random.default_rng(11)
    for _ in range(150):
        n = int(rng.integers(6, 60))
        a = list(rng.random(n) < rng.uniform(0.2, 0.9))
        b = list(rng.random(n) < rng.uniform(0.2, 0.9))
        golds = ["good" if i % 2 else "bad" for i in range(n)]
        for result in (paired_rate_diff(a, b, n_boot=300, seed=1),
                       paired_bootstrap_diff(a, b, golds, n_boot=300, seed=1)):
            if result["p_value"] is None:
                continue
            excludes = result["ci_low"] > 0 or result["ci_high"] < 0
            assert excludes == (result["p_value"] < 0.05), result
            assert result["ci_low"] <= result["diff"] <= result["ci_high"]
            assert -1.0 <= result["ci_low"] and result["ci_high"] <= 1.0
