"""Agreement between two raters (judges) on the same items: raw agreement and Cohen's kappa, with CIs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from uxbench.metrics.proportions import finite_or_none, multinomial_resample, percentile_interval, proportion


def _kappa(tables: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(kappa, p_expected) of confusion tables shaped (..., k, k); kappa is NaN where p_expected = 1."""
    t = tables.astype(float)
    n = t.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.trace(t, axis1=-2, axis2=-1) / n
        expected = (t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1) / (n * n)
        kappa = np.where(expected < 1.0, (observed - expected) / (1.0 - expected), np.nan)
    return np.asarray(kappa, dtype=float), np.asarray(expected, dtype=float)


def cohen_kappa(
    a: Sequence[str | None],
    b: Sequence[str | None],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Raw agreement and Cohen's kappa of two raters' labels on the same items.

    Items where either label is None (unscorable, unreadable) are left out and counted in `n_missing`.
    kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the agreement expected from
    each rater's own label shares; None when p_e = 1 (both raters gave one and the same label throughout).
    Agreement gets a Wilson interval; kappa a percentile bootstrap over items (multinomial draws of the
    confusion table, which equals resampling items).
    """
    if len(a) != len(b):
        raise ValueError(f"the two raters' label lists differ in length: {len(a)} vs {len(b)}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    categories = sorted({x for x, _ in pairs} | {y for _, y in pairs})
    index = {c: i for i, c in enumerate(categories)}
    k = max(1, len(categories))
    table = np.zeros((k, k), dtype=np.int64)
    for x, y in pairs:
        table[index[x], index[y]] += 1
    n = len(pairs)
    out: dict[str, Any] = {
        "n": n,
        "n_missing": len(a) - n,
        "categories": categories,
        "table": table.tolist() if categories else [],
        "agreement": proportion(int(np.trace(table)), n, confidence),
        "p_expected": None,
        "kappa": {"value": None, "ci_low": None, "ci_high": None, "method": "percentile bootstrap"},
        "n_boot": n_boot,
        "seed": seed,
    }
    if n == 0:
        return out
    kappa, expected = _kappa(table)
    reps, _ = _kappa(multinomial_resample(table.ravel(), n_boot, np.random.default_rng(seed)).reshape(-1, k, k))
    low, high = percentile_interval(reps, confidence)
    value = finite_or_none(float(kappa))
    out["p_expected"] = float(expected)
    out["kappa"].update(value=value, ci_low=finite_or_none(low) if value is not None else None,
                        ci_high=finite_or_none(high) if value is not None else None)
    return out
