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


def _fleiss(counts: NDArray[np.float64], m: int) -> NDArray[np.float64]:
    """Fleiss' kappa of count tables shaped (..., items, categories); NaN where P_e = 1."""
    p_i = ((counts**2).sum(axis=-1) - m) / (m * (m - 1))
    p_bar = p_i.mean(axis=-1)
    p_j = counts.sum(axis=-2) / (counts.shape[-2] * m)
    p_e = (p_j**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(p_e < 1.0, (p_bar - p_e) / (1.0 - p_e), np.nan), dtype=float)


def fleiss_kappa(
    items: Sequence[Sequence[str | None]], *, n_boot: int = 0, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Fleiss' kappa of several raters on the same items: `items[i]` holds every rater's label of item i.

    Items where any label is None (a rater skipped it) are left out and counted in `n_missing`, so every
    item kept has the same number of raters m (Fleiss' assumption). With n_ij the raters who gave item i
    category j: P_i = (sum_j n_ij^2 - m) / (m (m - 1)), P_bar = mean P_i, p_j = sum_i n_ij / (N m),
    P_e = sum_j p_j^2, kappa = (P_bar - P_e) / (1 - P_e); None when P_e = 1 (one label throughout) or fewer
    than two raters or no complete item. With `n_boot` > 0, a percentile bootstrap over items gives
    `ci_low` / `ci_high`.
    """
    complete = [list(row) for row in items if row and all(x is not None for x in row)]
    sizes = {len(row) for row in complete}
    if len(sizes) > 1:
        raise ValueError(f"every item needs the same number of raters, got {sorted(sizes)}")
    m = sizes.pop() if sizes else 0
    categories = sorted({str(x) for row in complete for x in row})
    out: dict[str, Any] = {"n_items": len(complete), "n_missing": len(items) - len(complete), "n_raters": m,
                           "categories": categories, "p_bar": None, "p_expected": None, "kappa": None}
    if n_boot > 0:
        out.update(ci_low=None, ci_high=None, n_boot=n_boot, seed=seed)
    if not complete or m < 2:
        return out
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(complete), len(categories)), dtype=float)
    for i, row in enumerate(complete):
        for x in row:
            counts[i, index[str(x)]] += 1
    p_i = ((counts ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = float(p_i.mean())
    p_j = counts.sum(axis=0) / (len(complete) * m)
    p_e = float((p_j ** 2).sum())
    kappa = (p_bar - p_e) / (1.0 - p_e) if p_e < 1.0 else None
    out.update(p_bar=p_bar, p_expected=p_e, kappa=kappa)
    if n_boot > 0 and kappa is not None:
        rng = np.random.default_rng(seed)
        chunk = max(1, 2_000_000 // counts.size)
        reps = np.concatenate([_fleiss(counts[rng.integers(0, len(complete), size=(min(chunk, n_boot - s),
                                                                                    len(complete)))], m)
                               for s in range(0, n_boot, chunk)])
        low, high = percentile_interval(reps, confidence)
        out.update(ci_low=finite_or_none(low), ci_high=finite_or_none(high))
    return out
