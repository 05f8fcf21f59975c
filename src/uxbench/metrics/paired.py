"""Paired comparisons of two systems scored on the same cases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from uxbench.metrics.proportions import finite_or_none, multinomial_resample
from uxbench.metrics.ranking import normal_test

# Below this many discordant pairs the chi-square approximation is poor; use the exact test.
EXACT_BELOW = 25


def _bools(a: Sequence[bool], b: Sequence[bool]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    if len(a) != len(b):
        raise ValueError(f"paired sequences differ in length: {len(a)} vs {len(b)}")
    return np.asarray(a, dtype=bool).reshape(-1), np.asarray(b, dtype=bool).reshape(-1)


def mcnemar(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> dict[str, Any]:
    """McNemar's test on paired per-case correctness (two-sided).

    a_only (b01) = cases only A got right, b_only (b10) = cases only B got right. With fewer than 25
    discordant pairs: exact binomial test (statistic = a_only); otherwise chi-square with continuity
    correction, (|b01 - b10| - 1)^2 / (b01 + b10), 1 degree of freedom. No discordant pair: p = 1.
    """
    from scipy.stats import binomtest, chi2  # here, not at import: scipy.stats costs every run's summary ~1 s

    a, b = _bools(a_correct, b_correct)
    a_only = int(np.sum(a & ~b))
    b_only = int(np.sum(~a & b))
    discordant = a_only + b_only
    if discordant < EXACT_BELOW:
        method = "exact binomial"
        statistic = float(a_only)
        p_value = 1.0 if discordant == 0 else float(binomtest(a_only, discordant, 0.5).pvalue)
    else:
        method = "chi-square, continuity corrected"
        statistic = (abs(a_only - b_only) - 1) ** 2 / discordant
        p_value = float(chi2.sf(statistic, 1))
    return {
        "n": int(a.shape[0]),
        "both_right": int(np.sum(a & b)),
        "both_wrong": int(np.sum(~a & ~b)),
        "a_only": a_only,
        "b_only": b_only,
        "statistic": float(statistic),
        "p_value": min(1.0, p_value),
        "method": method,
    }


def _avg_acc_diff(tables: list[NDArray[np.int64]]) -> NDArray[np.float64]:
    """Avg-Acc(A) - Avg-Acc(B) from per-class tables (..., 4) ordered (both, a only, b only, neither)."""
    parts = []
    for t in tables:
        n = t.sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.where(n > 0, (t[..., 1] - t[..., 2]) / np.where(n > 0, n, 1), np.nan))
    return np.asarray(np.mean(parts, axis=0), dtype=float)


def paired_bootstrap_diff(
    a_correct: Sequence[bool],
    b_correct: Sequence[bool],
    golds: Sequence[str],
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Avg-Acc(A) - Avg-Acc(B) on the same cases, with a paired bootstrap CI stratified by gold class.

    Each resample draws cases (with both systems' answers) within the good and the bad class, keeping
    class sizes; the interval and the p-value are one test (`metrics.ranking.normal_test`: diff +- q se, p from
    diff / se). Values are None when a gold class is empty (Avg-Acc is then undefined).
    """
    a, b = _bools(a_correct, b_correct)
    if len(golds) != a.shape[0]:
        raise ValueError(f"golds has {len(golds)} entries for {a.shape[0]} paired cases")
    bad = [g for g in golds if g not in ("good", "bad")]
    if bad:
        raise ValueError(f"gold must be 'good' or 'bad', got {bad[0]!r}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    g = np.asarray(golds)
    tables = []
    accs: dict[str, list[float]] = {"a": [], "b": []}
    for cls in ("good", "bad"):
        m = g == cls
        ac, bc = a[m], b[m]
        t = np.array([np.sum(ac & bc), np.sum(ac & ~bc), np.sum(~ac & bc), np.sum(~ac & ~bc)], dtype=np.int64)
        tables.append(t)
        if m.any():
            accs["a"].append(float(ac.mean()))
            accs["b"].append(float(bc.mean()))
    defined = all(int(t.sum()) > 0 for t in tables)
    rng = np.random.default_rng(seed)
    reps = _avg_acc_diff([multinomial_resample(t, n_boot, rng) for t in tables])
    diff = float(_avg_acc_diff(tables)) if defined else None
    test = normal_test(finite_or_none(diff), reps, confidence) if defined else \
        {"se": None, "p_value": None, "ci_low": None, "ci_high": None}
    return {
        "n": int(a.shape[0]),
        "n_good": int(tables[0].sum()),
        "n_bad": int(tables[1].sum()),
        "a_avg_acc": float(np.mean(accs["a"])) if defined else None,
        "b_avg_acc": float(np.mean(accs["b"])) if defined else None,
        "diff": finite_or_none(diff),
        **test,
        "discordance": {cls: (int(t[1] + t[2]) / int(t.sum()) if int(t.sum()) else None)
                        for cls, t in zip(("good", "bad"), tables, strict=True)},
        "method": "paired stratified bootstrap (normal interval from its standard error)",
        "n_boot": n_boot,
        "seed": seed,
        "confidence": confidence,
    }
