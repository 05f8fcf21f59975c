"""How often a graded judge cannot tell a liked reply from a disliked one: over every (liked, disliked) pair of
cases, the share scored identically, and the shares where the liked or the disliked one scored higher.

The published ablation found 60% of pairs tied under independent 1-4 scoring: a score that ties that often cannot
rank replies, whatever its accuracy after thresholding. Interval: bootstrap of cases within each class (a
multinomial draw over the score values of each class, which equals resampling the cases)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from uxbench.metrics.proportions import finite_or_none, multinomial_resample, percentile_interval


def _shares(good: NDArray[np.int64], bad: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(tie share, liked-higher share) of count tables shaped (..., values), values in ascending order."""
    g, b = good.astype(float), bad.astype(float)
    pairs = g.sum(axis=-1) * b.sum(axis=-1)
    below = np.cumsum(b, axis=-1) - b  # disliked cases scored strictly lower than each value
    with np.errstate(divide="ignore", invalid="ignore"):
        tie = (g * b).sum(axis=-1) / pairs
        higher = (g * below).sum(axis=-1) / pairs
    return np.asarray(tie, dtype=float), np.asarray(higher, dtype=float)


def pair_ties(
    good_scores: Sequence[float], bad_scores: Sequence[float], *, n_boot: int = 2000, seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Tie share, liked-higher and disliked-higher shares over all liked x disliked pairs, with intervals."""
    values = sorted(set(good_scores) | set(bad_scores))
    index = {v: i for i, v in enumerate(values)}
    good = np.zeros(len(values), dtype=np.int64)
    bad = np.zeros(len(values), dtype=np.int64)
    for v in good_scores:
        good[index[v]] += 1
    for v in bad_scores:
        bad[index[v]] += 1
    out: dict[str, Any] = {"n_liked": len(good_scores), "n_disliked": len(bad_scores),
                           "n_pairs": len(good_scores) * len(bad_scores), "distinct_scores": len(values),
                           "tie_share": None, "liked_higher": None, "disliked_higher": None,
                           "interval": f"bootstrap of cases within each class ({n_boot} rounds)"}
    if not good_scores or not bad_scores:
        return out
    tie, higher = _shares(good, bad)
    rng = np.random.default_rng(seed)
    tie_b, higher_b = _shares(multinomial_resample(good, n_boot, rng), multinomial_resample(bad, n_boot, rng))

    def entry(value: float, reps: NDArray[np.float64]) -> dict[str, float | None]:
        low, high = percentile_interval(reps, confidence)
        return {"value": float(value), "ci_low": finite_or_none(low), "ci_high": finite_or_none(high)}

    out.update(tie_share=entry(float(tie), tie_b), liked_higher=entry(float(higher), higher_b),
               disliked_higher=entry(1.0 - float(tie) - float(higher), 1.0 - tie_b - higher_b))
    return out
