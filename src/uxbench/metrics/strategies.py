"""Shares of categories with Wilson CIs, and a judge's good rate per category (Task 3 recovery strategies:
how often each strategy opens a recovery, and the Recovery Rate of each)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from uxbench.metrics.proportions import proportion


def distribution(values: Sequence[str], categories: Sequence[str], confidence: float = 0.95) -> dict[str, Any]:
    """Each category's share of `values` ({value, k, n, ci_low, ci_high}), in the order of `categories`; a
    value outside them is an error (so the shares always add up to one)."""
    unknown = sorted(set(values) - set(categories))
    if unknown:
        raise ValueError(f"values outside the categories: {unknown[:5]}")
    n = len(values)
    return {c: proportion(sum(1 for v in values if v == c), n, confidence) for c in categories}


def rate_by_group(
    groups: Mapping[str, str], labels: Mapping[str, str | None], categories: Sequence[str],
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Per category: how many items a judge scored and the share it called good.

    `groups` maps an item id to its category; `labels` maps the ids the judge scored to good / bad (None when
    the score could not be read: counted in `n`, not in `n_scored`). Ids missing from either are left out."""
    out: dict[str, Any] = {}
    for category in categories:
        judged = [labels[i] for i, g in groups.items() if g == category and i in labels]
        scored = [label for label in judged if label is not None]
        good = sum(1 for label in scored if label == "good")
        out[category] = {"n": len(judged), "n_scored": len(scored), "n_good": good,
                         "rate": proportion(good, len(scored), confidence)}
    return out
