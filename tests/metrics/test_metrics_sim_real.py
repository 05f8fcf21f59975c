"""Simulated-vs-real statistics against hand computation and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import kendalltau

from uxbench.metrics.auc import auc
from uxbench.metrics.sim_real import (
    compare_reactions,
    design_effect,
    js_distance_from_counts,
    kendall_tau,
    ks_lengths,
    session_counts,
)

CATS = ("satisfied", "complaint", "rephrase")
BAD = {"complaint", "rephrase"}


def test_rates_ratio_gap_and_js_equal_hand_computation() -> None:
    # real: 10 turns, 4 dissatisfied (3 complaint, 1 rephrase); sim: 10 turns, 1 complaint.
    real = [["satisfied", "complaint"], ["complaint", "complaint", "satisfied"], ["rephrase", "satisfied"],
            ["satisfied", "satisfied", "satisfied"]]
    sim = [["satisfied"] * 3, ["satisfied", "complaint"], ["satisfied"] * 3, ["satisfied", "satisfied"]]
    out = compare_reactions(real, sim, CATS, BAD, n_boot=500, seed=1)
    assert out["n_turns"] == {"real": 10, "sim": 10}
    assert out["rates"]["complaint"]["real"]["value"] == pytest.approx(0.3)
    assert out["rates"]["complaint"]["sim"]["value"] == pytest.approx(0.1)
    ratio = out["rates"]["complaint"]["ratio_sim_over_real"]
    assert ratio["value"] == pytest.approx(1 / 3)
    assert ratio["ci_low"] <= ratio["value"] <= ratio["ci_high"]
    gap = out["cooperativeness_gap"]
    assert gap["value"] == pytest.approx(0.4 - 0.1)
    assert gap["ci_low"] <= gap["value"] <= gap["ci_high"]
    expected_js = jensenshannon([6, 3, 1], [9, 1, 0], base=2)
    assert out["js_distance"]["value"] == pytest.approx(expected_js)
    # rephrase never happens in sim: the ratio is 0 (defined, real rate > 0); satisfied is fine
    assert out["rates"]["rephrase"]["ratio_sim_over_real"]["value"] == 0.0


def test_ratio_is_undefined_when_the_real_rate_is_zero_and_labels_are_checked() -> None:
    out = compare_reactions([["satisfied"]], [["complaint"]], CATS, BAD, n_boot=50)
    assert out["rates"]["complaint"]["ratio_sim_over_real"]["value"] is None
    with pytest.raises(ValueError, match="not among the categories"):
        compare_reactions([["oops"]], [["satisfied"]], CATS, BAD)
    with pytest.raises(ValueError, match="outside the categories"):
        compare_reactions([["satisfied"]], [["satisfied"]], CATS, {"abandon"})


def test_js_distance_vectorised_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    p = rng.integers(0, 20, size=(30, 5)).astype(float)
    q = rng.integers(0, 20, size=(30, 5)).astype(float)
    got = js_distance_from_counts(p, q)
    for i in range(30):
        assert got[i] == pytest.approx(jensenshannon(p[i], q[i], base=2), abs=1e-9)
    assert js_distance_from_counts(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1.0)
    assert np.isnan(js_distance_from_counts(np.array([0.0, 0.0]), np.array([0.0, 1.0])))


def test_design_effect_is_one_for_independent_turns_and_large_for_clustered_ones() -> None:
    # every session one turn: no clustering possible
    events, sizes = np.array([1.0, 0, 0, 1, 0, 0, 0, 1]), np.ones(8)
    assert design_effect(events, sizes) == pytest.approx(1.0, abs=0.2)
    # sessions of 10 turns that either all fail or all pass: deff near the session size
    events, sizes = np.array([10.0, 0, 10, 0, 0, 10, 0, 0]), np.full(8, 10.0)
    assert design_effect(events, sizes) > 8
    # no event: the cautious choice, the mean session size
    assert design_effect(np.zeros(4), np.full(4, 5.0)) == 5.0
    counts, sizes = session_counts([["complaint", "satisfied"], []], CATS)
    assert counts.tolist() == [[1, 1, 0], [0, 0, 0]] and sizes.tolist() == [2, 0]


def test_wilson_rate_at_zero_events_is_not_a_point() -> None:
    out = compare_reactions([["satisfied"] * 5] * 4, [["satisfied"] * 5] * 4, CATS, BAD, n_boot=50)
    rate = out["rates"]["complaint"]["sim"]
    assert rate["value"] == 0.0 and rate["ci_high"] > 0.2  # 4 sessions of 5 turns: like 4 observations


def test_ks_lengths_and_kendall_tau_agree_with_scipy() -> None:
    ks = ks_lengths([2, 3, 4, 5, 6], [2, 2, 2, 3, 3])
    assert ks["statistic"] == pytest.approx(0.6) and ks["median_real"] == 4.0 and ks["median_sim"] == 2.0
    assert ks_lengths([], [1])["statistic"] is None
    x, y = [1, 2, 3, 4, 5, 6], [2, 1, 3, 4, 6, 5]
    tau = kendall_tau(x, y)
    assert tau["tau"] == pytest.approx(float(kendalltau(x, y).statistic))
    assert tau["ci_low"] < tau["tau"] < tau["ci_high"]
    assert kendall_tau([1, 2, 3], [3, 2, 1])["tau"] == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1])["ci_low"] is None  # n < 5: no interval
    assert kendall_tau([1, 1], [1, 2])["tau"] is None


def test_auc_hand_values_delong_and_cluster_bootstrap() -> None:
    # positives 3, 4; negatives 1, 3 -> pairs: (3>1) 1, (3=3) .5, (4>1) 1, (4>3) 1 -> 3.5 / 4
    out = auc([3, 4, 1, 3], [True, True, False, False])
    assert out["value"] == pytest.approx(0.875)
    assert 0.0 <= out["ci_low"] <= out["value"] <= out["ci_high"] <= 1.0
    rng = np.random.default_rng(3)
    y = rng.random(400) < 0.5
    s = rng.normal(size=400) + y * 1.0
    delong = auc(s, y)
    clusters = [str(i // 4) for i in range(400)]
    boot = auc(s, y, clusters=clusters, n_boot=300, seed=0)
    assert delong["value"] == pytest.approx(boot["value"])
    assert delong["ci_low"] < delong["value"] < delong["ci_high"]
    assert boot["ci_low"] < boot["value"] < boot["ci_high"] and boot["n_clusters"] == 100
    assert auc([1.0, 2.0], [True, True])["value"] is None
    with pytest.raises(ValueError, match="differ in length"):
        auc([1.0], [True, False])
