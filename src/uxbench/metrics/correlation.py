"""Rank and linear correlation with intervals: many points (length bias) and few points (scaling trends)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm, pearsonr, rankdata, spearmanr

from uxbench.metrics.proportions import finite_or_none, percentile_interval

Method = Literal["spearman", "pearson"]


def _pair(x: Sequence[float], y: Sequence[float]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} vs {len(y)}")
    xa, ya = np.asarray(x, dtype=float).reshape(-1), np.asarray(y, dtype=float).reshape(-1)
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise ValueError("x and y must be finite numbers")
    return xa, ya


def _constant(values: NDArray[np.float64]) -> bool:
    return values.size == 0 or bool(np.all(values == values[0]))


def correlation(
    x: Sequence[float], y: Sequence[float], *, method: Method = "spearman", confidence: float = 0.95
) -> dict[str, Any]:
    """Spearman's rho or Pearson's r with a Fisher-z interval and the p-value of the same test.

    The interval uses se = 1/sqrt(n - 3) for Pearson and sqrt(1.06 / (n - 3)) for Spearman (Fieller,
    Hartley and Pearson 1957); it needs n >= 4, and p = 2 (1 - Phi(|atanh r| / se)) then comes from the same z,
    so the interval excludes 0 exactly when p < 1 - confidence. With 3 points there is no interval and p is
    scipy's. Values are None when either variable is constant.
    """
    xa, ya = _pair(x, y)
    n = int(xa.size)
    out: dict[str, Any] = {"method": method, "n": n, "value": None, "ci_low": None, "ci_high": None,
                           "p_value": None, "interval": "fisher z", "test": "fisher z"}
    if n < 3 or _constant(xa) or _constant(ya):
        return out
    result = spearmanr(xa, ya) if method == "spearman" else pearsonr(xa, ya)
    r = float(result.statistic)
    out.update(value=finite_or_none(r), p_value=finite_or_none(float(result.pvalue)))
    if n >= 4 and abs(r) < 1.0:
        se = math.sqrt((1.06 if method == "spearman" else 1.0) / (n - 3))
        z, half = math.atanh(r), float(norm.ppf(0.5 + confidence / 2)) * se
        out.update(ci_low=math.tanh(z - half), ci_high=math.tanh(z + half), p_value=float(2 * norm.sf(abs(z) / se)))
    elif abs(r) == 1.0:
        out.update(ci_low=r, ci_high=r, p_value=0.0 if n >= 4 else out["p_value"])
    return out


def _rank_corr(rx: NDArray[np.float64], ry: NDArray[np.float64]) -> NDArray[np.float64]:
    """Pearson correlation of rank rows (..., n): Spearman's rho when the rows are ranks; NaN if constant."""
    dx = rx - rx.mean(axis=-1, keepdims=True)
    dy = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(den > 0, (dx * dy).sum(axis=-1) / np.where(den > 0, den, 1), np.nan), dtype=float)


MIN_TREND_POINTS = 5
"""Fewer models than this give no scaling trend: a rank correlation over 3 or 4 points is not estimable (with 3,
every order is 1 of 6 and no p-value can fall below 1/3)."""


def trend(
    x: Sequence[float],
    y: Sequence[float],
    *,
    confidence: float = 0.95,
    min_points: int = MIN_TREND_POINTS,
) -> dict[str, Any]:
    """Spearman's rho between a model property (release date, size) and a metric, over a few models.

    One test gives the interval, the p-value and `significant`, so they never disagree: Fisher's z of rho with
    Bonett and Wright's (2000) variance for Spearman, (1 + rho^2 / 2) / (n - 3); the interval is tanh(z +- q se)
    and p = 2 (1 - Phi(|z| / se)), so the interval excludes 0 exactly when p < 1 - confidence. A perfect rank
    agreement (|rho| = 1, where z is infinite) is tested as if it were halfway to the next value ranks can give,
    1 - 6 / (n (n^2 - 1)) (a continuity correction: n = 5 gives p 0.032, the exact permutation test 0.017).
    Fewer than `min_points` models, or a constant variable: not estimable (every figure None, `reason` says why).
    """
    xa, ya = _pair(x, y)
    n = int(xa.size)
    alpha = 1.0 - confidence
    out: dict[str, Any] = {"n": n, "rho": None, "p_value": None, "ci_low": None, "ci_high": None,
                           "significant": None, "estimable": False, "reason": None, "alpha": alpha,
                           "method": "Fisher z of Spearman's rho, Bonett-Wright variance", "min_points": min_points}
    if n < min_points:
        out["reason"] = f"{n} model{'s' if n != 1 else ''}; a trend needs {min_points}"
        return out
    if _constant(xa) or _constant(ya):
        out["reason"] = f"every model has the same {'value' if _constant(ya) else 'x'}"
        return out
    rho = float(_rank_corr(rankdata(xa), rankdata(ya)))
    tested = rho if abs(rho) < 1.0 else math.copysign(1.0 - 6.0 / (n * (n * n - 1)), rho)
    z = math.atanh(tested)
    se = math.sqrt((1.0 + tested * tested / 2.0) / (n - 3))
    half = float(norm.ppf(1.0 - alpha / 2.0)) * se
    low, high = math.tanh(z - half), math.tanh(z + half)
    if abs(rho) == 1.0:  # the interval reaches the observed value
        low, high = (low, 1.0) if rho > 0 else (-1.0, high)
    p = float(2.0 * norm.sf(abs(z) / se))
    out.update(rho=rho, p_value=min(1.0, p), ci_low=low, ci_high=high, significant=bool(p < alpha),
               estimable=True, se_z=se)
    return out


def kendall_tau_b(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Kendall's tau-b of each row pair of x and y, shape (..., n) -> (...): (concordant - discordant) /
    sqrt((pairs - ties in x) (pairs - ties in y)); NaN when either row is constant."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    pairs = i.size
    den = np.sqrt((pairs - np.sum(sx == 0, axis=-1)) * (pairs - np.sum(sy == 0, axis=-1)).astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(den > 0, np.sum(sx * sy, axis=-1) / np.where(den > 0, den, 1), np.nan),
                          dtype=float)


def leaderboard_agreement(
    a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], *, n_boot: int = 2000, seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Kendall's tau-b between two judges' leaderboards of the same runs, with a bootstrap interval over cases.

    `a[r][c]` / `b[r][c]`: judge A's / B's verdict (1 good, 0 not; NaN where it gave none) on run r's reply to
    case c (the same case order in every run). Each leaderboard ranks the runs by their mean verdict; a resample
    draws cases with replacement and recomputes both leaderboards. Needs 3 runs or more."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 2:
        raise ValueError(f"the two judges' verdicts must be (runs, cases) arrays of one shape: {xa.shape}, {xb.shape}")
    runs, cases = xa.shape
    out: dict[str, Any] = {"n_runs": int(runs), "n_cases": int(cases), "tau": None, "ci_low": None, "ci_high": None,
                           "method": "Kendall tau-b, percentile bootstrap over cases", "n_boot": n_boot, "seed": seed}
    if runs < 3 or cases == 0:
        return out
    ok_a, ok_b = np.isfinite(xa), np.isfinite(xb)
    va, vb = np.where(ok_a, xa, 0.0), np.where(ok_b, xb, 0.0)

    def rates(values: NDArray[np.float64], ok: NDArray[np.bool_], weights: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray((weights @ values.T) / (weights @ ok.T.astype(float)), dtype=float)

    ones = np.ones((1, cases))
    point = kendall_tau_b(rates(va, ok_a, ones), rates(vb, ok_b, ones))[0]
    out["tau"] = finite_or_none(float(point))
    if out["tau"] is None:
        return out
    rng = np.random.default_rng(seed)
    taus = np.empty(n_boot)
    chunk = max(1, 2_000_000 // cases)
    for start in range(0, n_boot, chunk):
        rounds = min(chunk, n_boot - start)
        weights = np.zeros((rounds, cases))
        np.add.at(weights, (np.repeat(np.arange(rounds), cases), rng.integers(0, cases, size=rounds * cases)), 1.0)
        taus[start:start + rounds] = kendall_tau_b(rates(va, ok_a, weights), rates(vb, ok_b, weights))
    low, high = percentile_interval(taus, confidence)
    out.update(ci_low=finite_or_none(low), ci_high=finite_or_none(high))
    return out
