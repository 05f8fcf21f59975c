"""`uxbench leaderboard`: every task's runs ranked by their headline figure, with honest ties and trends.

- Task 1: Avg-Acc over all cases (unparseable and failed answers count as wrong), Wilson-MOVER CI; neighbours
  are compared by a paired bootstrap of the Avg-Acc difference on the cases both runs judged (stratified by gold).
- Tasks 2/3: Good% / Recovery Rate of the scored replies (the published leaderboard's convention) under the
  primary judge of each run, or `judge` (a key or a PROVIDER:MODEL spec); neighbours are compared by a paired
  bootstrap of the difference on the cases both runs had scored.
- Ranks: sorted best first; a run whose difference from the run above has a CI containing 0 shares its rank
  (competition ranking, ties chain). A pair without shared cases is not tied.
- Model metadata (org, family, release date, size) come from the model table; per task, the scaling trend is
  Spearman's rho between release date (and size) and the figure, over models, with a permutation p-value and
  a bootstrap CI (`metrics.correlation.trend`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uxbench.data.model_meta import SIZE_ORDER, ModelInfo, ModelTable
from uxbench.errors import ConfigError, UxbenchError
from uxbench.metrics.correlation import trend
from uxbench.metrics.paired import paired_bootstrap_diff
from uxbench.metrics.ranking import diff_contains_zero, paired_rate_diff, shared_ranks
from uxbench.report.discover import discover
from uxbench.report.run_data import RunData, load_run_data, unique_labels

TASKS = ("judge", "eval", "recovery")
TITLES = {"judge": "Task 1, UX Judge", "eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}
METRIC_NAMES = {"judge": "Avg-Acc %", "eval": "Good %", "recovery": "Recovery Rate %"}
CONVENTIONS = {"judge": "over all cases (unparseable answers count as wrong)", "eval": "of the scored replies",
               "recovery": "of the scored replies"}


def resolve_judge(run: RunData, wanted: str | None) -> str | None:
    """The judge key whose scores rank this run: `wanted` as a key, else as the spec of exactly one of its
    judges; without `wanted`, the run's primary judge. None when the run has no such judge."""
    judges = run.judges
    if wanted is None:
        return run.primary_judge if run.primary_judge in judges else None
    if wanted in judges:
        return wanted
    matches = [k for k, info in judges.items() if info.get("spec") == wanted]
    if len(matches) > 1:
        raise ConfigError(f"{run.path} has {len(matches)} judges with spec {wanted} ({', '.join(matches)}): pass "
                          "one of these keys to --judge.")
    return matches[0] if matches else None


def _cell(entry: dict[str, Any] | None) -> dict[str, Any]:
    entry = entry or {}
    return {"value": entry.get("value"), "ci_low": entry.get("ci_low"), "ci_high": entry.get("ci_high"),
            "n": entry.get("n")}


def _meta(info: ModelInfo | None) -> dict[str, Any]:
    if info is None:
        return {"org": None, "family": None, "released": None, "size": None, "params_b": None, "matched": None}
    return {"org": info.org, "family": info.family, "released": info.released.isoformat() if info.released else None,
            "size": info.size, "params_b": info.params_b, "matched": info.key}


def _row(run: RunData, judge: str | None, table: ModelTable) -> dict[str, Any]:
    row: dict[str, Any] = {"label": run.label, "model": run.model, "run_dir": str(run.path),
                           "run_id": run.manifest.get("run_id"), "demo_data": run.demo,
                           "fingerprint": run.fingerprint, "judge": None, "judge_spec": None,
                           **_meta(table.lookup(run.model))}
    if run.task == "judge":
        row["metric"] = _cell(((run.summary.get("metrics") or {}).get("all") or {}).get("avg_acc"))
        row["metric"]["n"] = (run.summary.get("metrics") or {}).get("n", run.summary.get("n_samples"))
    else:
        info = run.judges.get(judge or "") or {}
        row.update(judge=judge, judge_spec=info.get("spec"))
        row["metric"] = _cell((info.get("metrics") or {}).get("good_rate_scored_only"))
    return row


def _goods(run: RunData, judge: str) -> dict[str, bool]:
    """case_id -> good, over the replies this judge labelled."""
    out: dict[str, bool] = {}
    for v in run.verdicts.get(judge, {}).values():
        if v.label is not None and v.case_id not in out:
            out[v.case_id] = v.label == "good"
    return out


def _paired(task: str, upper: RunData, lower: RunData, judges: tuple[str | None, str | None], n_boot: int,
            seed: int) -> dict[str, Any]:
    """Figure(upper) - figure(lower) on the cases both have, with its CI."""
    if task == "judge":
        shared = [c for c in upper.outcomes if c in lower.outcomes and upper.outcomes[c][0] == lower.outcomes[c][0]]
        golds = [upper.outcomes[c][0] for c in shared]
        if not shared or len(set(golds)) < 2:
            return {"n": len(shared), "diff": None, "ci_low": None, "ci_high": None}
        result = paired_bootstrap_diff([upper.outcomes[c][1] for c in shared], [lower.outcomes[c][1] for c in shared],
                                       golds, n_boot=n_boot, seed=seed)
        return {k: result[k] for k in ("n", "diff", "ci_low", "ci_high", "method")}
    a, b = _goods(upper, judges[0] or ""), _goods(lower, judges[1] or "")
    shared = [c for c in a if c in b]
    result = paired_rate_diff([a[c] for c in shared], [b[c] for c in shared], n_boot=n_boot, seed=seed)
    return {k: result[k] for k in ("n", "diff", "ci_low", "ci_high", "method")}


def _x(row: dict[str, Any], by: str) -> float | None:
    if by == "release":
        import datetime as dt

        return float(dt.date.fromisoformat(row["released"]).toordinal()) if row["released"] else None
    if by == "params":
        return float(row["params_b"]) if row["params_b"] is not None else None
    return float(SIZE_ORDER[row["size"]]) if row["size"] else None


def _trends(rows: list[dict[str, Any]], n_boot: int, seed: int) -> dict[str, Any]:
    """Scaling trends over distinct models (the best-ranked run of a model stands for it)."""
    models: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["metric"]["value"] is not None:
            models.setdefault(row["model"], row)
    points = list(models.values())
    with_params = [r for r in points if r["params_b"] is not None]
    size_by = "params" if with_params and len(with_params) == len([r for r in points if r["size"]]) else "size"
    out: dict[str, Any] = {}
    for name, by in (("release", "release"), ("size", size_by)):
        xs = [(x, r) for r in points if (x := _x(r, by)) is not None]
        result = trend([x for x, _ in xs], [r["metric"]["value"] for _, r in xs], n_boot=n_boot, seed=seed)
        out[name] = {"by": by, **result, "models": [r["model"] for _, r in xs],
                     "left_out": [r["model"] for r in points if _x(r, by) is None]}
    return out


def _task_board(task: str, runs: list[RunData], judge: str | None, table: ModelTable, n_boot: int, seed: int,
                ) -> dict[str, Any]:
    warnings: list[str] = []
    chosen = {run.label: resolve_judge(run, judge) if run.task != "judge" else None for run in runs}
    if task != "judge":
        missing = [run for run in runs if chosen[run.label] is None]
        for run in missing:
            warnings.append(f"{run.path}: " + (f"not scored by {judge}; left out." if judge else
                                               "no primary judge (not scored yet); left out."))
        runs = [run for run in runs if chosen[run.label] is not None]
        specs = {str(run.judges[chosen[run.label] or ""].get("spec")) for run in runs}
        keys = {chosen[run.label] for run in runs}
        if len(keys) > 1:
            warnings.append(f"The runs are ranked under different judges ({', '.join(sorted(specs))}"
                            f"{', in different settings' if len(specs) == 1 else ''}): ranks then compare judges "
                            "as well as models. Pass --judge to rank all under one.")
    rows = [(run, _row(run, chosen[run.label], table)) for run in runs]
    rows.sort(key=lambda rr: (rr[1]["metric"]["value"] is None, -(rr[1]["metric"]["value"] or 0.0)))
    tied = [False]
    for i in range(1, len(rows)):
        (up, _), (low, low_row) = rows[i - 1], rows[i]
        if low_row["metric"]["value"] is None:
            low_row["vs_previous"] = None
            tied.append(False)
            continue
        diff = _paired(task, up, low, (chosen[up.label], chosen[low.label]), n_boot, seed)
        low_row["vs_previous"] = diff
        contains = diff_contains_zero(diff)
        if contains is None:
            warnings.append(f"{low.label} and {up.label} share no scored case: they are not compared (not tied).")
        tied.append(bool(contains))
    ranks = shared_ranks(tied)
    for (_, row), rank, t in zip(rows, ranks, tied, strict=True):
        row["rank"] = rank if row["metric"]["value"] is not None else None
        row["tied_with_previous"] = t
        row.setdefault("vs_previous", None)
    prints = {row["fingerprint"] for _, row in rows if row["fingerprint"]}
    if len(prints) > 1:
        warnings.append("The runs used different data (fingerprints differ): paired comparisons use the shared "
                        "cases only; compare figures with care.")
    board_rows = [row for _, row in rows]
    return {"task": task, "title": TITLES[task], "metric": METRIC_NAMES[task], "convention": CONVENTIONS[task],
            "rows": board_rows,
            "trends": _trends(board_rows, n_boot, seed), "warnings": warnings}


def leaderboard(
    paths: Sequence[str | Path], *, judge: str | None = None, n_boot: int = 2000, seed: int = 0,
    table: ModelTable | None = None,
) -> dict[str, Any]:
    """The leaderboard over run directories, globs or parent directories (pairwise directories are ignored)."""
    found = discover([str(p) for p in paths])
    if not found.runs:
        raise UxbenchError("No finished run directory among " + ", ".join(map(str, paths)) + ".")
    table = table or ModelTable.default()
    from uxbench.sim.store import is_sim_run

    sims = [p for p in found.runs if is_sim_run(p)]  # simulated-session runs: their own boards (report.sim_board)
    runs = [load_run_data(p) for p in found.runs if p not in sims]
    tasks = {}
    for task in TASKS:
        members = [r for r in runs if r.task == task]
        if members:
            unique_labels(members)
            tasks[task] = _task_board(task, members, judge, table, n_boot, seed)
    if sims:
        from uxbench.report.sim_board import sim_boards

        tasks.update(sim_boards(sims, table, n_boot, seed))
    return {"kind": "uxbench.leaderboard", "tasks": tasks, "judge": judge, "n_boot": n_boot, "seed": seed,
            "demo_data": any(r.demo for r in runs) or any(row["demo_data"] for k, b in tasks.items()
                                                          if k.startswith("sim") for row in b["rows"]),
            "skipped": found.skipped,
            "ignored_pairwise": [str(p) for p in found.pairwise]}
