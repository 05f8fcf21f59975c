"""One table for a whole-protocol run (`uxbench run --task judge,eval,recovery`): each task's headline figure."""

from __future__ import annotations

from typing import Any

from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, _rich, pct
from uxbench.report.trust_text import corrected_cell

_TITLES = {"judge": "Task 1, UX Judge", "eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}


def headline(summary: dict[str, Any]) -> tuple[str, str, str, str]:
    """(metric name, value with CI, its denominator, the other convention's value) of one task's summary."""
    if summary.get("task") == "judge":
        avg = ((summary.get("metrics") or {}).get("all") or {}).get("avg_acc")
        return "Avg-Acc % (all cases)", pct(avg), f"{summary.get('n_ok', DASH)} cases", ""
    name = "Recovery Rate %" if summary.get("rate_name") == "recovery_rate" else "Good %"
    judge = (summary.get("judges") or {}).get(summary.get("primary_judge") or "")
    if not judge:
        return name, "not scored", f"{summary.get('n_generated', DASH)} generated", ""
    m = judge.get("metrics") or {}
    return (f"{name} of scored", pct(m.get("good_rate_scored_only")),
            f"{m.get('n_scored', DASH)} scored", f"{pct(m.get('good_rate_all_cases'))} of all {m.get('n_cases', DASH)}")


HEADER = ["Task", "Model", "Metric", "Value [95% CI]", "n", "Of all cases"]


def _corrected(summary: dict[str, Any]) -> dict[str, Any] | None:
    judge = (summary.get("judges") or {}).get(summary.get("primary_judge") or "") or {}
    block = judge.get("corrected") if isinstance(judge.get("corrected"), dict) else None
    return (block or {}).get("scored_only")


def render_protocol(summaries: list[dict[str, Any]], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    rows = []
    corrected = any(_corrected(s) for s in summaries)
    header = HEADER[:4] + (["Corrected [95% CI]"] if corrected else []) + HEADER[4:]
    for s in summaries:
        metric, value, n, other = headline(s)
        extra = [corrected_cell(_corrected(s))] if corrected else []
        rows.append([_TITLES.get(str(s.get("task")), str(s.get("task"))), str(s.get("model")), metric, value,
                     *extra, n, other or DASH])
    notes = ["DEMO DATA: figures come from the bundled demo cases, not from the benchmark."] \
        if any(s.get("demo_data") for s in summaries) else []
    for s in summaries:
        judge = (s.get("judges") or {}).get(s.get("primary_judge") or "")
        if judge:
            notes.append(f"{_TITLES.get(str(s.get('task')), s.get('task'))} is scored by its primary judge, "
                         f"{judge.get('spec')}.")
    if fmt == "json":
        import json

        return json.dumps([dict(zip(header, r, strict=True)) for r in rows], ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return "\n".join([",".join(header)] + [",".join(f'"{c}"' for c in r) for r in rows]) + "\n"
    section = [("UXBench protocol", header, rows)]
    if fmt == "table":
        return _rich(section, notes, width, droppable=("Of all cases",), wrap=(0, 1, 2))
    return _markdown(section, notes, text_columns=3)
