"""`uxbench leaderboard`: runs ranked by their headline figure, one table per task and data set, honest ranks.

- Runs are ranked only against runs on the same data (the data fingerprint and --limit): one table per data set,
  each saying which data it is; runs on other data are never ranked together.
- Task 1: Avg-Acc over all cases (unparseable and failed answers count as wrong), stratified bootstrap CI; pairs are
  compared by a paired bootstrap of the Avg-Acc difference on the cases both runs judged (stratified by gold).
- Tasks 2/3: Good% / Recovery Rate of the scored replies (the published leaderboard's convention), Wilson CI,
  under the primary judge of each run or `judge` (a key, a PROVIDER:MODEL spec or a label `spec (mode)`); pairs are
  compared by a paired bootstrap of the difference on the cases both runs had scored. Beside it, the
  judge-corrected rate when the judge is calibrated (its summary, or `calibration`: Task 1 runs of the judges).
- Ranks (`metrics.ranking.significance_ranks`): 1 + the number of entries significantly better (every pair,
  Holm-adjusted); each entry lists the entries it ties with; separability is the share of pairs that differ.
- The minimum detectable difference of each pair (paired, 80% power, alpha 0.05, from the pair's discordance).
- Model metadata (org, family, release date, size, parameters) from the model table; scaling trends: Spearman's rho
  of the figure against release date, size class and parameter count over models (`metrics.correlation.trend`).
"""

from __future__ import annotations

import difflib
import itertools
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uxbench.data.model_meta import ModelTable
from uxbench.errors import ConfigError, UxbenchError
from uxbench.metrics.paired import paired_bootstrap_diff
from uxbench.metrics.power import avg_acc_design, mdd_entry
from uxbench.metrics.proportions import DEFAULT_N_BOOT
from uxbench.metrics.ranking import paired_rate_diff
from uxbench.orchestrate.calibration import CalibrationRun, calibrate_judges, corrected_block, load_calibration_run
from uxbench.report.board_meta import model_cells as _meta
from uxbench.report.board_meta import rank_rows
from uxbench.report.board_meta import scaling_trends as _trends
from uxbench.report.discover import discover
from uxbench.report.generative import unscored_reason
from uxbench.report.run_data import RunData, judge_label, load_run_data
from uxbench.report.run_setup import label_runs

TASKS = ("judge", "eval", "recovery")
TITLES = {"judge": "Task 1, UX Judge", "eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}
METRIC_NAMES = {"judge": "Avg-Acc %", "eval": "Good %", "recovery": "Recovery Rate %"}
CONVENTIONS = {"judge": "over all cases (unparseable answers count as wrong)", "eval": "of the scored replies",
               "recovery": "of the scored replies"}
CI_METHODS = {"judge": "stratified bootstrap", "eval": "Wilson", "recovery": "Wilson"}
PAIR_METHODS = {"judge": "paired stratified bootstrap, normal interval", "eval": "paired bootstrap, normal interval",
                "recovery": "paired bootstrap, normal interval"}
"""How pairs are compared: the interval and the p-value of a pair are one test (`metrics.ranking.normal_test`), so
an interval that holds 0 never comes with a significant difference."""


def judge_names(run: RunData) -> dict[str, str]:
    """Every name by which `--judge` may pick each of the run's judges: its key, its spec and its table label."""
    out: dict[str, str] = {}
    for key, info in run.judges.items():
        out[key] = key
        out.setdefault(str(info.get("spec") or key), key)
        out[judge_label(key, info, run.judges)] = key
        if info.get("mode"):
            out[f"{info.get('spec')} ({info.get('mode')})"] = key
    return out


def resolve_judge(run: RunData, wanted: str | None) -> str | None:
    """The judge key whose scores rank this run: `wanted` as a key, a label, or the spec of exactly one of its
    judges; without `wanted`, the run's primary judge. None when the run has no such judge."""
    judges = run.judges
    if wanted is None:
        return run.primary_judge if run.primary_judge in judges else None
    if wanted in judges:
        return wanted
    matches = [k for k, info in judges.items() if info.get("spec") == wanted]
    if len(matches) > 1:
        labels = ", ".join(f"{judge_label(k, judges[k], judges)!r} ({k})" for k in matches)
        raise ConfigError(f"{run.path} has {len(matches)} judges with spec {wanted}: {labels}. Pass one of these "
                          "labels or keys to --judge.")
    if matches:
        return matches[0]
    return judge_names(run).get(wanted)


def check_judge_known(runs: Sequence[RunData], wanted: str | None) -> None:
    """An unknown `--judge` is an error with a suggestion (a known one that scored only some runs is not)."""
    if wanted is None:
        return
    if not any(run.generative for run in runs):
        raise ConfigError("--judge picks the judge of Task 2/3 runs; these are Task 1 runs, whose model under test "
                          "is the judge. Drop --judge.")
    names: set[str] = set()
    for run in runs:
        if run.generative:
            names.update(judge_names(run))
    if wanted in names:
        return
    close = difflib.get_close_matches(wanted, sorted(names), n=1, cutoff=0.5)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    known = ", ".join(sorted({n for n in names if ":" in n})[:8]) or "none (no run is scored)"
    raise ConfigError(f"--judge {wanted}: no run was scored by such a judge.{hint} Judges of these runs: {known}.")


def _cell(entry: dict[str, Any] | None, method: str) -> dict[str, Any]:
    entry = entry or {}
    return {"value": entry.get("value"), "ci_low": entry.get("ci_low"), "ci_high": entry.get("ci_high"),
            "n": entry.get("n"), "method": method}


def _corrected(run: RunData, judge: str | None, calibrations: list[CalibrationRun]) -> dict[str, Any] | None:
    """The judge-corrected rate of the scored replies: from `calibrations` when one measured this judge, else
    the run's own (its summary)."""
    if judge is None:
        return None
    info = run.judges.get(judge) or {}
    if calibrations:
        records, _ = calibrate_judges({judge: info}, calibrations)
        if judge in records and isinstance(info.get("metrics"), dict):
            return dict(corrected_block(info["metrics"], records[judge])["scored_only"],
                        calibration=records[judge])
    block = info.get("corrected")
    if isinstance(block, dict) and isinstance(block.get("scored_only"), dict):
        return dict(block["scored_only"], calibration=block.get("calibration"))
    return None


def _row(run: RunData, judge: str | None, table: ModelTable, calibrations: list[CalibrationRun]) -> dict[str, Any]:
    row: dict[str, Any] = {"label": run.label, "model": run.model, "run_dir": str(run.path),
                           "run_id": run.manifest.get("run_id"), "demo_data": run.demo,
                           "fingerprint": run.fingerprint, "judge": None, "judge_spec": None, "corrected": None,
                           **_meta(table.lookup(run.model))}
    if run.task == "judge":
        metrics = run.summary.get("metrics") or {}
        row["metric"] = _cell((metrics.get("all") or {}).get("avg_acc"), CI_METHODS["judge"])
        row["metric"]["n"] = metrics.get("n", run.summary.get("n_samples"))
    else:
        info = run.judges.get(judge or "") or {}
        row.update(judge=judge, judge_spec=info.get("spec"), corrected=_corrected(run, judge, calibrations))
        row["metric"] = _cell((info.get("metrics") or {}).get("good_rate_scored_only"), CI_METHODS[run.task])
        row["unscored"] = unscored_reason(info)  # a judge that scored nothing says why, not a bare dash
    return row


def _goods(run: RunData, judge: str) -> dict[str, bool]:
    """case_id -> good, over the replies this judge labelled."""
    out: dict[str, bool] = {}
    for v in run.verdicts.get(judge, {}).values():
        if v.label is not None and v.case_id not in out:
            out[v.case_id] = v.label == "good"
    return out


def paired_difference(task: str, first: RunData, second: RunData, judges: tuple[str | None, str | None],
                      n_boot: int, seed: int, confidence: float = 0.95) -> dict[str, Any]:
    """Figure(first) - figure(second) on the cases both have, with its CI and p-value (one test) and the
    detectable difference."""
    keep = ("n", "diff", "ci_low", "ci_high", "se", "p_value", "method")
    if task == "judge":
        shared = [c for c in first.outcomes if c in second.outcomes
                  and first.outcomes[c][0] == second.outcomes[c][0]]
        golds = [first.outcomes[c][0] for c in shared]
        if not shared or len(set(golds)) < 2:
            return {"n": len(shared), "diff": None, "ci_low": None, "ci_high": None, "se": None, "p_value": None,
                    "method": PAIR_METHODS[task], "mdd": None}
        result = paired_bootstrap_diff([first.outcomes[c][1] for c in shared],
                                       [second.outcomes[c][1] for c in shared], golds, n_boot=n_boot, seed=seed,
                                       confidence=confidence)
        psi = result["discordance"]
        n_eff, psi_eff = avg_acc_design(psi["good"], result["n_good"], psi["bad"], result["n_bad"])
        return {**{k: result[k] for k in keep}, "mdd": mdd_entry(n_eff, psi_eff)}
    a, b = _goods(first, judges[0] or ""), _goods(second, judges[1] or "")
    shared = [c for c in a if c in b]
    result = paired_rate_diff([a[c] for c in shared], [b[c] for c in shared], n_boot=n_boot, seed=seed,
                              confidence=confidence)
    n = result["n"]
    mdd = mdd_entry(n, (result["a_only"] + result["b_only"]) / n) if n else None
    return {**{k: result[k] for k in keep}, "mdd": mdd}


def _mdd_summary(pairs: list[dict[str, Any]], order: list[int]) -> dict[str, Any] | None:
    """The detectable difference between neighbours of the table (sorted best first): median and range."""
    by_key = {(p["i"], p["j"]): p for p in pairs} | {(p["j"], p["i"]): p for p in pairs}
    values = [m["value"] for a, b in itertools.pairwise(order)
              if (m := (by_key.get((a, b)) or {}).get("mdd")) and m.get("value") is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n_pairs": len(values),
            "alpha": 0.05, "power": 0.8, "between": "neighbours in the table"}


def data_key(run: RunData) -> tuple[str, str]:
    """What makes two runs' data the same: the fingerprint of the input and the --limit subset of it."""
    limit = (run.manifest.get("options") or {}).get("limit")
    return (run.fingerprint or "unknown", "" if limit is None else str(limit))


def _data_info(run: RunData) -> dict[str, Any]:
    fingerprint, limit = data_key(run)
    description = (run.summary.get("data") or {}).get("description") or "data"
    short = fingerprint[:12]
    text = f"{description}, fingerprint {short}" + (f", --limit {limit}" if limit else "")
    return {"fingerprint": run.fingerprint, "limit": int(limit) if limit else None, "description": description,
            "label": text}


def _task_board(task: str, runs: list[RunData], judge: str | None, table: ModelTable,
                calibrations: list[CalibrationRun], n_boot: int, seed: int, alpha: float) -> dict[str, Any]:
    warnings: list[str] = []
    chosen: list[str | None] = [resolve_judge(run, judge) if run.task != "judge" else None for run in runs]
    if task != "judge":
        for run, key in zip(runs, chosen, strict=True):
            if key is None:
                warnings.append(f"{run.path}: " + (f"not scored by {judge}; left out." if judge else
                                                   "no primary judge (not scored yet); left out."))
        kept = [(run, key) for run, key in zip(runs, chosen, strict=True) if key is not None]
        runs, chosen = [r for r, _ in kept], [k for _, k in kept]
        specs = {str(run.judges[key or ""].get("spec")) for run, key in zip(runs, chosen, strict=True)}
        if len(set(chosen)) > 1:
            warnings.append(f"The runs are ranked under different judges ({', '.join(sorted(specs))}"
                            f"{', in different settings' if len(specs) == 1 else ''}): ranks then compare judges "
                            "as well as models. Pass --judge to rank all under one.")
    diffs = label_runs(runs, chosen)
    rows = [_row(run, key, table, calibrations) for run, key in zip(runs, chosen, strict=True)]
    for row, diff in zip(rows, diffs, strict=True):
        row["setup"] = diff
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["metric"]["value"] is None,
                                                     -(rows[i]["metric"]["value"] or 0.0)))
    tests: dict[tuple[int, int], dict[str, Any]] = {}
    pairs: list[dict[str, Any]] = []
    for pos, i in enumerate(order):
        for j in order[pos + 1:]:
            if rows[i]["metric"]["value"] is None or rows[j]["metric"]["value"] is None:
                continue
            diff = paired_difference(task, runs[i], runs[j], (chosen[i], chosen[j]), n_boot, seed, 1.0 - alpha)
            if diff["p_value"] is not None:
                tests[(i, j)] = diff
            elif diff["n"] == 0:
                warnings.append(f"{rows[j]['label']} and {rows[i]['label']} share no scored case: they are not "
                                "compared (each ties with the other).")
            pairs.append({"i": i, "j": j, "a": rows[i]["label"], "b": rows[j]["label"], **diff})
    ranking, board_rows = rank_rows(rows, order, tests, pairs, alpha)
    return {"task": task, "title": TITLES[task], "metric": METRIC_NAMES[task], "convention": CONVENTIONS[task],
            "data": _data_info(runs[0]) if runs else None, "rows": board_rows,
            "pairs": [{k: v for k, v in p.items() if k not in ("i", "j")} for p in pairs],
            "separability": {k: ranking[k] for k in ("separability", "n_pairs", "n_compared", "n_significant",
                                                     "alpha", "rule")},
            "mdd": _mdd_summary(pairs, order),
            "ci_methods": {"figure": CI_METHODS[task], "pairs": PAIR_METHODS[task],
                           "corrected": "delta method (Lee et al. 2025)"},
            "trends": _trends(board_rows), "warnings": warnings}


def group_by_data(runs: list[RunData]) -> dict[tuple[str, str], list[RunData]]:
    groups: dict[tuple[str, str], list[RunData]] = {}
    for run in runs:
        groups.setdefault(data_key(run), []).append(run)
    return groups


def leaderboard(
    paths: Sequence[str | Path], *, judge: str | None = None, calibration: Sequence[str | Path] = (),
    n_boot: int = DEFAULT_N_BOOT, seed: int = 0, table: ModelTable | None = None, alpha: float = 0.05,
) -> dict[str, Any]:
    """The leaderboard over run directories, globs or parent directories (pairwise directories are ignored):
    `tasks` maps a board id (the task, with the data's fingerprint when a task has runs on several data sets) to
    one table."""
    found = discover([str(p) for p in paths])
    if not found.runs:
        raise UxbenchError("No finished run directory among " + ", ".join(map(str, paths)) + ".")
    table = table or ModelTable.default()
    from uxbench.sim.store import is_sim_run

    sims = [p for p in found.runs if is_sim_run(p)]  # simulated-session runs: their own boards (report.sim_board)
    runs = [load_run_data(p) for p in found.runs if p not in sims]
    check_judge_known(runs, judge)
    calibrations = [load_calibration_run(p) for p in calibration]
    boards: dict[str, Any] = {}
    notes: list[str] = []
    specs = {str(info.get("spec")) for run in runs if run.generative for info in run.judges.values()}
    notes += [f"--calibration {c.path} measured {c.model}, which scored none of these runs." for c in calibrations
              if c.model not in specs]
    for task in TASKS:
        groups = group_by_data([r for r in runs if r.task == task])
        if len(groups) > 1:
            notes.append(f"{TITLES[task]}: the runs used {len(groups)} different data sets; each is ranked in its "
                         "own table.")
        for (fingerprint, limit), members in groups.items():
            board_id = task if len(groups) == 1 else f"{task}-{fingerprint[:8]}" + (f"-{limit}" if limit else "")
            boards[board_id] = _task_board(task, members, judge, table, calibrations, n_boot, seed, alpha)
    if sims:
        from uxbench.report.sim_board import sim_boards

        boards.update(sim_boards(sims, table, n_boot, seed, alpha))
    return {"kind": "uxbench.leaderboard", "tasks": boards, "judge": judge, "n_boot": n_boot, "seed": seed,
            "alpha": alpha, "calibration": [str(c.path) for c in calibrations], "notes": notes,
            "demo_data": any(r.demo for r in runs) or any(row["demo_data"] for b in boards.values()
                                                          if b["task"] == "sim" for row in b["rows"]),
            "skipped": found.skipped,
            "ignored_pairwise": [str(p) for p in found.pairwise]}
