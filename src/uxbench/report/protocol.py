"""One table for a whole-protocol run (`uxbench run --task judge,eval,recovery`): each task's headline figure."""

from __future__ import annotations

from typing import Any

from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, _rich, pct

_TITLES = {"judge": "Task 1, UX Judge", "eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}


def headline(summary: dict[str, Any]) -> tuple[str, str, str]:
    """(metric name, value with CI, denominator) of one task's summary."""
    if summary.get("task") == "judge":
        avg = ((summary.get("metrics") or {}).get("all") or {}).get("avg_acc")
        return "Avg-Acc % (all cases)", pct(avg), str(summary.get("n_ok", DASH))
    name = "Recovery Rate %" if summary.get("rate_name") == "recovery_rate" else "Good %"
    judge = (summary.get("judges") or {}).get(summary.get("primary_judge") or "")
    if not judge:
        return name, "not scored", str(summary.get("n_generated", DASH))
    m = judge.get("metrics") or {}
    scored = m.get("good_rate_scored_only")
    return (f"{name} (judge {judge.get('spec')})",
            f"{pct(scored)} of scored; {pct(m.get('good_rate_all_cases'))} of all",
            f"{m.get('n_scored', DASH)} scored / {m.get('n_cases', DASH)}")


def render_protocol(summaries: list[dict[str, Any]], fmt: ReportFormat, *, width: int = 160) -> str:
    _check_fmt(fmt)
    rows = []
    for s in summaries:
        metric, value, n = headline(s)
        rows.append([_TITLES.get(str(s.get("task")), str(s.get("task"))), str(s.get("model")), metric, value, n])
    header = ["Task", "Model", "Metric", "Value [95% CI]", "n"]
    notes = ["DEMO DATA: figures come from the bundled demo cases, not from the benchmark."] \
        if any(s.get("demo_data") for s in summaries) else []
    if fmt == "json":
        import json

        return json.dumps([dict(zip(header, r, strict=True)) for r in rows], ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return "\n".join([",".join(header)] + [",".join(f'"{c}"' for c in r) for r in rows]) + "\n"
    section = [("UXBench protocol", header, rows)]
    return _rich(section, notes, width) if fmt == "table" else _markdown(section, notes)
