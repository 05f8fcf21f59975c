"""Task 2 / Task 3 summaries as text: Good% (Recovery Rate) per judge with both denominators and CIs."""

from __future__ import annotations

import json
from typing import Any

from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, _rich, pct
from uxbench.report.trust_text import block_of, corrected_cell, correction_notes
from uxbench.report.usage import cost_note

_RATE_TITLES = {"good_pct": "Good", "recovery_rate": "Recovery Rate"}
_TASK_TITLES = {"eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery"}
DEMO_BANNER = "DEMO DATA: figures come from the bundled demo cases, not from the benchmark."


def _num(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def calibrated(summary: dict[str, Any]) -> bool:
    """Whether some judge of the summary has judge-corrected rates (then the tables show them)."""
    return any(block_of(j) for j in (summary.get("judges") or {}).values())


def unscored_reason(info: dict[str, Any]) -> str | None:
    """Why a judge scored none of a run's replies (so its rate is not a bare dash): the counts of each kind of
    unusable answer, in words. None when it scored some, or had nothing to score."""
    m = info.get("metrics") or {}
    if m.get("n_scored") or not m.get("n_cases"):
        return None
    parts = [(info.get("n_unreadable"), "answers held no verdict it could read"),
             (info.get("n_unscorable"), "answers had neither verdict token among the log-probabilities (GRM)"),
             (info.get("n_score_errors"), "calls failed"),
             (m.get("n_cases", 0) - (m.get("n_judged") or 0), "replies were not generated or not judged yet")]
    said = [f"{n} {what}" for n, what in parts if n]
    return f"none of the {m['n_cases']} replies scored" + (f": {'; '.join(said)}" if said else "")


def judge_rows(summary: dict[str, Any]) -> list[list[str]]:
    """One row per judge: spec, mode, Good % of all cases, Good % of the scored replies and how many were scored,
    each judge-corrected beside when a judge is calibrated, mean / median score, unscorable, partial, unreadable,
    failed."""
    rows = []
    primary = summary.get("primary_judge")
    with_corrected = calibrated(summary)
    for key, j in (summary.get("judges") or {}).items():
        m = j.get("metrics") or {}
        mark = " *" if key == primary else ""
        block = block_of(j) or {}
        all_cases = [pct(m.get("good_rate_all_cases"))]
        scored = [pct(m.get("good_rate_scored_only"))]
        if with_corrected:
            all_cases.append(corrected_cell(block.get("all_cases")))
            scored.append(corrected_cell(block.get("scored_only")))
        rows.append([
            f"{j.get('spec') or key}{mark}", str(j.get("mode") or DASH), *all_cases, *scored,
            str(m.get("n_scored", DASH)),
            f"{_num(m.get('score_mean'))} / {_num(m.get('score_median'))}",
            str(j.get("n_unscorable", 0)), str(j.get("n_partial", 0)),
            str(j.get("n_unreadable", 0)), str(j.get("n_score_errors", 0)),
        ])
    return rows


DROPPABLE = ("Score mean /\nmedian", "Unreadable", "Partial", "Unscorable", "Mode", "Failed", "Corrected %\nof all")
"""Columns a narrow terminal leaves out, first to last (md, csv and json keep them)."""


def judge_header(rate: str, n_cases: object, *, with_corrected: bool = False) -> list[str]:
    """Column names; the figures' denominators are in them: all the run's cases, or the n scored column."""
    corrected = (["Corrected %\nof all"], ["Corrected %\nof the scored"]) if with_corrected else ([], [])
    return ["Judge (* = primary)", "Mode", f"{rate} % [95% CI]\nof all {n_cases} cases", *corrected[0],
            f"{rate} % [95% CI]\nof the scored", *corrected[1], "n\nscored", "Score mean /\nmedian", "Unscorable",
            "Partial", "Unreadable", "Failed"]


def trust_notes(summary: dict[str, Any]) -> list[str]:
    """Where each judge's correction comes from, its flags; or how to get one."""
    judges = summary.get("judges") or {}
    lines = [line for key, j in judges.items() for line in correction_notes(str(j.get("spec") or key), block_of(j))]
    if judges and not lines:
        lines.append("The judge's own error rates are in these figures: correct them with a Task 1 run of the judge "
                     "(uxbench score RUN_DIR --calibration T1_RUN_DIR; docs/TRUST.md).")
    return lines


def render_generative_summary(
    summary: dict[str, Any], fmt: ReportFormat, *, width: int | None = None, breakdowns: bool = True,
    max_breakdown_values: int = 8,
) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(summary, ensure_ascii=False, indent=2) + "\n"
    rate = _RATE_TITLES.get(str(summary.get("rate_name")), "Good")
    title = f"{_TASK_TITLES.get(str(summary.get('task')), summary.get('task'))}: {summary.get('model')}"
    if summary.get("demo_data"):
        title += " [DEMO DATA]"
    header = judge_header(rate, summary.get("n_samples", DASH), with_corrected=calibrated(summary))
    if fmt == "csv":
        flat = [h.replace("\n", " ") for h in header]
        lines = [",".join(f'"{h}"' for h in flat)] + [",".join(f'"{c}"' for c in row) for row in judge_rows(summary)]
        return "\n".join(lines) + "\n"
    sections: list[tuple[str, list[str], list[list[str]]]] = [(title, header, judge_rows(summary))]
    notes = [DEMO_BANNER] if summary.get("demo_data") else []
    notes.append(
        f"Generated: {summary.get('n_generated')} of {summary.get('n_samples')} cases "
        f"({summary.get('n_errors')} failed, {summary.get('n_too_long') or 0} too long for the model, "
        f"{summary.get('n_empty_replies')} empty replies)."
    )
    if not summary.get("judges"):
        notes.append("No judge has scored this run yet: `uxbench score RUN_DIR --judge PROVIDER:MODEL`.")
    notes.append("95% CIs: the rates by Wilson" + ("; corrected rates by the delta method (Lee et al. 2025)."
                                                   if calibrated(summary) else "."))
    notes += trust_notes(summary)
    notes += [f"{j.get('spec') or key}: {why}." for key, j in (summary.get("judges") or {}).items()
              if (why := unscored_reason(j))]
    cost = cost_note(summary)
    if cost:
        notes.append(cost)
    primary = (summary.get("judges") or {}).get(summary.get("primary_judge") or "")
    if breakdowns and primary:
        for name, values in ((primary.get("metrics") or {}).get("breakdowns") or {}).items():
            keys = sorted(values, key=lambda k: -int(values[k].get("n", 0)))[:max_breakdown_values]
            rows = [[k, str(values[k]["n"]), pct(values[k].get("good_rate_scored_only"))]
                    for k in values if k in keys]
            more = f" (largest {max_breakdown_values} of {len(values)})" if len(values) > max_breakdown_values else ""
            sections.append((f"By {name}{more}, primary judge", [name, "n", f"{rate} % of scored"], rows))
    if fmt == "table":
        return _rich(sections, notes, width, droppable=DROPPABLE, wrap=(0,))
    return _markdown([(t, [h.replace("\n", " ") for h in head], rows) for t, head, rows in sections], notes)
