"""Category shares and the good rate per category (recovery strategies), against hand-computed values."""

from __future__ import annotations

import pytest

from uxbench.metrics.strategies import distribution, rate_by_group


def test_distribution_shares_add_to_one_with_wilson_intervals() -> None:
    shares = distribution(["a", "b", "a", "a"], ["a", "b", "c"])
    assert [shares[c]["k"] for c in "abc"] == [3, 1, 0]
    assert shares["a"]["value"] == 0.75 and shares["c"]["value"] == 0.0
    assert shares["c"]["ci_low"] == 0.0 and shares["c"]["ci_high"] == pytest.approx(0.4899, abs=1e-4)  # 0 of 4
    assert sum(s["value"] for s in shares.values()) == 1.0
    with pytest.raises(ValueError, match="outside"):
        distribution(["a", "z"], ["a"])
    assert distribution([], ["a"])["a"]["value"] is None


def test_rate_by_group_counts_unreadable_scores_apart() -> None:
    groups = {"s1": "a", "s2": "a", "s3": "a", "s4": "b", "s5": "b"}
    labels = {"s1": "good", "s2": "bad", "s3": None, "s4": "good"}  # s5 not scored
    out = rate_by_group(groups, labels, ["a", "b", "c"])
    assert (out["a"]["n"], out["a"]["n_scored"], out["a"]["n_good"]) == (3, 2, 1)
    assert out["a"]["rate"]["value"] == 0.5
    assert (out["b"]["n"], out["b"]["n_scored"], out["b"]["rate"]["value"]) == (1, 1, 1.0)
    assert out["c"]["n"] == 0 and out["c"]["rate"]["value"] is None
