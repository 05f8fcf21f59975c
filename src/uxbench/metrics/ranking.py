"""Ranks with honest ties, in the spirit of the Chatbot Arena leaderboard: a system's rank is 1 + the number of
systems significantly better than it. Every pair is compared by a paired bootstrap of the difference on the cases
both scored; its two-sided p-value and its interval both come from the bootstrap's standard error (normal
approximation, so Holm's small thresholds are resolved whatever the number of rounds, and the interval excludes 0
exactly when p < alpha), and significance is decided by Holm's step-down adjustment over all the pairs of one
table at level alpha (family-wise error below alpha; it only raises p, so a significant pair's interval never
holds 0)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from uxbench.metrics import normal
from uxbench.metrics.proportions import multinomial_resample

PAIRED_METHOD = "paired bootstrap (normal interval from its standard error)"
RANK_RULE = ("rank = 1 + the number of entries significantly better (paired bootstrap of the difference on the "
             "shared cases, two-sided, Holm-adjusted over every pair of the table, alpha {alpha:g})")


def bootstrap_test(diff: float | None, replicates: ArrayLike) -> dict[str, float | None]:
    """{se, p_value} of a difference from its bootstrap replicates: se = their standard deviation, p = 2 (1 -
    Phi(|diff| / se)). A difference of 0 with se 0 (the systems never disagree) has p = 1."""
    reps = np.asarray(replicates, dtype=float).ravel()
    reps = reps[~np.isnan(reps)]
    if diff is None or reps.size < 2:
        return {"se": None, "p_value": None}
    se = float(np.std(reps, ddof=1))
    if se == 0.0:
        return {"se": 0.0, "p_value": 1.0 if diff == 0 else 0.0}
    return {"se": se, "p_value": 2 * normal.sf(abs(diff) / se)}


def normal_test(diff: float | None, replicates: ArrayLike, confidence: float = 0.95,
                bounds: tuple[float, float] = (-1.0, 1.0)) -> dict[str, float | None]:
    """{se, p_value, ci_low, ci_high} of a difference, all from one test: the normal approximation with the
    bootstrap's standard error (`bootstrap_test`), the interval diff +- q se (clipped to `bounds`, the range a
    difference of rates can take). So the interval excludes 0 exactly when p < 1 - confidence, and a verdict read
    from either is the same (a percentile interval and this p could disagree at its edge)."""
    test = bootstrap_test(diff, replicates)
    se = test["se"]
    if diff is None or se is None:
        return {**test, "ci_low": None, "ci_high": None}
    half = normal.ppf(0.5 + confidence / 2) * se
    return {**test, "ci_low": max(bounds[0], diff - half), "ci_high": min(bounds[1], diff + half)}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (monotone, capped at 1), in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def significance_ranks(values: Sequence[float | None], tests: Mapping[tuple[int, int], dict[str, Any]], *,
                       alpha: float = 0.05) -> dict[str, Any]:
    """Ranks of entries from their pairwise tests.

    `values[i]`: entry i's figure (None: not ranked); `tests[(i, j)]`: {diff (value i - value j), p_value} for the
    pairs that could be compared (shared cases). Returns {ranks (1 + entries significantly better; None for an
    unranked entry), ties (per entry: the entries it is not significantly different from, or not comparable
    with), better_than (per entry: those it beats), pairs ({(i, j): {p_adjusted, significant}}), n_pairs,
    n_compared, n_significant, separability (significant / compared pairs; None without a comparison), alpha}."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    k = len(values)
    keys = [key for key in tests if tests[key].get("p_value") is not None]
    adjusted = holm([float(tests[key]["p_value"]) for key in keys])
    pairs = {key: {"p_adjusted": adj, "significant": adj < alpha} for key, adj in zip(keys, adjusted, strict=True)}
    better: list[list[int]] = [[] for _ in range(k)]
    ties: list[list[int]] = [[] for _ in range(k)]
    for i in range(k):
        for j in range(k):
            if i == j or values[i] is None or values[j] is None:
                continue
            key, sign = ((i, j), 1.0) if (i, j) in tests else ((j, i), -1.0)
            found = pairs.get(key)
            if found and found["significant"] and sign * float(tests[key]["diff"]) > 0:
                better[i].append(j)
            elif not (found and found["significant"]):
                ties[i].append(j)
    beaten_by = [sum(1 for j in range(k) if i in better[j]) for i in range(k)]
    ranks = [None if values[i] is None else 1 + beaten_by[i] for i in range(k)]
    n_ranked = sum(v is not None for v in values)
    n_significant = sum(1 for p in pairs.values() if p["significant"])
    return {"ranks": ranks, "ties": ties, "better_than": better, "pairs": pairs,
            "n_pairs": n_ranked * (n_ranked - 1) // 2, "n_compared": len(pairs), "n_significant": n_significant,
            "separability": n_significant / len(pairs) if pairs else None, "alpha": alpha,
            "rule": RANK_RULE.format(alpha=alpha)}


def paired_rate_diff(
    a: Sequence[bool], b: Sequence[bool], *, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """rate(A) - rate(B) on the same cases (a[i], b[i]: case i was a success for A, for B), with a paired
    bootstrap: cases are resampled with both outcomes, which is a multinomial draw of the (A only, B only, both or
    neither) counts: diff = (a_only - b_only) / n. The interval and the p-value are one test (`normal_test`)."""
    if len(a) != len(b):
        raise ValueError(f"paired sequences differ in length: {len(a)} vs {len(b)}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    x, y = np.asarray(a, dtype=bool).reshape(-1), np.asarray(b, dtype=bool).reshape(-1)
    n = int(x.size)
    a_only, b_only = int(np.sum(x & ~y)), int(np.sum(~x & y))
    out: dict[str, Any] = {"n": n, "a_only": a_only, "b_only": b_only, "diff": None, "ci_low": None,
                           "ci_high": None, "se": None, "p_value": None, "method": PAIRED_METHOD,
                           "n_boot": n_boot, "seed": seed}
    if n == 0:
        return out
    reps = multinomial_resample([a_only, b_only, n - a_only - b_only], n_boot, np.random.default_rng(seed))
    diffs = (reps[:, 0] - reps[:, 1]) / n
    diff = (a_only - b_only) / n
    out.update(diff=diff, **normal_test(diff, diffs, confidence))
    return out
