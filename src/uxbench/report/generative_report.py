"""`uxbench report` over several runs of Tasks 2/3 (or a mix of tasks): one headline row per run, named by its
model and what differs from the other runs of that model, the judge-corrected rate beside the raw one, and per
task and data set the paired difference of every run from the first (with its CI and the minimum detectable
difference at their size). Ranking all pairs is `uxbench leaderboard`."""

from __future__ import annotations

from typing import Any

from uxbench.orchestrate.calibration import CalibrationRun, attach_corrections, calibrate_judges
from uxbench.report.leaderboard import check_judge_known, data_key, paired_difference, resolve_judge
from uxbench.report.protocol import HEADER, headline
from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, _rich
from uxbench.report.run_data import RunData
from uxbench.report.run_setup import label_runs
from uxbench.report.trust_text import block_of, corrected_cell, correction_notes, mdd_text

_TITLES = {"judge": "Task 1, UX Judge", "eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}


def calibrate_summary(summary: dict[str, Any], calibrations: list[CalibrationRun]) -> list[str]:
    """Add judge-corrected rates to a Task 2/3 summary for its judges that one of `calibrations` measured (in
    memory: the run directory is not changed). Returns notes for calibrations that fit no judge."""
    judges = summary.get("judges") or {}
    if not calibrations or summary.get("task") == "judge" or not judges:
        return []
    records, _ = calibrate_judges(judges, calibrations)
    attach_corrections(summary, records)
    used = {r["model"] for r in records.values()}
    return [f"--calibration {c.path} measured {c.model}, which did not score {summary.get('run_dir')}."
            for c in calibrations if c.model not in used]


def choose_judge(summary: dict[str, Any], run: RunData, judge: str | None) -> None:
    """Make `judge` (spec, label or key) the summary's headline judge for this report."""
    if judge is None or summary.get("task") == "judge":
        return
    key = resolve_judge(run, judge)
    if key is not None:
        summary["primary_judge"] = key


def generative_report(runs: list[RunData], summaries: list[dict[str, Any]], *, judge: str | None,
                      calibrations: list[CalibrationRun], n_boot: int, seed: int) -> dict[str, Any]:
    """The report over these runs (each with its summary, stored or recomputed)."""
    check_judge_known(runs, judge)
    notes: list[str] = []
    for run, summary in zip(runs, summaries, strict=True):
        choose_judge(summary, run, judge)
        notes += calibrate_summary(summary, calibrations)
    keys = [s.get("primary_judge") if r.generative else None for r, s in zip(runs, summaries, strict=True)]
    diffs = label_runs(runs, keys)
    rows = []
    for run, summary, key, diff in zip(runs, summaries, keys, diffs, strict=True):
        metric, value, n, other = headline(summary)
        info = (summary.get("judges") or {}).get(key or "") or {}
        rows.append({"label": run.label, "task": run.task, "metric": metric, "value": value, "n": n,
                     "all_cases": other, "judge": key, "judge_spec": info.get("spec"), "setup": diff,
                     "corrected": (block_of(info) or {}).get("scored_only"), "data": list(data_key(run))})
    comparisons: list[dict[str, Any]] = []
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, run in enumerate(runs):
        groups.setdefault((run.task, *data_key(run)), []).append(i)
    for (task, _, _), members in groups.items():
        first = members[0]
        for i in members[1:]:
            diff = paired_difference(task, runs[i], runs[first], (keys[i], keys[first]), n_boot, seed)
            comparisons.append({"task": task, "run": rows[i]["label"], "baseline": rows[first]["label"], **diff})
    if len(groups) > len({task for task, _, _ in groups}):
        notes.append("Runs of one task on different data are compared only with runs on the same data.")
    return {"kind": "uxbench.report", "runs": rows, "comparisons": comparisons, "summaries": summaries,
            "n_boot": n_boot, "seed": seed, "notes": notes}


def render_generative_report(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        import json

        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    corrected = any(r["corrected"] for r in report["runs"])
    header = HEADER[:4] + (["Corrected %\n[95% CI]"] if corrected else []) + HEADER[4:]
    rows = [[_TITLES.get(r["task"], r["task"]), r["label"], r["metric"], r["value"],
             *([corrected_cell(r["corrected"])] if corrected else []), r["n"], r["all_cases"] or DASH]
            for r in report["runs"]]
    sections = [("Runs", header, rows)]
    if report["comparisons"]:
        sections.append((f"Paired differences from the first run of each task and data set (paired bootstrap, "
                         f"{report['n_boot']} rounds)", ["Run", "Baseline", "n shared", "Δ (pp) [95% CI]",
                                                         "Detectable (pp)"],
                         [[c["run"], c["baseline"], str(c["n"]), _delta(c), mdd_text(c.get("mdd"))]
                          for c in report["comparisons"]]))
    notes = ["DEMO DATA: some runs use the bundled demo cases, not the benchmark."] \
        if any(s.get("demo_data") for s in report["summaries"]) else []
    for r, s in zip(report["runs"], report["summaries"], strict=True):
        if r["judge_spec"]:
            notes.append(f"{_TITLES.get(r['task'], r['task'])}, {r['label']}: scored by {r['judge_spec']}.")
        info = (s.get("judges") or {}).get(r["judge"] or "") or {}
        notes += correction_notes(r["label"], block_of(info))
    notes += report["notes"]
    if report["comparisons"]:
        notes.append("Detectable: the smallest difference the pair's size detects with 80% power at alpha 0.05, "
                     "from the pair's discordance (uxbench plan for the cases a smaller one needs).")
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([h.replace("\n", " ") for h in header])
        writer.writerows(rows)
        return buf.getvalue()
    if fmt == "table":
        return _rich(sections, notes, width, droppable=("Of all cases", "Detectable (pp)"), wrap=(0, 1, 2))
    return _markdown([(t, [h.replace("\n", " ") for h in head], body) for t, head, body in sections], notes,
                     text_columns=2)


def _delta(entry: dict[str, Any]) -> str:
    from uxbench.report.render import pct

    if entry.get("diff") is None:
        return DASH
    return pct({"value": entry["diff"], "ci_low": entry.get("ci_low"), "ci_high": entry.get("ci_high")}, signed=True)
