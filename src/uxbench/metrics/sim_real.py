"""Simulated against real behaviour: reaction rates, rate ratios, the cooperativeness gap, the Jensen-Shannon
distance of reaction distributions, KS on session lengths, and Kendall's tau of two rankings.

The unit of resampling is the session: the turns of one conversation are correlated (a user who complains once
complains again), so every interval of a rate, a ratio, a difference or a distance comes from a cluster bootstrap
over sessions (each side resampled on its own, the same replicates for every statistic). A per-side rate gets a
Wilson interval on its effective sample size (Kish: the number of turns divided by the design effect the sessions
cause), which stays honest at 0 events where a bootstrap would collapse to a point.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import kendalltau, ks_2samp, norm

from uxbench.metrics.proportions import MAX_RESAMPLE_ELEMENTS, finite_or_none, percentile_interval, wilson_ci

Sessions = Sequence[Sequence[str]]
"""One reaction label per assistant turn, grouped by session."""


def session_counts(sessions: Sessions, categories: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(counts shaped (sessions, categories), turns per session); a label outside `categories` is an error."""
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(sessions), len(categories)), dtype=float)
    sizes = np.zeros(len(sessions), dtype=float)
    for s, labels in enumerate(sessions):
        for label in labels:
            if label not in index:
                raise ValueError(f"reaction label {label!r} is not among the categories {list(categories)}")
            counts[s, index[label]] += 1
        sizes[s] = len(labels)
    return counts, sizes


def cluster_totals(
    counts: NDArray[np.float64], sizes: NDArray[np.float64], n_boot: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bootstrap totals over resampled sessions: (n_boot, categories) event totals and (n_boot,) turn totals.

    A replicate draws as many sessions as there are, with replacement: the multinomial weights of the sessions
    times their counts. Built in chunks so that n_boot x sessions never exceeds `MAX_RESAMPLE_ELEMENTS`."""
    n_sessions = counts.shape[0]
    totals = np.zeros((n_boot, counts.shape[1]), dtype=float)
    turns = np.zeros(n_boot, dtype=float)
    if n_sessions == 0:
        return totals, turns
    chunk = max(1, MAX_RESAMPLE_ELEMENTS // n_sessions)
    uniform = np.full(n_sessions, 1.0 / n_sessions)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        weights = rng.multinomial(n_sessions, uniform, size=b).astype(float)
        totals[start : start + b] = weights @ counts
        turns[start : start + b] = weights @ sizes
    return totals, turns


def design_effect(events: NDArray[np.float64], sizes: NDArray[np.float64]) -> float:
    """Kish's design effect of a ratio estimate k/n over clusters: the cluster-robust variance of the rate over
    its binomial variance, at least 1. With no variance to measure (p = 0 or 1, or one session) it is the mean
    session size: the cautious choice, as if every turn of a session said the same."""
    n, k = float(sizes.sum()), float(events.sum())
    m = int((sizes > 0).sum())
    if n == 0:
        return 1.0
    p = k / n
    mean_size = n / max(m, 1)
    if p in (0.0, 1.0) or m < 2:
        return max(1.0, mean_size)
    resid = events - p * sizes
    robust = m / (m - 1) * float((resid**2).sum()) / (n * n)
    binomial = p * (1 - p) / n
    return max(1.0, robust / binomial)


def clustered_rate(events: NDArray[np.float64], sizes: NDArray[np.float64], confidence: float = 0.95) -> dict[str, Any]:
    """k of n turns with a Wilson interval on the effective n (n / design effect); value None when n = 0."""
    k, n = float(events.sum()), float(sizes.sum())
    deff = design_effect(events, sizes)
    n_eff = n / deff
    low, high = wilson_ci(k / deff, max(n_eff, 0.0), confidence) if n > 0 else (0.0, 1.0)
    return {"value": (k / n if n else None), "k": int(k), "n": int(n), "n_sessions": int((sizes > 0).sum()),
            "ci_low": low, "ci_high": high, "design_effect": round(deff, 4),
            "method": "wilson on the effective n (cluster design effect)"}


def _interval(reps: NDArray[np.float64], confidence: float) -> tuple[float | None, float | None, int]:
    low, high = percentile_interval(reps, confidence)
    return finite_or_none(low), finite_or_none(high), int(np.isnan(reps).sum())


def js_distance_from_counts(p: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """Jensen-Shannon distance (base 2, in [0, 1]) between count vectors along the last axis; NaN when either is
    empty. Equals `scipy.spatial.distance.jensenshannon(p, q, base=2)` and works on stacks of replicates."""
    ps, qs = p.sum(axis=-1, keepdims=True), q.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        pn, qn = p / ps, q / qs
        m = (pn + qn) / 2
        kl_p = np.where(pn > 0, pn * np.log2(np.where(pn > 0, pn, 1) / np.where(m > 0, m, 1)), 0.0).sum(axis=-1)
        kl_q = np.where(qn > 0, qn * np.log2(np.where(qn > 0, qn, 1) / np.where(m > 0, m, 1)), 0.0).sum(axis=-1)
        js = np.sqrt(np.clip((kl_p + kl_q) / 2, 0.0, 1.0))
    empty = (ps[..., 0] == 0) | (qs[..., 0] == 0)
    return np.asarray(np.where(empty, np.nan, js), dtype=float)


def compare_reactions(
    real: Sessions,
    sim: Sessions,
    categories: Sequence[str],
    dissatisfied: Collection[str],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Reaction rates of real and simulated users and how far apart they are.

    Every category's rate per side (per assistant turn, Wilson on the effective n), the ratio sim / real with a
    cluster-bootstrap interval (None when the real rate is 0), the dissatisfied rate per side (turns whose label
    is in `dissatisfied`), the **cooperativeness gap** = real dissatisfied rate - simulated one (positive: the
    simulated users complain, repeat or give up less than the real ones), and the Jensen-Shannon distance between
    the two label distributions (0 = the same shares, 1 = no label in common)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    unknown = sorted(set(dissatisfied) - set(categories))
    if unknown:
        raise ValueError(f"dissatisfied labels outside the categories: {unknown}")
    rng = np.random.default_rng(seed)
    real_c, real_n = session_counts(real, categories)
    sim_c, sim_n = session_counts(sim, categories)
    real_t, real_tn = cluster_totals(real_c, real_n, n_boot, rng)
    sim_t, sim_tn = cluster_totals(sim_c, sim_n, n_boot, rng)
    bad = np.array([c in dissatisfied for c in categories], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        real_rate_b, sim_rate_b = real_t / real_tn[:, None], sim_t / sim_tn[:, None]
        real_bad_b, sim_bad_b = real_t[:, bad].sum(axis=1) / real_tn, sim_t[:, bad].sum(axis=1) / sim_tn
    rates: dict[str, Any] = {}
    for j, cat in enumerate(categories):
        r, s = clustered_rate(real_c[:, j], real_n, confidence), clustered_rate(sim_c[:, j], sim_n, confidence)
        rates[cat] = {"real": r, "sim": s, "ratio_sim_over_real": _ratio(r, s, real_rate_b[:, j], sim_rate_b[:, j],
                                                                          confidence)}
    real_bad = clustered_rate(real_c[:, bad].sum(axis=1), real_n, confidence)
    sim_bad = clustered_rate(sim_c[:, bad].sum(axis=1), sim_n, confidence)
    gap: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None}
    if real_bad["value"] is not None and sim_bad["value"] is not None:
        low, high, _ = _interval(real_bad_b - sim_bad_b, confidence)
        gap.update(value=real_bad["value"] - sim_bad["value"], ci_low=low, ci_high=high)
        if any(side["k"] in (0, side["n"]) for side in (real_bad, sim_bad)):
            # a side with no event (or only events) does not vary under the bootstrap, which would credit the
            # difference with that side's certainty: Newcombe's hybrid interval from the two Wilson intervals
            lo, hi = _newcombe(real_bad, sim_bad)
            gap.update(ci_low=min(lo, lo if low is None else low), ci_high=max(hi, hi if high is None else high),
                       method="newcombe from the per-side Wilson intervals (a side without variation)")
    js_value = js_distance_from_counts(real_c.sum(axis=0), sim_c.sum(axis=0))
    js_low, js_high, _ = _interval(js_distance_from_counts(real_t, sim_t), confidence)
    return {
        "categories": list(categories),
        "dissatisfied_labels": [c for c in categories if c in dissatisfied],
        "n_sessions": {"real": len(real), "sim": len(sim)},
        "n_turns": {"real": int(real_n.sum()), "sim": int(sim_n.sum())},
        "rates": rates,
        "dissatisfied": {"real": real_bad, "sim": sim_bad},
        "cooperativeness_gap": {**gap, "definition": "real dissatisfied rate - simulated dissatisfied rate"},
        "js_distance": {"value": finite_or_none(float(js_value)), "ci_low": js_low, "ci_high": js_high,
                        "base": 2},
        "interval": f"cluster bootstrap over sessions ({n_boot} rounds, seed {seed})",
        "confidence": confidence,
    }


def _newcombe(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """Newcombe's hybrid score interval of a - b from each rate's value and interval."""
    pa, pb = float(a["value"]), float(b["value"])
    diff = pa - pb
    low = diff - math.sqrt((pa - a["ci_low"]) ** 2 + (b["ci_high"] - pb) ** 2)
    high = diff + math.sqrt((a["ci_high"] - pa) ** 2 + (pb - b["ci_low"]) ** 2)
    return max(-1.0, low), min(1.0, high)


def _ratio(r: dict[str, Any], s: dict[str, Any], real_b: NDArray[np.float64], sim_b: NDArray[np.float64],
           confidence: float) -> dict[str, Any]:
    """sim rate / real rate with its interval. With no real event the ratio is undefined (and says so); with no
    simulated event it is 0 with an upper bound, the simulated rate's Wilson upper bound over the real rate's lower
    one (every bootstrap replicate would say 0: `[0.00, 0.00]` would claim a certainty the data lack)."""
    ratio: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n_undefined": None}
    if s["value"] is None or r["value"] is None:
        return ratio
    if not r["value"]:
        return {**ratio, "note": f"undefined: no real event in {r['n']} turns"}
    if not s["value"]:
        high = s["ci_high"] / r["ci_low"] if r["ci_low"] else None
        return {**ratio, "value": 0.0, "ci_low": 0.0, "ci_high": finite_or_none(high) if high is not None else None,
                "note": f"no simulated event in {s['n']} turns: 0, at most the upper bound",
                "method": "upper bound: Wilson upper of the simulated rate / Wilson lower of the real rate"}
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = np.where(real_b > 0, sim_b / real_b, np.nan)
    low, high, undefined = _interval(reps, confidence)
    out = {**ratio, "value": s["value"] / r["value"], "ci_low": low, "ci_high": high, "n_undefined": undefined}
    if any(side["k"] == side["n"] for side in (r, s)):
        # a side whose every turn is an event does not vary under the bootstrap (a persona's scripted users
        # continue after every reply): widen to the quotient of the per-side Wilson bounds, as the gap does
        wide_low, wide_high = s["ci_low"] / r["ci_high"], s["ci_high"] / r["ci_low"] if r["ci_low"] else None
        out.update(ci_low=min(wide_low, wide_low if low is None else low),
                   ci_high=None if wide_high is None or high is None else max(wide_high, high),
                   method="widened to Wilson bounds' quotient (a side where every turn is this reaction)")
    return out


def ks_lengths(real: Sequence[int], sim: Sequence[int]) -> dict[str, Any]:
    """Two-sample Kolmogorov-Smirnov test of session lengths (turns or user turns), with both medians."""
    out: dict[str, Any] = {"n_real": len(real), "n_sim": len(sim), "statistic": None, "p_value": None,
                           "median_real": float(np.median(real)) if len(real) else None,
                           "median_sim": float(np.median(sim)) if len(sim) else None}
    if len(real) == 0 or len(sim) == 0:
        return out
    result = ks_2samp(np.asarray(real, dtype=float), np.asarray(sim, dtype=float))
    out.update(statistic=float(result.statistic), p_value=float(result.pvalue))
    return out


def kendall_tau(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> dict[str, Any]:
    """Kendall's tau-b of two scorings of the same items (e.g. assistants ranked by simulated and by real UX),
    scipy's p-value, and a Fisher-z interval with se = sqrt(0.437 / (n - 4)) (Fieller, Hartley and Pearson 1957)
    from n = 5 on; values None below 2 items or when a side is constant."""
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} vs {len(y)}")
    n = len(x)
    out: dict[str, Any] = {"n": n, "tau": None, "p_value": None, "ci_low": None, "ci_high": None,
                           "variant": "tau-b", "interval": "fisher z (n >= 5)"}
    if n < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return out
    result = kendalltau(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    tau = finite_or_none(float(result.statistic))
    out.update(tau=tau, p_value=finite_or_none(float(result.pvalue)))
    if tau is not None and n >= 5:
        if abs(tau) < 1.0:
            z, half = math.atanh(tau), float(norm.ppf(0.5 + confidence / 2)) * math.sqrt(0.437 / (n - 4))
            out.update(ci_low=math.tanh(z - half), ci_high=math.tanh(z + half))
        else:
            out.update(ci_low=tau, ci_high=tau)
    return out
