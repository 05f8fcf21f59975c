"""Session-level UX metrics of simulated (or real) sessions: pure functions over `SessionOutcome`s.

Sessions of one persona are correlated (same goal, same habits), so every interval is a cluster bootstrap over
personas: personas are drawn with replacement, each bringing all its sessions, and a ratio metric is recomputed
as (sum of numerators) / (sum of denominators) over the drawn personas. With few clusters the percentile
interval is too narrow by about sqrt((C - 1) / C); it is widened by sqrt(C / (C - 1)) around the estimate
(the simulation study in tests/metrics/test_metrics_session.py checks the coverage).

Every figure says its denominator: `n` (sessions, assistant turns, chains), `n_clusters` (personas).

Where a bootstrap cannot give an honest interval it does not pretend to:
- one persona: no interval at all (`ci_low` / `ci_high` None, `degenerate` says why), not `83.3 [83.3, 83.3]`;
- no event, every session a success, every reply complained about (a rate of 0, a proportion or a per-turn
  rate of 1): every replicate is the same, so the interval is Wilson's on the number of personas (`method` says
  so), the cautious effective sample size when the sessions of a persona may all say the same;
- a paired difference whose replicates do not vary (every persona's pairs agree, as two deterministic runs
  often do: success 1.000 in both, `+0.000 [+0.000, +0.000]`): for a proportion-like metric, Newcombe's interval
  from the two runs' Wilson intervals on the personas (`method` says so), never a point;
- intervals never leave the metric's range (a proportion in [0, 1], satisfaction in [1, 5]; a paired
  difference within what the two ranges allow), also after the few-cluster widening.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from uxbench.metrics.proportions import wilson_ci
from uxbench.metrics.ranking import bootstrap_test

DISSATISFIED_ACTS = ("complain", "rephrase", "repeat", "dismiss", "abandon_topic", "leave")
"""The user acts that signal dissatisfaction (with `skim`, a timing signal, counted apart)."""
ABANDON_REASONS = ("patience_exhausted", "max_turns", "out_of_scope", "error")
PER_TURN = (0.0, 1.0)
"""The range of a count per assistant turn (acts, thumbs, skims): a user's act answers one reply, so at most one a
turn, 100 per 100 turns; an interval never leaves it, the few-cluster widening included."""


@dataclass(frozen=True)
class SessionOutcome:
    """What the metrics need of one session."""

    cluster: str
    """The persona (the bootstrap's cluster)."""
    trial: int
    success: bool
    reason: str
    assistant_turns: int
    acts: tuple[str, ...] = ()
    """The user's acts after the opener, in order (a silent `leave` included)."""
    satisfaction: tuple[float, ...] = ()
    """The simulator's satisfaction state per user turn (empty in free mode)."""
    judge: tuple[float | None, ...] = ()
    """An independent judge's 1-5 estimate per assistant turn (None where it gave none)."""
    likes: int = 0
    dislikes: int = 0
    skims: int = 0
    chains: tuple[str, ...] = ()
    """Outcomes of the recovery chains (recovered / failed_recovery / user_gave_up / no_recovery)."""
    flagged: bool = False
    """The corruption gate flagged the session."""
    acts_measured: bool = True
    """The session's user acts were decided by the policy (structured mode); free mode has none, so its act
    rates, thumbs, skims and recovery chains are not measured (never 0)."""
    key: tuple[str, int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.cluster, self.trial))


def _clusters(outcomes: Sequence[SessionOutcome]) -> list[list[SessionOutcome]]:
    groups: dict[str, list[SessionOutcome]] = {}
    for o in outcomes:
        groups.setdefault(o.cluster, []).append(o)
    return [groups[k] for k in sorted(groups)]


def _widen(estimate: float, low: float, high: float, n_clusters: int) -> tuple[float, float]:
    if n_clusters < 2 or math.isnan(low):
        return low, high
    f = math.sqrt(n_clusters / (n_clusters - 1))
    return estimate - (estimate - low) * f, estimate + (high - estimate) * f


def _count(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 6)


ONE_CLUSTER = "one persona: a cluster bootstrap has nothing to resample, so there is no interval"


def _flat_interval(value: float, c: int, confidence: float) -> tuple[float, float] | None:
    """Wilson on the number of clusters for a proportion-like value in [0, 1] whose bootstrap replicates do not
    vary (0 events, every session a success, every reply complained about): None for other values."""
    if not 0.0 <= value <= 1.0:
        return None
    return wilson_ci(value * c, c, confidence)


@lru_cache(maxsize=32)
def _resamples(seed: int, clusters: int, n_boot: int) -> NDArray[np.int64]:
    """The bootstrap's cluster indices, (n_boot, clusters), as `default_rng(seed)` draws them: the same for every
    metric of a summary (each starts from the seed), so drawn once and shared, read-only."""
    idx = np.random.default_rng(seed).integers(0, clusters, size=(n_boot, clusters))
    idx.flags.writeable = False
    return idx


def percentiles(values: NDArray[np.float64], low: float, high: float) -> tuple[float, float]:
    """``np.percentile(values, [low, high])`` (its default, linear interpolation, the same floating-point steps):
    the same two values without its general machinery, ~10x faster on a bootstrap's replicates (a summary takes
    ~100) and without the import of numpy.ma that its first call makes. NaN for no values."""
    if not values.size:
        return math.nan, math.nan
    ordered = np.sort(values)
    last = ordered.size - 1
    out = []
    for q in (low, high):
        virtual = last * (q / 100)
        below = min(max(math.floor(virtual), 0), last)
        a, b = float(ordered[below]), float(ordered[min(below + 1, last)])
        gamma = virtual - below
        diff = b - a
        out.append(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)
    return out[0], out[1]


def cluster_ratio(num: NDArray[np.float64], den: NDArray[np.float64], *, n_boot: int = 2000, seed: int = 0,
                  confidence: float = 0.95, scale: float = 1.0, bounds: tuple[float, float] | None = (0.0, 1.0),
                  ) -> dict[str, Any]:
    """sum(num) / sum(den) over clusters (one entry each), with its cluster-bootstrap interval (see the module
    docstring for one cluster and for values on an edge). `bounds` are on the unscaled ratio."""
    c = int(num.shape[0])
    total_den = float(den.sum())
    if c == 0 or total_den <= 0:
        return {"value": None, "ci_low": None, "ci_high": None, "num": _count(float(num.sum())),
                "n": _count(total_den), "n_clusters": c}
    value = float(num.sum()) / total_den
    base = {"value": round(value * scale, 6), "num": _count(float(num.sum())), "n": _count(total_den),
            "n_clusters": c}
    if c == 1:
        return {**base, "ci_low": None, "ci_high": None, "degenerate": ONE_CLUSTER}
    idx = _resamples(seed, c, n_boot)
    dens = den[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = np.where(dens > 0, num[idx].sum(axis=1) / dens, np.nan)
    stats = stats[~np.isnan(stats)]
    alpha = (1 - confidence) / 2
    low, high = percentiles(stats, 100 * alpha, 100 * (1 - alpha))
    flat = _flat_interval(value, c, confidence) if stats.size and float(np.ptp(stats)) == 0.0 else None
    if flat is not None:
        return {**base, "ci_low": round(flat[0] * scale, 6), "ci_high": round(flat[1] * scale, 6),
                "method": f"wilson on the {c} personas (every bootstrap replicate equals the estimate)"}
    low, high = _widen(value, float(low), float(high), c)
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return {**base, "ci_low": round(low * scale, 6), "ci_high": round(high * scale, 6)}


class _Grouped:
    """Sessions grouped by persona (`_clusters`) for `_ratio`: one grouping serves every metric of a summary, and a
    metric's per-persona sums are one `np.bincount` over the sessions in group order (the same sums, added in the
    same order, as a sum per group: a summary makes ~50 of them over every session)."""

    __slots__ = ("flat", "index", "n")

    def __init__(self, groups: list[list[SessionOutcome]]) -> None:
        self.n = len(groups)
        self.flat = [o for g in groups for o in g]
        self.index = np.repeat(np.arange(self.n, dtype=np.intp), [len(g) for g in groups])

    def sums(self, value: Callable[[SessionOutcome], float]) -> NDArray[np.float64]:
        """Per persona, the sum of ``value`` over its sessions."""
        sums = np.bincount(self.index, weights=np.array([value(o) for o in self.flat], dtype=float),
                           minlength=self.n)
        return sums.astype(np.float64, copy=False)  # float64 already (weights): typed, not copied


def _grouped(outcomes: Sequence[SessionOutcome]) -> _Grouped:
    return _Grouped(_clusters(outcomes))


def _ratio(groups: _Grouped, num: Callable[[SessionOutcome], float],
           den: Callable[[SessionOutcome], float], *, n_boot: int, seed: int, scale: float = 1.0,
           bounds: tuple[float, float] | None = (0.0, 1.0)) -> dict[str, Any]:
    """`cluster_ratio` of sessions already grouped by persona."""
    return cluster_ratio(groups.sums(num), groups.sums(den), n_boot=n_boot, seed=seed, scale=scale, bounds=bounds)


def _cluster_stat(outcomes: Sequence[SessionOutcome], stat: Callable[[list[SessionOutcome]], float | None], *,
                  n_boot: int, seed: int, confidence: float = 0.95) -> dict[str, Any]:
    """Any statistic of the pooled sessions, with a cluster-bootstrap interval (a loop: for medians and such)."""
    groups = _clusters(outcomes)
    value = stat(list(outcomes))
    if value is None or not groups:
        return {"value": None, "ci_low": None, "ci_high": None, "n_clusters": len(groups)}
    if len(groups) == 1:
        return {"value": round(value, 6), "ci_low": None, "ci_high": None, "n_clusters": 1,
                "degenerate": ONE_CLUSTER}
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(n_boot):
        drawn = [o for i in rng.integers(0, len(groups), size=len(groups)) for o in groups[int(i)]]
        s = stat(drawn)
        if s is not None:
            stats.append(s)
    alpha = (1 - confidence) / 2
    low, high = percentiles(np.asarray(stats, dtype=float), 100 * alpha, 100 * (1 - alpha))
    low, high = _widen(value, float(low), float(high), len(groups))
    return {"value": round(value, 6), "ci_low": round(low, 6), "ci_high": round(high, 6), "n_clusters": len(groups)}


def auc(values: Sequence[float]) -> float | None:
    """Area under a per-turn curve divided by its length (trapezoids; the mean height, on the curve's scale)."""
    if not values:
        return None
    if len(values) == 1:
        return float(values[0])
    return float(sum((a + b) / 2 for a, b in itertools.pairwise(values)) / (len(values) - 1))


def pass_hat_k(successes: int, trials: int, k: int) -> float | None:
    """tau-bench's pass^k for one persona: P(all of k trials drawn without replacement succeed) = C(c,k)/C(n,k)."""
    if k > trials or k < 1:
        return None
    return math.comb(successes, k) / math.comb(trials, k)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if values else None


def _count_of(act: str) -> Callable[[SessionOutcome], float]:
    return lambda o: float(o.acts.count(act))


def _ended(reason: str) -> Callable[[SessionOutcome], float]:
    return lambda o: float(o.reason == reason)


def session_metrics(outcomes: Sequence[SessionOutcome], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Every session metric of §3.4 with its interval and denominator."""
    n = len(outcomes)
    kw: dict[str, Any] = {"n_boot": n_boot, "seed": seed}
    groups = _grouped(outcomes)
    successes = [o for o in outcomes if o.success]
    turns = [o.assistant_turns for o in successes]
    out: dict[str, Any] = {
        "n_sessions": n,
        "n_personas": len({o.cluster for o in outcomes}),
        "success_rate": _ratio(groups, lambda o: float(o.success), lambda o: 1.0, **kw),
        "turns_to_success": {
            **_at_least_one(_cluster_stat(successes, lambda s: _median([o.assistant_turns for o in s]), **kw)),
            "statistic": "median assistant turns among successful sessions",
            "mean": _mean(turns), "n": len(turns),
            "distribution": {str(t): turns.count(t) for t in sorted(set(turns))},
        },
        "termination": {reason: _ratio(groups, _ended(reason), lambda o: 1.0, **kw)
                        for reason in ("goal_complete", *ABANDON_REASONS)},
        "abandonment_rate": _ratio(groups, lambda o: float(o.reason == "patience_exhausted"), lambda o: 1.0, **kw),
    }
    with_state = [o for o in outcomes if o.satisfaction]
    out["satisfaction"] = _curve_summary(with_state, lambda o: list(o.satisfaction), "simulator state", **kw)
    judged = [o for o in outcomes if any(v is not None for v in o.judge)]
    out["judge_satisfaction"] = _curve_summary(
        judged, lambda o: [v for v in o.judge if v is not None], "independent judge, per assistant turn", **kw)
    acted = [o for o in outcomes if o.acts_measured]
    if not acted and outcomes:
        out.update(_not_measured())
        out["pass_k"] = _pass_k(outcomes, **kw)
        return out
    outcomes = acted
    groups = _grouped(outcomes)
    per100 = {"n": sum(o.assistant_turns for o in outcomes), "denominator": "assistant turns", "per": 100}
    rates = {act: _ratio(groups, _count_of(act), lambda o: float(o.assistant_turns),
                         scale=100.0, bounds=PER_TURN, **kw) for act in DISSATISFIED_ACTS}
    rates["any_dissatisfied"] = _ratio(
        groups, lambda o: float(sum(o.acts.count(a) for a in DISSATISFIED_ACTS)),
        lambda o: float(o.assistant_turns), scale=100.0, bounds=PER_TURN, **kw)
    rates["skim"] = _ratio(groups, lambda o: float(o.skims), lambda o: float(o.assistant_turns), scale=100.0,
                           bounds=PER_TURN, **kw)
    out["signal_rates"] = {**per100, "rates": rates}
    out["feedback"] = {**per100, "like": _ratio(groups, lambda o: float(o.likes), lambda o: float(o.assistant_turns),
                                                scale=100.0, bounds=PER_TURN, **kw),
                       "dislike": _ratio(groups, lambda o: float(o.dislikes), lambda o: float(o.assistant_turns),
                                         scale=100.0, bounds=PER_TURN, **kw)}
    n_chains = sum(len(o.chains) for o in outcomes)
    out["recovery"] = {
        "n": n_chains, "denominator": "recovery chains (a failed reply and what followed)",
        "recovered": _ratio(groups, lambda o: float(o.chains.count("recovered")), lambda o: float(len(o.chains)),
                            **kw),
        "outcomes": {name: sum(o.chains.count(name) for o in outcomes)
                     for name in ("recovered", "failed_recovery", "user_gave_up", "no_recovery")},
    }
    out["pass_k"] = _pass_k(outcomes, **kw)
    return out


def session_headline(outcomes: Sequence[SessionOutcome], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The headline of `session_metrics` (the rates, final satisfaction and turns to success that a summary shows
    per language), computed as it computes them and nothing else: equal, cell for cell, to the same keys of its
    result (tested), without the dozens of other intervals (pass^k for every k, every act's rate, the per-turn
    curves) and without the bootstrap of the median turns, whose interval a headline does not show."""
    kw: dict[str, Any] = {"n_boot": n_boot, "seed": seed}
    groups = _grouped(outcomes)
    turns = [o.assistant_turns for o in outcomes if o.success]
    median = _median(turns) if turns else None
    with_state = [o for o in outcomes if o.satisfaction]
    final = (_ratio(_grouped(with_state), _curve_stat(lambda o: list(o.satisfaction), lambda c: c[-1]),
                    lambda o: 1.0, bounds=(1.0, 5.0), **kw) if with_state else None)
    acted = [o for o in outcomes if o.acts_measured]
    if not acted and outcomes:
        dissatisfied = _not_measured()["signal_rates"]["rates"]["any_dissatisfied"]
    else:
        dissatisfied = _ratio(
            _grouped(acted), lambda o: float(sum(o.acts.count(a) for a in DISSATISFIED_ACTS)),
            lambda o: float(o.assistant_turns), scale=100.0, bounds=PER_TURN, **kw)
    return {
        "n_sessions": len(outcomes),
        "success_rate": _ratio(groups, lambda o: float(o.success), lambda o: 1.0, **kw),
        "abandonment_rate": _ratio(groups, lambda o: float(o.reason == "patience_exhausted"), lambda o: 1.0, **kw),
        "dissatisfied_per_100": dissatisfied,
        "final_satisfaction": final,
        "turns_to_success": {"value": round(median, 6) if median is not None else None, "n": len(turns)},
    }


def _at_least_one(cell: dict[str, Any]) -> dict[str, Any]:
    """Turns to success: a success takes one reply at least, so the interval starts there at the lowest."""
    if cell.get("ci_low") is not None:
        cell["ci_low"] = max(1.0, cell["ci_low"])
    return cell


NOT_MEASURED = "not measured: free mode has no policy, so no acts, thumbs, skims or recovery chains"


def _not_measured() -> dict[str, Any]:
    """The act-based metrics of a free-mode run: every cell says it was not measured."""
    cell = {"value": None, "ci_low": None, "ci_high": None, "not_measured": NOT_MEASURED}
    return {"signal_rates": {"not_measured": NOT_MEASURED,
                             "rates": {act: dict(cell) for act in (*DISSATISFIED_ACTS, "any_dissatisfied", "skim")}},
            "feedback": {"not_measured": NOT_MEASURED, "like": dict(cell), "dislike": dict(cell)},
            "recovery": {"not_measured": NOT_MEASURED, "recovered": dict(cell), "outcomes": {}}}


def _curve_summary(outcomes: Sequence[SessionOutcome], curve: Callable[[SessionOutcome], list[float]], what: str,
                   **kw: Any) -> dict[str, Any]:
    if not outcomes:
        return {"n": 0, "source": what}
    finals: dict[str, Callable[[list[float]], float | None]] = {"final": lambda c: c[-1], "min": min, "auc": auc}
    out: dict[str, Any] = {"n": len(outcomes), "source": what, "scale": "1-5"}
    groups = _grouped(outcomes)
    for name, fn in finals.items():
        out[name] = _ratio(groups, _curve_stat(curve, fn), lambda o: 1.0, bounds=(1.0, 5.0), **kw)
    longest = max(len(curve(o)) for o in outcomes)
    out["by_turn"] = [{"turn": i + 1, "mean": round(float(np.mean(vals)), 4), "n": len(vals)}
                      for i in range(longest) if (vals := [curve(o)[i] for o in outcomes if len(curve(o)) > i])]
    return out


def _curve_stat(curve: Callable[[SessionOutcome], list[float]],
                fn: Callable[[list[float]], float | None]) -> Callable[[SessionOutcome], float]:
    return lambda o: float(fn(curve(o)) or 0.0)


def _pass_k(outcomes: Sequence[SessionOutcome], *, n_boot: int, seed: int) -> dict[str, Any]:
    groups = _clusters(outcomes)
    trials = min((len(g) for g in groups), default=0)
    out: dict[str, Any] = {"trials_per_persona": trials, "n_clusters": len(groups)}
    for k in range(1, trials + 1):
        per = np.array([pass_hat_k(sum(o.success for o in g), len(g), k) or 0.0 for g in groups], dtype=float)
        out[str(k)] = cluster_ratio(per, np.ones_like(per), n_boot=n_boot, seed=seed)
    return out


METRIC_RANGES: dict[str, tuple[float, float]] = {
    "success_rate": (0.0, 1.0), "dissatisfied_per_100_turns": (0.0, 100.0), "final_satisfaction": (1.0, 5.0),
    "assistant_turns": (0.0, math.inf), "abandonment_rate": (0.0, 1.0),
}
"""Each paired metric's range (a user act answers one assistant reply, so at most 100 acts per 100 turns): a
difference B - A lies in [low - high, high - low]."""
STRUCTURED_ONLY = frozenset({"dissatisfied_per_100_turns", "final_satisfaction"})
"""Metrics only structured mode measures (free mode has no acts and no satisfaction state)."""

PAIRED_METRICS: dict[str, tuple[Callable[[SessionOutcome], float], Callable[[SessionOutcome], float]]] = {
    "success_rate": (lambda o: float(o.success), lambda o: 1.0),
    "dissatisfied_per_100_turns": (lambda o: 100.0 * sum(o.acts.count(a) for a in DISSATISFIED_ACTS),
                                   lambda o: float(o.assistant_turns) if o.acts_measured else 0.0),
    "final_satisfaction": (lambda o: o.satisfaction[-1] if o.satisfaction else 0.0,
                           lambda o: 1.0 if o.satisfaction else 0.0),
    "assistant_turns": (lambda o: float(o.assistant_turns), lambda o: 1.0),
    "abandonment_rate": (lambda o: float(o.reason == "patience_exhausted"), lambda o: 1.0),
}


def _flat_paired(ra: float, rb: float, lo: float, hi: float, c: int) -> dict[str, Any] | None:
    """B - A when no bootstrap replicate differs from another, for a metric with a range [0, H]: both rates as
    proportions of H with Wilson intervals on the `c` personas, combined by Newcombe's hybrid score method (which
    ignores the pairing: the cautious side), and a normal-approximation p from its half-width. None otherwise."""
    if lo != 0.0 or not math.isfinite(hi):
        return None
    pa, pb = ra / hi, rb / hi
    (la, ua), (lb, ub) = _flat_interval(pa, c, 0.95) or (pa, pa), _flat_interval(pb, c, 0.95) or (pb, pb)
    diff = pb - pa
    low = max(-1.0, diff - math.sqrt((pb - lb) ** 2 + (ua - pa) ** 2))
    high = min(1.0, diff + math.sqrt((ub - pb) ** 2 + (pa - la) ** 2))
    se = (high - low) / (2 * 1.959964)
    p = 1.0 if diff == 0 else (0.0 if se == 0 else math.erfc(abs(diff) / se / math.sqrt(2)))
    return {"ci_low": round(low * hi, 6), "ci_high": round(high * hi, 6), "p_value": p, "se": round(se * hi, 6),
            "method": f"newcombe from each run's wilson on the {c} personas (every bootstrap replicate equals the "
                      "estimate)"}


def paired_comparison(a: Sequence[SessionOutcome], b: Sequence[SessionOutcome], *, n_boot: int = 2000,
                      seed: int = 0) -> dict[str, Any]:
    """B minus A on the sessions both have (same persona and trial, hence the same seed), with a paired cluster
    bootstrap over personas: each drawn persona brings its matched pairs."""
    by_a = {o.key: o for o in a}
    pairs = [(by_a[o.key], o) for o in b if o.key in by_a]
    out: dict[str, Any] = {"n_pairs": len(pairs), "only_a": len(by_a) - len(pairs),
                           "only_b": sum(1 for o in b if o.key not in by_a)}
    if not pairs:
        return out
    clusters = sorted({x.cluster for x, _ in pairs})
    pos = {c: i for i, c in enumerate(clusters)}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(clusters), size=(n_boot, len(clusters)))
    metrics: dict[str, Any] = {}
    not_measured: dict[str, str] = {}
    for name, (num, den) in PAIRED_METRICS.items():
        sums = np.zeros((len(clusters), 4))
        for x, y in pairs:
            sums[pos[x.cluster]] += (num(x), den(x), num(y), den(y))
        totals = sums.sum(axis=0)
        if totals[1] <= 0 or totals[3] <= 0:
            side = "either run" if totals[1] <= 0 and totals[3] <= 0 else "run A" if totals[1] <= 0 else "run B"
            not_measured[name] = f"not measured in {side}" + (
                " (free mode has no acts)" if name == "dissatisfied_per_100_turns" else
                " (free mode has no satisfaction state)" if name == "final_satisfaction" else "")
            continue
        ra, rb = totals[0] / totals[1], totals[2] / totals[3]
        drawn = sums[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            diffs = drawn[:, 2] / drawn[:, 3] - drawn[:, 0] / drawn[:, 1]
        diffs = diffs[np.isfinite(diffs)]
        cell: dict[str, Any] = {"a": round(float(ra), 6), "b": round(float(rb), 6), "diff": round(float(rb - ra), 6)}
        if len(clusters) == 1:
            metrics[name] = {**cell, "ci_low": None, "ci_high": None, "significant": False, "p_value": None,
                             "degenerate": ONE_CLUSTER}
            continue
        lo, hi = METRIC_RANGES.get(name, (-math.inf, math.inf))
        flat = _flat_paired(ra, rb, lo, hi, len(clusters)) if diffs.size and float(np.ptp(diffs)) == 0.0 else None
        if flat is not None:
            metrics[name] = {**cell, **flat, "significant": bool(flat["ci_low"] > 0 or flat["ci_high"] < 0)}
            continue
        low, high = percentiles(diffs, 2.5, 97.5)
        low, high = _widen(rb - ra, float(low), float(high), len(clusters))
        low, high = max(low, lo - hi), min(high, hi - lo)
        test = bootstrap_test(float(rb - ra), diffs)  # p from the replicates' spread: Holm over a board's pairs
        metrics[name] = {**cell, "ci_low": round(low, 6), "ci_high": round(high, 6),
                         "significant": bool(low > 0 or high < 0), "p_value": test["p_value"], "se": test["se"]}
    out["metrics"] = metrics
    out["not_measured"] = not_measured
    out["n_clusters"] = len(clusters)
    return out
