"""Calibration of probability judges: expected calibration error with its bins, Brier score, reliability table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def calibration(outcomes: Sequence[bool], probabilities: Sequence[float], *, n_bins: int = 10) -> dict[str, Any]:
    """ECE over `n_bins` equal-width bins of p(good), Brier score, and the reliability table.

    `outcomes[i]` is True when the gold label is good. ECE = sum_b (n_b / n) * |mean p_b - good rate_b|; a bin
    holds p in [lo, hi) (the last one includes 1.0). Empty bins are listed with n = 0.
    """
    if len(outcomes) != len(probabilities):
        raise ValueError("outcomes and probabilities differ in length")
    n = len(outcomes)
    if n == 0:
        return {"n": 0, "ece": None, "brier": None, "n_bins": n_bins, "bins": []}
    y = np.asarray(outcomes, dtype=float)
    p = np.clip(np.asarray(probabilities, dtype=float), 0.0, 1.0)
    which = np.minimum((p * n_bins).astype(int), n_bins - 1)
    bins: list[dict[str, Any]] = []
    ece = 0.0
    for b in range(n_bins):
        mask = which == b
        count = int(mask.sum())
        row: dict[str, Any] = {"lo": b / n_bins, "hi": (b + 1) / n_bins, "n": count,
                               "mean_p": None, "good_rate": None, "gap": None}
        if count:
            mean_p, rate = float(p[mask].mean()), float(y[mask].mean())
            row.update(mean_p=mean_p, good_rate=rate, gap=rate - mean_p)
            ece += count / n * abs(rate - mean_p)
        bins.append(row)
    return {"n": n, "ece": ece, "brier": float(np.mean((p - y) ** 2)), "n_bins": n_bins, "bins": bins}
