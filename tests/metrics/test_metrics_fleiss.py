"""Fleiss' kappa against values computed by hand and the textbook example."""

from __future__ import annotations

import pytest

from uxbench.metrics.agreement import fleiss_kappa


def test_fleiss_kappa_equals_the_hand_computed_value() -> None:
    # 4 items x 3 raters. P_i: ggg 1, ggb (4+1-3)/6 = 1/3, bbb 1, gbb 1/3 -> P_bar = 2/3.
    # p_good = 6/12, p_bad = 6/12 -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3.
    items = [["good"] * 3, ["good", "good", "bad"], ["bad"] * 3, ["good", "bad", "bad"]]
    result = fleiss_kappa(items)
    assert result["n_items"] == 4 and result["n_raters"] == 3 and result["n_missing"] == 0
    assert result["p_bar"] == pytest.approx(2 / 3)
    assert result["p_expected"] == pytest.approx(0.5)
    assert result["kappa"] == pytest.approx(1 / 3)


def test_fleiss_kappa_textbook_example() -> None:
    # Fleiss (1971) as reprinted on Wikipedia: 10 items, 14 raters, 5 categories; kappa = 0.210.
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    items = [[str(j) for j, count in enumerate(row) for _ in range(count)] for row in table]
    assert fleiss_kappa(items)["kappa"] == pytest.approx(0.2099, abs=1e-4)


def test_fleiss_kappa_leaves_out_incomplete_items_and_degenerate_cases() -> None:
    result = fleiss_kappa([["good", "good"], ["good", None], ["bad", "bad"]])
    assert result["n_items"] == 2 and result["n_missing"] == 1 and result["kappa"] == pytest.approx(1.0)
    assert fleiss_kappa([["good", "good"], ["good", "good"]])["kappa"] is None  # P_e = 1
    assert fleiss_kappa([["good"], ["bad"]])["kappa"] is None  # one rater
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([["good", "bad"], ["good", "bad", "bad"]])
