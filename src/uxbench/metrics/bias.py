"""Judge biases: length (correlation of score with reply length, length-controlled Good%) and self-preference
(Good% of every judge x candidate model).

Length-controlled Good%, in the spirit of AlpacaEval's LC win rate: one logistic regression per judge over the
replies of every candidate, good ~ alpha[candidate] + beta * z, where z is the standardised log length,
z = (log(1 + chars) - mean) / sd over all replies. beta is the judge's length preference, estimated from the
variation of length within each candidate (the candidate intercepts absorb everything else). A candidate's
LC Good% is the fitted probability at the reference length (the median length over all replies):
sigmoid(alpha[candidate] + beta * z_ref), i.e. how often the judge would call its replies good had they been
of typical length. beta has a weak normal prior (`ridge`) so that small samples where length separates good
from bad still give a finite fit. Intervals: percentile bootstrap, replies resampled within each candidate,
model refitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from uxbench.metrics.correlation import Method, correlation
from uxbench.metrics.proportions import finite_or_none, percentile_interval, proportion

_SEPARATED = 40.0
"""Intercept of a candidate whose replies are all good (+) or all bad (-): the likelihood has no finite
maximum there, and sigmoid(40) is 1 to double precision."""
_BOOT_CHUNK = 64


def length_correlation(
    lengths: Sequence[float], scores: Sequence[float], *, method: Method = "spearman", confidence: float = 0.95
) -> dict[str, Any]:
    """Correlation of a judge's score (p(good), or 1/0 for good/bad) with reply length in characters."""
    return correlation(lengths, scores, method=method, confidence=confidence)


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * x)), dtype=float)


def _group_sums(values: NDArray[np.float64], starts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Sums over each group's contiguous slice of the last axis."""
    return np.asarray(np.add.reduceat(values, starts, axis=-1), dtype=float)


def _fit(
    z: NDArray[np.float64], starts: NDArray[np.int64], sizes: NDArray[np.int64],
    good: NDArray[np.float64], bad: NDArray[np.float64], alpha0: NDArray[np.float64] | None = None,
    beta0: float = 0.0, ridge: float = 0.0, iterations: int = 50, tol: float = 1e-10,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Maximum-likelihood (alpha per group, beta) of logistic regressions, one per row of `good` / `bad`.

    Data come as cells (replies of one group with one length), sorted by group (`starts`, `sizes` count
    cells): `good[r, c]` / `bad[r, c]` are the weights of good / bad replies in cell c for replicate r.
    Newton steps solve the (k+1)-parameter system through its arrow structure (diagonal in alpha, one
    column for beta), so a step costs O(cells) per replicate. A group whose replies are all good (all bad)
    gets alpha = +40 (-40) and drops out of the fit; beta stays at its start when no group has length
    variation. `ridge` adds -ridge * beta^2 / 2 to the log-likelihood (a normal prior on beta). Returns
    alpha (r, k), beta (r,) and whether beta is identified (r,)."""
    k = starts.shape[0]
    gid = np.repeat(np.arange(k), sizes)
    n_good, n_bad = _group_sums(good, starts), _group_sums(bad, starts)
    sep = (n_good <= 0) | (n_bad <= 0)
    if alpha0 is None:
        rate = np.clip(n_good / np.maximum(n_good + n_bad, 1e-300), 1e-6, 1 - 1e-6)
        alpha0 = np.log(rate / (1 - rate))
    alpha = np.where(sep, np.where(n_good > 0, _SEPARATED, -_SEPARATED), alpha0)
    beta = np.full(good.shape[0], beta0)
    total = good + bad
    identified = np.ones(good.shape[0], dtype=bool)
    for _ in range(iterations):
        p = _sigmoid(alpha[:, gid] + beta[:, None] * z[None, :])
        r = good - total * p
        s = total * p * (1 - p)
        ga, gb = _group_sums(r, starts), (r * z).sum(axis=1) - ridge * beta
        d, c, h = _group_sums(s, starts), _group_sums(s * z, starts), (s * z * z).sum(axis=1)
        d_safe = np.where(sep | (d <= 0), 1.0, d)
        ga, c = np.where(sep, 0.0, ga), np.where(sep, 0.0, c)
        # separated groups have p = 1 or 0 to double precision, so their replies add nothing to gb and h
        schur = h - (c * c / d_safe).sum(axis=1)  # the data's information on beta, given the alphas
        identified = schur > 1e-9 * np.maximum(h, 1e-300)
        db = np.where(identified, (gb - (c * ga / d_safe).sum(axis=1)) / np.where(identified, schur + ridge, 1.0),
                      0.0)
        da = np.where(sep, 0.0, (ga - c * db[:, None]) / d_safe)
        alpha, beta = alpha + da, beta + db
        if max(float(np.abs(da).max(initial=0.0)), float(np.abs(db).max(initial=0.0))) < tol:
            break
    return alpha, beta, identified


def _cells(
    groups: list[tuple[NDArray[np.float64], NDArray[np.bool_]]], grid: float
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Replies pooled into cells of one group and (nearly) one log length: the likelihood only depends on
    each cell's good and bad counts. Cells are `grid` wide in log(1 + chars) (0.01: lengths within 1 %) and
    sit at the mean log length of their replies, so replies of equal length are fitted exactly."""
    zs, sizes, goods, bads = [], [], [], []
    for logs, y in groups:
        keys = np.round(logs / grid).astype(np.int64)
        uniq, inverse = np.unique(keys, return_inverse=True)
        count = np.bincount(inverse, minlength=uniq.size).astype(float)
        zs.append(np.bincount(inverse, weights=logs, minlength=uniq.size) / count)
        goods.append(np.bincount(inverse, weights=y.astype(float), minlength=uniq.size))
        bads.append(count - goods[-1])
        sizes.append(uniq.size)
    return np.concatenate(zs), np.asarray(sizes, dtype=np.int64), np.concatenate(goods), np.concatenate(bads)


def length_controlled_rates(
    groups: Mapping[str, tuple[Sequence[float], Sequence[bool]]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    grid: float = 0.01,
    ridge: float = 1.0,
) -> dict[str, Any]:
    """Length-controlled Good% of every group (candidate model) judged by one judge; see the module docstring.

    `groups[name] = (lengths in characters, good flags)` over the replies the judge scored. Returns
    {reference_chars, beta (log-odds per SD of log length) with CI, odds_ratio_per_sd, groups: {name: {n,
    raw (Wilson), lc {value, ci_low, ci_high}, median_chars}}}. `grid`: cell width in log length (see `_cells`).

    `ridge`: a normal prior N(0, 1/ridge) on beta (per SD of log length). When length separates good from bad
    replies (common in small samples) the likelihood grows without end as beta does; the prior keeps the fit
    finite. Its pull equals that of a handful of replies, negligible at benchmark sizes (thousands); 0 gives
    the plain maximum-likelihood fit.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    out: dict[str, Any] = {"reference_chars": None, "beta": None, "odds_ratio_per_sd": None, "groups": {},
                           "n_boot": n_boot, "seed": seed, "ridge": ridge,
                           "method": "logistic: good ~ candidate + z(log length)"}
    for name, (lens, goods) in groups.items():
        if len(lens) != len(goods):
            raise ValueError(f"group {name!r}: {len(lens)} lengths for {len(goods)} labels")
        if any(x < 0 for x in lens):
            raise ValueError(f"group {name!r}: reply lengths must be >= 0")
        out["groups"][name] = {"n": len(lens), "raw": proportion(sum(map(bool, goods)), len(lens), confidence),
                               "median_chars": float(np.median(lens)) if len(lens) else None,
                               "lc": {"value": None, "ci_low": None, "ci_high": None}}
    names = [name for name, (lens, _) in groups.items() if len(lens)]
    if not names:
        return out
    data = [(np.log1p(np.asarray(groups[g][0], dtype=float)), np.asarray(groups[g][1], dtype=bool)) for g in names]
    logs = np.concatenate([d[0] for d in data])
    mean, sd = float(logs.mean()), float(logs.std())
    reference = float(np.median(np.concatenate([np.asarray(groups[g][0], dtype=float) for g in names])))
    z_ref = (np.log1p(reference) - mean) / sd if sd > 0 else 0.0
    cell_logs, sizes, good, bad = _cells(data, grid)
    z = (cell_logs - mean) / sd if sd > 0 else np.zeros_like(cell_logs)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    alpha, beta, identified = _fit(z, starts, sizes, good[None, :], bad[None, :], ridge=ridge)
    lc = _sigmoid(alpha[0] + beta[0] * z_ref)

    # Bootstrap: resample each group's replies = a multinomial draw over its (cell, good/bad) categories.
    rng = np.random.default_rng(seed)
    boot_lc = np.empty((n_boot, len(names)))
    boot_beta = np.empty(n_boot)
    bounds = np.concatenate([starts, [z.size]])
    for first in range(0, n_boot, _BOOT_CHUNK):
        m = min(_BOOT_CHUNK, n_boot - first)
        g_rep, b_rep = np.empty((m, z.size)), np.empty((m, z.size))
        for j in range(len(names)):
            lo, hi = bounds[j], bounds[j + 1]
            counts = np.concatenate([good[lo:hi], bad[lo:hi]])
            draw = rng.multinomial(int(counts.sum()), counts / counts.sum(), size=m)
            g_rep[:, lo:hi], b_rep[:, lo:hi] = draw[:, : hi - lo], draw[:, hi - lo :]
        a_b, b_b, ok = _fit(z, starts, sizes, g_rep, b_rep, alpha0=alpha[0], beta0=float(beta[0]), ridge=ridge)
        boot_lc[first:first + m] = _sigmoid(a_b + b_b[:, None] * z_ref)
        boot_beta[first:first + m] = np.where(ok, b_b, np.nan)
    for j, name in enumerate(names):
        low, high = percentile_interval(boot_lc[:, j], confidence)
        out["groups"][name]["lc"] = {"value": float(lc[j]), "ci_low": finite_or_none(low),
                                     "ci_high": finite_or_none(high)}
    if bool(identified[0]):
        low, high = percentile_interval(boot_beta, confidence)
        out["beta"] = {"value": float(beta[0]), "ci_low": finite_or_none(low), "ci_high": finite_or_none(high)}
        out["odds_ratio_per_sd"] = float(np.exp(beta[0]))
    out["reference_chars"] = reference
    return out


def self_preference_matrix(
    rows: Iterable[tuple[str, str, str | None]], *, confidence: float = 0.95
) -> dict[str, Any]:
    """Good% (of scored replies) for every judge x candidate, from (judge, candidate, label) rows.

    A label None (unscorable, unreadable) is counted in the cell's `n_unscored` and left out of the rate.
    Returns {judges, candidates (first-seen order), cells: {judge: {candidate: {rate (Wilson), n_unscored}}}}.
    """
    counts: dict[str, dict[str, list[int]]] = {}
    judges: list[str] = []
    candidates: list[str] = []
    for judge, candidate, label in rows:
        if judge not in counts:
            counts[judge] = {}
            judges.append(judge)
        if candidate not in candidates:
            candidates.append(candidate)
        cell = counts[judge].setdefault(candidate, [0, 0, 0])  # good, scored, unscored
        if label is None:
            cell[2] += 1
        else:
            cell[0] += label == "good"
            cell[1] += 1
    cells = {
        judge: {cand: {"rate": proportion(g, n, confidence), "n_unscored": u}
                for cand, (g, n, u) in by_cand.items()}
        for judge, by_cand in counts.items()
    }
    return {"judges": judges, "candidates": candidates, "cells": cells}
