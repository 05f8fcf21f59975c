"""The precision-recall curve and the threshold for a target precision, by hand."""

from __future__ import annotations

import pytest

from uxbench.mining.signals.curve import pr_curve, threshold_for_precision


def test_curve_by_hand_with_ties() -> None:
    scores = [0.9, 0.9, 0.7, 0.5, 0.5, 0.1]
    gold = [True, False, True, True, False, False]
    points = pr_curve(scores, gold)
    # one point per distinct score, highest first; ties enter together
    assert [p["threshold"] for p in points] == [0.9, 0.7, 0.5, 0.1]
    assert [(p["tp"], p["fp"], p["fn"]) for p in points] == [(1, 1, 2), (2, 1, 1), (3, 2, 0), (3, 3, 0)]
    assert [p["precision"] for p in points] == pytest.approx([1 / 2, 2 / 3, 3 / 5, 1 / 2])
    assert [p["recall"] for p in points] == pytest.approx([1 / 3, 2 / 3, 1, 1])
    assert pr_curve(list(reversed(scores)), list(reversed(gold))) == points  # order does not matter


def test_threshold_for_target_precision() -> None:
    points = pr_curve([0.9, 0.9, 0.7, 0.5, 0.5, 0.1], [True, False, True, True, False, False])
    found = threshold_for_precision(points, 0.6)
    assert found is not None and found["threshold"] == 0.5  # P 0.6, the highest recall reaching it
    found = threshold_for_precision(points, 0.65)
    assert found is not None and found["threshold"] == 0.7
    assert threshold_for_precision(points, 0.9) is None
