"""Wilson intervals, the MOVER mean interval and the percentile bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from uxbench.metrics import proportions
from uxbench.metrics.proportions import (
    Proportion,
    bootstrap_ci,
    multinomial_resample,
    percentile_interval,
    proportion,
    wilson_ci,
    wilson_mean_ci,
)

Z2 = 1.959963984540054**2


def test_wilson_known_values() -> None:
    assert wilson_ci(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_ci(1, 10) == pytest.approx((0.01788, 0.40415), abs=1e-4)
    # k = 0: the upper bound is z^2 / (n + z^2), the lower bound exactly 0.
    low, high = wilson_ci(0, 10)
    assert low == 0.0
    assert high == pytest.approx(Z2 / (10 + Z2))
    assert wilson_ci(10, 10)[1] == 1.0


def test_wilson_edge_cases() -> None:
    assert wilson_ci(0, 0) == (0.0, 1.0)
    for bad in [(-1, 3), (4, 3), (1, -1)]:
        with pytest.raises(ValueError):
            wilson_ci(*bad)
    with pytest.raises(ValueError):
        wilson_ci(1, 2, confidence=1.0)
    # A higher confidence gives a wider interval.
    lo95, hi95 = wilson_ci(30, 100)
    lo99, hi99 = wilson_ci(30, 100, confidence=0.99)
    assert lo99 < lo95 and hi99 > hi95


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_matches_scipy(kn: tuple[int, int]) -> None:
    k, n = kn
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson_ci(k, n)
    assert low == pytest.approx(ref.low, abs=1e-9)
    assert high == pytest.approx(ref.high, abs=1e-9)
    assert low <= k / n <= high


def test_proportion_dict() -> None:
    p = proportion(3, 4)
    assert p["value"] == 0.75 and p["k"] == 3 and p["n"] == 4 and p["method"] == "wilson"
    assert p["ci_low"] < 0.75 < p["ci_high"]
    empty = Proportion.of(0, 0)
    assert empty.value is None and (empty.ci_low, empty.ci_high) == (0.0, 1.0)


def test_wilson_mean_ci_by_hand() -> None:
    # One right good case and one wrong bad case:
    # Wilson(1/1) = [1/(1+z^2), 1], Wilson(0/1) = [0, z^2/(1+z^2)].
    w = Z2 / (1 + Z2)
    low, high = wilson_mean_ci(1, 1, 0, 1)
    assert low == pytest.approx((1 - w) / 2)
    assert high == pytest.approx((1 + w) / 2)
    assert low < 0.5 < high
    with pytest.raises(ValueError):
        wilson_mean_ci(1, 0, 1, 1)


def test_percentile_interval_ignores_nan() -> None:
    stats = np.concatenate([np.arange(101, dtype=float), [np.nan] * 50])
    assert percentile_interval(stats, 0.9) == pytest.approx((5.0, 95.0))
    low, high = percentile_interval([np.nan, np.nan])
    assert math.isnan(low) and math.isnan(high)


def test_bootstrap_deterministic_and_sensible() -> None:
    data = np.array([1] * 30 + [0] * 70)
    a = bootstrap_ci(lambda s: s.mean(axis=1), data, n_boot=1000, seed=7)
    b = bootstrap_ci(lambda s: s.mean(axis=1), data, n_boot=1000, seed=7)
    c = bootstrap_ci(lambda s: s.mean(axis=1), data, n_boot=1000, seed=8)
    assert a == b
    assert a != c
    assert a[0] < 0.3 < a[1]
    # The bootstrap of a proportion lands near the Wilson interval.
    assert a == pytest.approx(wilson_ci(30, 100), abs=0.03)


def test_bootstrap_vectorized_equals_loop() -> None:
    data = np.arange(20, dtype=float)
    vec = bootstrap_ci(lambda s: np.median(s, axis=1), data, n_boot=300, seed=3)
    loop = bootstrap_ci(lambda s: float(np.median(s)), data, n_boot=300, seed=3, vectorized=False)
    assert vec == loop


def test_bootstrap_chunking_keeps_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    data = np.random.default_rng(0).normal(size=50)
    whole = bootstrap_ci(lambda s: s.mean(axis=1), data, n_boot=400, seed=1)
    monkeypatch.setattr(proportions, "MAX_RESAMPLE_ELEMENTS", 50 * 7)  # 7 resamples per chunk
    chunked = bootstrap_ci(lambda s: s.mean(axis=1), data, n_boot=400, seed=1)
    assert chunked == whole


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci(lambda s: s.mean(axis=1), [], n_boot=10)
    with pytest.raises(ValueError):
        bootstrap_ci(lambda s: s.mean(axis=1), [1, 2], n_boot=0)
    with pytest.raises(ValueError):
        bootstrap_ci(lambda s: s.mean(), [1, 2, 3], n_boot=10)  # not vectorised: wrong shape


def test_multinomial_resample_keeps_totals() -> None:
    rng = np.random.default_rng(0)
    reps = multinomial_resample([5, 0, 3], 200, rng)
    assert reps.shape == (200, 3)
    assert (reps.sum(axis=1) == 8).all()
    assert (reps[:, 1] == 0).all()
    assert (multinomial_resample([0, 0], 5, rng) == 0).all()
