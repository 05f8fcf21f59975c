"""Binomial proportions with Wilson intervals, and a vectorised percentile bootstrap."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from uxbench.metrics import normal

DEFAULT_N_BOOT = 2000
"""Bootstrap rounds of every interval by default: the CLI, the web view and the site use this one number (and seed
0), so the same comparison shows the same interval everywhere."""

# Resample index matrices are built in chunks of at most this many elements (int64: 16 MB),
# so 100k cases x 2000 rounds never allocates the full 2e8-element matrix.
MAX_RESAMPLE_ELEMENTS = 2_000_000


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return normal.ppf(1.0 - (1.0 - confidence) / 2.0)


def wilson_ci(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes out of n (k may be fractional: a pairwise tie counts half; n too: an
    effective sample size).

    n == 0 returns (0.0, 1.0): with no observations every rate is possible, and a finite pair keeps
    the result JSON-safe (callers report the value itself as None).
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = _z(confidence)
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # Exact bounds at the edges: rounding can otherwise leave 1e-17 instead of 0.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


def wilson_mean_ci(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95) -> tuple[float, float]:
    """CI for the mean of two independent proportions, (k1/n1 + k2/n2) / 2, from their Wilson intervals.

    MOVER (method of variance estimates recovery, Zou & Donner 2008): unlike a percentile bootstrap it
    stays honest for tiny groups (one case per class gives a wide interval, not a single point).
    Both n must be > 0.
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError("wilson_mean_ci needs cases in both groups")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_ci(k1, n1, confidence)
    l2, u2 = wilson_ci(k2, n2, confidence)
    total = p1 + p2
    low = total - math.sqrt((p1 - l1) ** 2 + (p2 - l2) ** 2)
    high = total + math.sqrt((u1 - p1) ** 2 + (u2 - p2) ** 2)
    return (max(0.0, low / 2), min(1.0, high / 2))


@dataclass(frozen=True)
class Proportion:
    """k out of n with its Wilson interval; `value` is None when n == 0."""

    value: float | None
    k: int
    n: int
    ci_low: float
    ci_high: float
    method: str = "wilson"

    @classmethod
    def of(cls, k: int, n: int, confidence: float = 0.95) -> Proportion:
        low, high = wilson_ci(k, n, confidence)
        return cls(value=(k / n if n else None), k=int(k), n=int(n), ci_low=low, ci_high=high)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def proportion(k: int, n: int, confidence: float = 0.95) -> dict[str, Any]:
    """`Proportion.of(k, n).as_dict()`: {value, k, n, ci_low, ci_high, method}."""
    return Proportion.of(k, n, confidence).as_dict()


def percentile_interval(stats: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates, ignoring NaN ones (undefined resamples).

    Returns (nan, nan) when every replicate is NaN.
    """
    _z(confidence)
    arr = np.asarray(stats, dtype=float).ravel()
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return (math.nan, math.nan)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(arr, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return (float(low), float(high))


def bootstrap_ci(
    stat_fn: Callable[[NDArray[Any]], ArrayLike],
    data: ArrayLike,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    *,
    vectorized: bool = True,
) -> tuple[float, float]:
    """Percentile bootstrap interval of `stat_fn` over cases (the first axis of `data`).

    vectorized=True: `stat_fn` gets a batch of resamples, shape (b, n, *rest), and must return b values
    (e.g. `lambda s: s.mean(axis=1)`). vectorized=False: it gets one resample, shape (n, *rest), and returns
    one value. The same seed gives the same interval. Replicates that come out NaN are ignored.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    arr = np.asarray(data)
    if arr.ndim == 0 or arr.shape[0] == 0:
        raise ValueError("bootstrap_ci needs at least one case")
    n = arr.shape[0]
    rng = np.random.default_rng(seed)
    stats = np.empty(n_boot, dtype=float)
    chunk = max(1, MAX_RESAMPLE_ELEMENTS // n)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = rng.integers(0, n, size=(b, n))
        sample = arr[idx]
        if vectorized:
            out = np.asarray(stat_fn(sample), dtype=float).reshape(-1)
            if out.shape[0] != b:
                raise ValueError(f"vectorised stat_fn returned {out.shape[0]} values for {b} resamples")
        else:
            out = np.fromiter((float(np.asarray(stat_fn(s))) for s in sample), dtype=float, count=b)
        stats[start : start + b] = out
    return percentile_interval(stats, confidence)


def multinomial_resample(counts: ArrayLike, n_boot: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Bootstrap replicates of a category table: shape (n_boot, len(counts)).

    Resampling n cases with replacement and tallying their categories is exactly a multinomial draw
    with the observed shares, so this equals the index bootstrap in distribution at O(n_boot) cost.
    """
    c = np.asarray(counts, dtype=np.int64)
    total = int(c.sum())
    if total == 0:
        return np.zeros((n_boot, c.shape[0]), dtype=np.int64)
    return rng.multinomial(total, c / total, size=n_boot).astype(np.int64)


def finite_or_none(x: float | np.floating[Any] | None) -> float | None:
    """A JSON-safe float: NaN and infinities become None."""
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else None
