"""`metrics.session.percentiles` gives np.percentile's values exactly, and `_Grouped` the per-group sums of a loop."""

from __future__ import annotations

import numpy as np
import pytest

from uxbench.metrics.session import SessionOutcome, _clusters, _Grouped, percentiles


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40, 999, 1000, 2000])
def test_percentiles_equal_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    for draw in range(30):
        values = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6)
        if draw % 3 == 1:
            values = np.round(values, 1)  # ties
        if draw % 3 == 2:
            values = rng.integers(0, 4, size=n) / 7  # few distinct values
        for low, high in [(2.5, 97.5), (100 * (1 - 0.95) / 2, 100 * (1 - (1 - 0.95) / 2)), (0.0, 100.0),
                          (5.0, 95.0), (50.0, 50.0), (0.5, 99.5)]:
            expected = np.percentile(values, [low, high])
            assert percentiles(values, low, high) == (float(expected[0]), float(expected[1]))


def test_percentiles_of_nothing_are_nan() -> None:
    low, high = percentiles(np.array([], dtype=float), 2.5, 97.5)
    assert np.isnan(low) and np.isnan(high)


def test_grouped_sums_equal_a_sum_per_group() -> None:
    outcomes = [SessionOutcome(cluster=f"p{i % 5}", trial=i, success=i % 3 == 0, reason="max_turns",
                               assistant_turns=1 + i % 4, satisfaction=(3.0, 2.5 + (i % 7) / 10))
                for i in range(53)]
    groups = _clusters(outcomes)
    grouped = _Grouped(groups)
    for value in (lambda o: float(o.success), lambda o: o.satisfaction[-1], lambda o: float(o.assistant_turns)):
        expected = [sum(value(o) for o in g) for g in groups]
        assert grouped.sums(value).tolist() == expected
    assert _Grouped([]).sums(lambda o: 1.0).tolist() == []
