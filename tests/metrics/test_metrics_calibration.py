"""ECE with its bins and the Brier score, against values worked by hand."""

from __future__ import annotations

import pytest

from uxbench.metrics.calibration import calibration


def test_ece_bins_and_brier_by_hand() -> None:
    # bins of width 0.5: [0, 0.5) holds 0.1, 0.2, 0.4 (outcomes F, F, T); [0.5, 1] holds 0.6, 0.9, 1.0 (T, F, T)
    outcomes = [False, False, True, True, False, True]
    probs = [0.1, 0.2, 0.4, 0.6, 0.9, 1.0]
    c = calibration(outcomes, probs, n_bins=2)
    low, high = c["bins"]
    assert (low["n"], high["n"]) == (3, 3)
    assert low["mean_p"] == pytest.approx(0.7 / 3) and low["good_rate"] == pytest.approx(1 / 3)
    assert high["mean_p"] == pytest.approx(2.5 / 3) and high["good_rate"] == pytest.approx(2 / 3)
    # ECE = 3/6 * |1/3 - 0.7/3| + 3/6 * |2/3 - 2.5/3| = 0.5 * 0.1 + 0.5 * (0.5/3)
    assert c["ece"] == pytest.approx(0.5 * 0.1 + 0.5 * 0.5 / 3)
    # Brier = mean of (p - y)^2
    assert c["brier"] == pytest.approx((0.01 + 0.04 + 0.36 + 0.16 + 0.81 + 0.0) / 6)


def test_empty_bins_are_listed_and_nothing_is_no_figure() -> None:
    c = calibration([True], [0.95], n_bins=10)
    assert [b["n"] for b in c["bins"]] == [0] * 9 + [1]
    assert c["bins"][0]["mean_p"] is None and c["ece"] == pytest.approx(0.05)
    assert calibration([], [])["ece"] is None
    with pytest.raises(ValueError):
        calibration([True], [0.5, 0.5])
