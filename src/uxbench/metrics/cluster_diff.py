"""The difference between two groups' means when observations come in clusters (the sessions of one task, say):
mean(group a) - mean(group b), with a cluster-bootstrap interval (clusters resampled whole, both groups with them).
Pure numpy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


def cluster_mean_difference(clusters: Sequence[str], values: Sequence[float], in_a: Sequence[bool], *,
                            n_boot: int = 2000, seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """{a, b, diff, ci_low, ci_high, n_a, n_b, n_clusters}; None where a group is empty. The interval is widened
    by sqrt(C/(C-1)) for C clusters, as the session metrics' are."""
    keys = sorted(set(clusters))
    index = {k: i for i, k in enumerate(keys)}
    c = len(keys)
    sums = np.zeros((c, 4))  # sum a, n a, sum b, n b per cluster
    for k, v, a in zip(clusters, values, in_a, strict=True):
        col = 0 if a else 2
        sums[index[k], col] += v
        sums[index[k], col + 1] += 1
    total = sums.sum(axis=0)
    out: dict[str, Any] = {"a": None, "b": None, "diff": None, "ci_low": None, "ci_high": None,
                           "n_a": int(total[1]), "n_b": int(total[3]), "n_clusters": c}
    if total[1]:
        out["a"] = round(float(total[0] / total[1]), 6)
    if total[3]:
        out["b"] = round(float(total[2] / total[3]), 6)
    if not (total[1] and total[3]):
        return out
    diff = float(total[0] / total[1] - total[2] / total[3])
    rng = np.random.default_rng(seed)
    boot = sums[rng.integers(0, c, size=(n_boot, c))].sum(axis=1)
    ok = (boot[:, 1] > 0) & (boot[:, 3] > 0)
    stats = boot[ok, 0] / boot[ok, 1] - boot[ok, 2] / boot[ok, 3]
    out["diff"] = round(diff, 6)
    if stats.size and c >= 2:
        out.update(_widened(diff, stats, c, confidence))
    return out


def within_cluster_difference(clusters: Sequence[str], values: Sequence[float], in_a: Sequence[bool], *,
                              n_boot: int = 2000, seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """The difference held within clusters: over the clusters with observations in both groups, the mean of
    (mean of a - mean of b) in each; a bootstrap over those clusters, widened by sqrt(C/(C-1)). Unlike
    `cluster_mean_difference`, a cluster whose observations all fall in one group (a task whose sessions all
    had, or all lacked, the property) cannot make the groups differ. {diff, ci_low, ci_high, n_clusters}."""
    by: dict[str, list[list[float]]] = {}
    for k, v, a in zip(clusters, values, in_a, strict=True):
        by.setdefault(k, [[], []])[0 if a else 1].append(float(v))
    diffs = np.array([np.mean(a) - np.mean(b) for a, b in (by[k] for k in sorted(by)) if a and b])
    c = int(diffs.size)
    out: dict[str, Any] = {"diff": None, "ci_low": None, "ci_high": None, "n_clusters": c}
    if not c:
        return out
    diff = float(diffs.mean())
    out["diff"] = round(diff, 6)
    if c >= 2:
        rng = np.random.default_rng(seed)
        stats = diffs[rng.integers(0, c, size=(n_boot, c))].mean(axis=1)
        out.update(_widened(diff, stats, c, confidence))
    return out


def _widened(diff: float, stats: NDArray[np.float64], c: int, confidence: float) -> dict[str, float]:
    """The bootstrap's percentile interval around `diff`, each side widened by sqrt(C/(C-1)) for C clusters."""
    alpha = (1 - confidence) / 2
    low, high = np.percentile(stats, [100 * alpha, 100 * (1 - alpha)])
    f = math.sqrt(c / (c - 1))
    return {"ci_low": round(diff - (diff - float(low)) * f, 6), "ci_high": round(diff + (float(high) - diff) * f, 6)}
