"""McNemar and the paired Avg-Acc bootstrap."""

from __future__ import annotations

import math

import pytest

from uxbench.metrics import mcnemar, paired_bootstrap_diff


def _pairs(both_right: int, a_only: int, b_only: int, both_wrong: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both_right + [True] * a_only + [False] * b_only + [False] * both_wrong
    b = [True] * both_right + [False] * a_only + [True] * b_only + [False] * both_wrong
    return a, b


def test_mcnemar_exact_by_hand() -> None:
    a, b = _pairs(10, 1, 6, 3)
    r = mcnemar(a, b)
    assert (r["n"], r["both_right"], r["a_only"], r["b_only"], r["both_wrong"]) == (20, 10, 1, 6, 3)
    assert r["method"] == "exact binomial"
    # 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128
    assert r["p_value"] == pytest.approx(2 * 8 / 128)
    assert mcnemar(b, a)["p_value"] == pytest.approx(r["p_value"])


def test_mcnemar_chi_square_by_hand() -> None:
    a, b = _pairs(5, 20, 10, 5)
    r = mcnemar(a, b)
    assert r["method"].startswith("chi-square")
    stat = (abs(20 - 10) - 1) ** 2 / 30
    assert r["statistic"] == pytest.approx(stat)
    # Survival function of chi-square with 1 df: erfc(sqrt(x / 2)).
    assert r["p_value"] == pytest.approx(math.erfc(math.sqrt(stat / 2)))


def test_mcnemar_no_discordant_pairs() -> None:
    r = mcnemar([True, False], [True, False])
    assert r["p_value"] == 1.0 and r["a_only"] == r["b_only"] == 0
    with pytest.raises(ValueError):
        mcnemar([True], [True, False])


def test_paired_diff_by_hand() -> None:
    golds = ["good"] * 4 + ["bad"] * 4
    a = [True, True, True, False, True, True, False, False]  # good 3/4, bad 2/4 -> 0.625
    b = [True, True, False, False, True, False, False, False]  # good 2/4, bad 1/4 -> 0.375
    r = paired_bootstrap_diff(a, b, golds, n_boot=1000, seed=1)
    assert r["a_avg_acc"] == 0.625 and r["b_avg_acc"] == 0.375
    assert r["diff"] == pytest.approx(0.25)
    # the interval is the p-value's test: diff +- 1.96 se (A never worse on a case of 8 still leaves room for
    # a population where it is: the interval holds 0, and so p > 0.05)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((0.25 - 1.959964 * r["se"], 0.25 + 1.959964 * r["se"]))
    assert r["ci_low"] < 0 < r["ci_high"] and r["p_value"] > 0.05
    assert r == paired_bootstrap_diff(a, b, golds, n_boot=1000, seed=1)
    assert (r["n"], r["n_good"], r["n_bad"]) == (8, 4, 4)


def test_paired_diff_identical_and_undefined() -> None:
    golds = ["good", "bad", "good", "bad"]
    same = [True, False, False, True]
    r = paired_bootstrap_diff(same, same, golds, n_boot=200)
    assert (r["diff"], r["ci_low"], r["ci_high"]) == (0.0, 0.0, 0.0)
    only_good = paired_bootstrap_diff([True], [False], ["good"], n_boot=50)
    assert only_good["diff"] is None and only_good["ci_low"] is None
    with pytest.raises(ValueError):
        paired_bootstrap_diff([True], [True], ["meh"])
