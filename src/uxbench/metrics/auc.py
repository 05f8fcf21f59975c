"""Area under the ROC curve with an interval: DeLong's variance for independent items, a cluster bootstrap when
items come in groups (the turns of one session)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm, rankdata

from uxbench.metrics.proportions import finite_or_none, percentile_interval


def auc_and_placements(pos: NDArray[np.float64], neg: NDArray[np.float64]) -> tuple[float, NDArray[np.float64],
                                                                                       NDArray[np.float64]]:
    """AUC (ties count half) and DeLong's structural components, from midranks (Sun and Xu 2014)."""
    m, n = pos.size, neg.size
    ranks = rankdata(np.concatenate([pos, neg]))
    v10 = (ranks[:m] - rankdata(pos)) / n
    v01 = 1.0 - (ranks[m:] - rankdata(neg)) / m
    return float(v10.mean()), v10, v01


def auc(
    scores: Sequence[float],
    positive: Sequence[bool],
    *,
    clusters: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """P(score of a positive > score of a negative) + half the ties, with an interval.

    Without `clusters`: DeLong's variance, normal interval clipped to [0, 1]. With `clusters` (one id per item):
    percentile bootstrap over clusters (every item of a drawn cluster comes along), since items of one cluster
    are not independent. Values are None when either class is empty."""
    if len(scores) != len(positive):
        raise ValueError(f"scores and labels differ in length: {len(scores)} vs {len(positive)}")
    s = np.asarray(scores, dtype=float)
    y = np.asarray(positive, dtype=bool)
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite numbers")
    m, n = int(y.sum()), int((~y).sum())
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n_positive": m, "n_negative": n,
                           "method": "delong" if clusters is None else "cluster bootstrap"}
    if m == 0 or n == 0:
        return out
    value, v10, v01 = auc_and_placements(s[y], s[~y])
    out["value"] = value
    if clusters is None:
        var = (v10.var(ddof=1) / m if m > 1 else 0.0) + (v01.var(ddof=1) / n if n > 1 else 0.0)
        half = float(norm.ppf(0.5 + confidence / 2)) * float(np.sqrt(var))
        out.update(ci_low=max(0.0, value - half), ci_high=min(1.0, value + half), se=float(np.sqrt(var)))
        return out
    if len(clusters) != len(s):
        raise ValueError(f"clusters has {len(clusters)} ids for {len(s)} scores")
    ids, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    members = [np.flatnonzero(inverse == c) for c in range(ids.size)]
    rng = np.random.default_rng(seed)
    reps = np.full(n_boot, np.nan)
    for b in range(n_boot):
        idx = np.concatenate([members[c] for c in rng.integers(0, ids.size, size=ids.size)])
        yb = y[idx]
        if yb.all() or not yb.any():
            continue
        reps[b] = auc_and_placements(s[idx][yb], s[idx][~yb])[0]
    low, high = percentile_interval(reps, confidence)
    out.update(ci_low=finite_or_none(low), ci_high=finite_or_none(high), n_clusters=int(ids.size),
               n_boot=n_boot, seed=seed)
    return out
