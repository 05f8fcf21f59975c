"""`uxbench plan`: how many cases a difference needs (paired, McNemar), from pilot runs or a stated rate.

Two runs that will be compared on the same cases differ on the cases only one of them gets right (good); the
share of those (the discordance) sets how many cases a difference needs (`metrics.power`). Pilot runs give the
discordance directly: each pair of pilots of one task, on the cases both have. One pilot, or a stated rate, gives
it by assuming the two systems' outcomes independent (`metrics.power.independent_discordance`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, UxbenchError
from uxbench.metrics.power import (
    METHOD,
    avg_acc_design,
    independent_discordance,
    minimum_detectable_difference,
    paired_sample_size,
)
from uxbench.report.run_data import RunData, load_run_data

TASK_UNITS = {"judge": "cases (half liked, half disliked)", "eval": "cases", "recovery": "cases"}
FIGURES = {"judge": "Avg-Acc", "eval": "Good%", "recovery": "Recovery Rate"}


def _outcomes(run: RunData, judge: str | None) -> dict[str, tuple[str, bool]]:
    """case_id -> (stratum, success): Task 1 (gold, judged right); Tasks 2/3 ('all', good under the judge)."""
    if run.task == "judge":
        return dict(run.outcomes)
    from uxbench.report.leaderboard import resolve_judge

    key = resolve_judge(run, judge)
    if key is None:
        raise UxbenchError(f"--pilot {run.path} has no {'judge ' + judge if judge else 'primary judge'} scores: score "
                           "it first (uxbench score RUN_DIR --judge ...).")
    out: dict[str, tuple[str, bool]] = {}
    for v in run.verdicts.get(key, {}).values():
        if v.label is not None and v.case_id not in out:
            out[v.case_id] = ("all", v.label == "good")
    return out


def _rate(outcomes: dict[str, tuple[str, bool]], task: str) -> float:
    if task == "judge":
        by: dict[str, list[bool]] = {}
        for gold, right in outcomes.values():
            by.setdefault(gold, []).append(right)
        return sum(sum(v) / len(v) for v in by.values()) / len(by) if by else 0.0
    return sum(ok for _, ok in outcomes.values()) / len(outcomes) if outcomes else 0.0


def _size(outcomes: dict[str, tuple[str, bool]], task: str) -> float | None:
    """The pilot's own number of cases (Task 1: the effective n of its two classes)."""
    if task != "judge":
        return float(len(outcomes)) or None
    n_good = sum(1 for gold, _ in outcomes.values() if gold == "good")
    n_bad = len(outcomes) - n_good
    return 4.0 / (1.0 / n_good + 1.0 / n_bad) if n_good and n_bad else None


def _pair_design(task: str, a: dict[str, tuple[str, bool]], b: dict[str, tuple[str, bool]]) -> tuple[float, float]:
    """(n, discordance) of a pair of pilots on their shared cases; Task 1 as an Avg-Acc design."""
    shared = [c for c in a if c in b and a[c][0] == b[c][0]]
    if not shared:
        raise UxbenchError("two pilot runs share no case: pilots must be runs on the same data.")
    if task != "judge":
        return float(len(shared)), sum(a[c][1] != b[c][1] for c in shared) / len(shared)
    per: dict[str, list[bool]] = {}
    for c in shared:
        per.setdefault(a[c][0], []).append(a[c][1] != b[c][1])
    if len(per) < 2:
        raise UxbenchError("Task 1 pilots need shared cases of both gold classes.")
    return avg_acc_design(sum(per["good"]) / len(per["good"]), len(per["good"]),
                          sum(per["bad"]) / len(per["bad"]), len(per["bad"]))


def plan(task: str, difference: float, *, pilots: Sequence[str | Path] = (), rate: float | None = None,
         discordance: float | None = None, judge: str | None = None, alpha: float = 0.05, power: float = 0.8,
         ) -> dict[str, Any]:
    """The cases needed to detect `difference` between two systems on one task, per source of the discordance."""
    if task not in FIGURES:
        import difflib

        close = difflib.get_close_matches(task, list(FIGURES), n=1)
        raise ConfigError(f"--task {task!r} is not a task: choose judge, eval or recovery."
                          + (f" Did you mean '{close[0]}'?" if close else ""))
    if not 0 < abs(difference) < 1:
        raise ConfigError(f"--difference must be a share between 0 and 1 (0.02 is 2 points), not {difference}.")
    given = sum(x is not None for x in (rate, discordance)) + bool(pilots)
    if given != 1:
        raise ConfigError("Say where the discordance comes from: --pilot RUN_DIR (one or more runs on the same data), "
                          "--rate P (a stated rate, outcomes taken as independent) or --discordance PSI; one of them.")
    delta = abs(difference)
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for option, value in (("--rate", rate), ("--discordance", discordance)):
        if value is not None and not 0.0 <= value <= 1.0:
            raise ConfigError(f"{option} is a share between 0 and 1 (0.6 = 60%), not {value:g}.")
    if discordance is not None or rate is not None:
        try:
            psi = discordance if discordance is not None else independent_discordance(float(rate or 0.0), delta)
        except ValueError as err:  # the rate +- half the difference leaves [0, 1]
            raise ConfigError(f"--rate {rate:g} with --difference {difference:g}: {err}.") from None
        source = "stated discordance" if discordance is not None else f"stated rate {rate:g}"
        if rate is not None:
            notes.append(f"From a stated rate: two independent systems at {rate:g} ± {delta / 2:g}; systems that "
                         "agree more often than chance need fewer cases (measure it: --pilot A --pilot B).")
        rows.append(_row(source, psi, delta, alpha, power, None))
    else:
        from uxbench.sim.store import is_sim_run

        for pilot in pilots:
            if is_sim_run(pilot):
                raise ConfigError(f"--pilot {pilot} is a `uxbench sim run` directory (simulated sessions), not a run "
                                  "of Tasks 1-3, whose per-case outcomes `uxbench plan` pairs. For sim runs, `uxbench "
                                  "sim compare A B` gives the paired difference and its CI.")
        runs = [load_run_data(p) for p in pilots]
        wrong = [str(r.path) for r in runs if r.task != task]
        if wrong:
            raise ConfigError(f"--task {task}, but these pilots are of another task: {', '.join(wrong)}.")
        outcomes = [_outcomes(r, judge) for r in runs]
        if len(runs) == 1:
            p = _rate(outcomes[0], task)
            psi = independent_discordance(min(max(p, delta / 2), 1 - delta / 2), delta)
            rows.append(_row(f"pilot {runs[0].path.name} ({FIGURES[task]} {100 * p:.1f}%)", psi, delta, alpha, power,
                             _size(outcomes[0], task)))
            notes.append("One pilot: the other system's outcomes are taken as independent of its own; two pilots on "
                         "the same cases measure how often systems disagree instead.")
        for (ra, oa), (rb, ob) in itertools.combinations(zip(runs, outcomes, strict=True), 2):
            n, psi = _pair_design(task, oa, ob)
            rows.append(_row(f"pilots {ra.path.name} vs {rb.path.name}", psi, delta, alpha, power, n))
    feasible = [r["n_needed"] for r in rows if r["n_needed"] is not None]
    if not feasible:
        raise ConfigError(f"{rows[0]['note']}: no number of cases detects it; choose a smaller --difference.")
    notes += [f"{r['source']}: {r['note']}." for r in rows if r["note"]]
    return {"kind": "uxbench.plan", "task": task, "figure": FIGURES[task], "difference": delta, "alpha": alpha,
            "power": power, "method": METHOD, "unit": TASK_UNITS[task], "rows": rows,
            "n_needed": max(feasible) if feasible else None, "notes": notes}


def _row(source: str, psi: float, delta: float, alpha: float, power: float, n_pilot: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {"source": source, "discordance": psi, "n_needed": None, "note": None,
                           "pilot_n": n_pilot, "mdd_at_pilot": None}
    try:
        row["n_needed"] = paired_sample_size(delta, psi, alpha=alpha, power=power)
    except ValueError as exc:
        row["note"] = str(exc)
    if n_pilot:
        row["mdd_at_pilot"] = minimum_detectable_difference(n_pilot, psi, alpha=alpha, power=power)
    return row
