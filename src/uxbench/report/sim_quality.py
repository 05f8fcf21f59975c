"""The simulator's own checks as text: the User Fidelity Score (`sim fidelity`), the cost-fidelity frontier
(`sim frontier`) and the sensitivity of session metrics to the simulator (`sim sensitivity`), as a terminal
table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from uxbench.report.layout import Section, render_tables, terminal_width
from uxbench.report.render import DASH, NOT_MEASURED, ReportFormat, _check_fmt, _markdown, paired_diff, pct

FAMILY_NAMES = {
    "premature_disclosure": "Premature disclosure", "never_disclose": "Never-disclose facts",
    "fact_accuracy": "Fact accuracy", "hallucination": "No hallucinated details", "goal_pursuit": "Goal pursuit",
    "termination": "Termination", "reaction_consistency": "Reaction consistency", "language": "Language",
    "length": "Message length",
}


def _n(value: Any) -> str:
    if value is None:
        return DASH
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _emit(sections: list[Section], notes: list[str], fmt: ReportFormat, data: dict[str, Any], width: int | None,
          droppable: tuple[str, ...] = ()) -> str:
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        for title, header, rows in sections:
            writer.writerow(["section", *[h.replace("\n", " ") for h in header]])
            for row in rows:
                writer.writerow([title, *row])
        return buf.getvalue()
    if fmt == "md":
        return _markdown([(t, [h.replace("\n", " ") for h in hd], r) for t, hd, r in sections], notes)
    return render_tables(sections, notes, width or terminal_width(), droppable=droppable)


def render_fidelity(summary: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    judge = summary.get("judge") or "none (code only)"
    notes = [f"Warning: {w}" for w in summary.get("warnings", [])]
    ufs = summary["ufs"]
    rows = [["UFS (mean per session)", pct(ufs), _n(ufs.get("n_sessions"))]]
    pdr = summary["premature_disclosure_rate"]
    rows.append(["Premature-disclosure rate", pct(pdr), _n(pdr.get("n_sessions"))])
    for name, key in (("UFS, successful sessions", "success"), ("UFS, failed sessions", "failure")):
        cell = summary["by_success"][key]
        rows.append([name, pct(cell), _n(cell.get("n_sessions"))])
    for name, key in (("UFS, sessions the gate flagged", "flagged"), ("UFS, sessions it did not", "clean")):
        cell = summary["by_gate"][key]
        rows.append([name, pct(cell), _n(cell.get("n_sessions"))])
    fam_rows = [[FAMILY_NAMES.get(f, f), pct(c), _n(c.get("n_items")), _n(c.get("n_unchecked")),
                 _n(c.get("n_not_applicable"))] for f, c in summary["by_family"].items()]
    sections: list[Section] = [
        (f"User Fidelity Score of {summary.get('run')} (judge: {judge})", ["Figure", "% [95% CI]", "sessions"], rows),
        ("By item family (satisfied / checked items)", ["Family", "% satisfied", "checked", "unchecked", "n/a"],
         fam_rows),
    ]
    notes.append("UFS = satisfied / checked items of a session; premature-disclosure rate = sessions with a "
                 "disclosure violation / sessions with a disclosure item checked.")
    notes.append(f"{summary.get('n_sessions')} sessions, {summary.get('n_judged')} judged"
                 + (f", {summary.get('judge_failures')} judge answers unusable (their judge items unchecked)"
                    if summary.get("judge_failures") else "")
                 + ". The judge never sees a session's success, termination or the simulator's acts; intervals are "
                   "cluster bootstraps over personas.")
    return _emit(sections, notes, fmt, summary, width, droppable=("unchecked", "n/a"))


def _cost(cell: dict[str, Any], unit: str) -> str:
    value = cell.get(unit)
    if value is None:
        return DASH
    return f"${value:.6f}" if unit == "usd" else f"{value:,.0f}"


def render_frontier(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    unit = report["cost_unit"]
    rows = []
    for e in sorted(report["entries"], key=lambda e: (e["cost"]["simulator"][unit] is None,
                                                       e["cost"]["simulator"][unit] or 0)):
        rows.append([e["label"] + (" [DEMO]" if e["demo"] else ""), _cost(e["cost"]["simulator"], unit),
                     _cost(e["cost"]["judges"], unit), _cost(e["cost"]["model_under_test"], unit), pct(e["ufs"]),
                     pct(e.get("premature_disclosure_rate")), "yes" if e["pareto"] else "", str(e["n_sessions"])])
    per = "USD" if unit == "usd" else "tokens"
    header = ["Simulator (mode)", f"simulator\n{per}/session", f"judges\n{per}/session",
              f"model under test\n{per}/session", "UFS %", "premature\ndisclosure %", "Pareto", "sessions"]
    notes = [f"Warning: {w}" for w in report.get("warnings", [])]
    notes += [f"{e['label']}: {e['note']}" for e in report["entries"] if e.get("note")]
    if report.get("target") is not None:
        notes.append(f"Cheapest simulator with UFS >= {report['target']:.2f}: "
                     f"{report.get('cheapest_meeting_target') or 'none'} (by the estimate); "
                     f"{report.get('cheapest_meeting_target_ci') or 'none'} (by the interval's lower bound).")
    notes.append("Simulator cost = realiser + assessor calls; judges = satisfaction judge + UFS judge.")
    return _emit([("Cost-fidelity frontier", header, rows)], notes, fmt, report, width,
                 droppable=("sessions", "premature\ndisclosure %", f"model under test\n{per}/session"))


def _diff(m: dict[str, Any]) -> str:
    return paired_diff(m, star=True)


def render_sensitivity(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    rows = []
    unmeasured: dict[str, str] = {}
    for change in report["changes"]:
        for metric, m in (change.get("metrics") or {}).items():
            rows.append([change["assistant"], change["config"], metric, f"{m['a']:.3f}", f"{m['b']:.3f}", _diff(m),
                         str(change.get("n_pairs", DASH))])
        for metric, why in (change.get("not_measured") or {}).items():
            rows.append([change["assistant"], change["config"], metric, DASH, DASH, NOT_MEASURED, DASH])
            unmeasured.setdefault(metric, why)
    rank_rows = []
    for metric, entry in report["rankings"].items():
        for config, v in entry["versus_baseline"].items():
            tau = v["kendall_tau"]
            rank_rows.append([metric, config, str(v["n_assistants"]),
                              DASH if tau.get("tau") is None else f"{tau['tau']:+.2f}",
                              DASH if v["order_changed"] is None
                              else f"CHANGED ({v.get('how') or 'reordered'})" if v["order_changed"] else "same"])
    base = report["baseline"]
    sections: list[Section] = [
        (f"Session metrics under each simulator, minus the baseline ({base}); * = the 95% CI excludes 0",
         ["Assistant", "Simulator", "Metric", "baseline", "this", "Δ [95% CI]", "pairs"], rows),
        ("Ranking of the assistants: baseline against each simulator", ["Metric", "Simulator", "assistants",
                                                                        "Kendall tau", "order"], rank_rows),
    ]
    verdict = report["verdict"]
    notes = [f"{verdict['metric_changes_significant']} metric changes are significant; the assistants' order changes "
             f"for: {', '.join(verdict['orders_changed']) or 'no metric'}. Paired by persona and trial (same user, "
             "same seed); intervals are cluster bootstraps over personas."]
    notes += [f"{metric}: {why}." for metric, why in unmeasured.items()]
    notes += [f"Left out: {e['reason']}." for e in report.get("excluded") or []]
    return _emit(sections, notes, fmt, report, width, droppable=("pairs", "baseline", "this"))
