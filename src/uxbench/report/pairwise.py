"""`uxbench pairwise` results as text: win rate of A over B, ties, position inconsistency."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from uxbench.report.layout import render_tables, terminal_width
from uxbench.report.render import ReportFormat, _check_fmt, _markdown, pct

_TASKS = {"eval": "Task 2", "recovery": "Task 3"}


def pairwise_rows(f: dict[str, Any]) -> list[list[str]]:
    """(figure, value) rows of one judge's comparison."""
    wr = f.get("win_rate_a") or {}
    n_ties = f["ties_both_orders"] + f["position_inconsistent"]
    return [
        ["A over B, win rate % (ties half)", pct(wr)],
        ["A wins / B wins / ties", f"{f['a_wins']} / {f['b_wins']} / {n_ties}"],
        ["Tie % (reported apart)", pct(wr.get("ties"))],
        ["  tie in both orders", str(f["ties_both_orders"])],
        ["  orders disagree (tie)", str(f["position_inconsistent"])],
        ["Position inconsistency %", pct(f.get("position_inconsistency"))],
        ["First position picked %", pct(f.get("first_position_picked"))],
        ["Pairs decided (n)", str(f["n_decided"])],
        ["Unreadable / not judged", f"{f['n_unreadable']} / {f['n_missing']}"],
    ]


def _notes(f: dict[str, Any]) -> list[str]:
    m = f.get("matching") or {}
    notes = [f"A = {f['run_a']['model']} ({f['run_a']['path']})", f"B = {f['run_b']['model']} ({f['run_b']['path']})"]
    skipped = {"generation failed": m.get("n_generation_failed", 0),
               "conversation differs": m.get("n_context_differs", 0), "no stored case": m.get("n_without_case", 0)}
    told = ", ".join(f"{v} {k}" for k, v in skipped.items() if v)
    notes.append(f"Cases: {m.get('n_shared', 0)} shared of {m.get('n_a', 0)} (A) and {m.get('n_b', 0)} (B)"
                 + (f"; left out: {told}" if told else "") + (f"; --limit {f['limit']}" if f.get("limit") else "")
                 + f"; {f['n_pairs']} pairs compared, each in both orders.")
    if f["n_unreadable"]:
        notes.append(f"{f['n_unreadable']} pairs are undecided: in at least one order the judge named neither A, B "
                     "nor a tie (its answers are in pairwise.sqlite, raw_output).")
    if f["n_missing"]:
        notes.append(f"{f['n_missing']} pairs lack a successful answer in one order: rerun the same command.")
    return notes


def render_pairwise(figures: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(figures, ensure_ascii=False, indent=2) + "\n"
    rows = pairwise_rows(figures)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        wr = figures.get("win_rate_a") or {}
        writer.writerow(["judge", "spec", "task", "model_a", "model_b", "n_decided", "win_rate_a", "ci_low", "ci_high",
                         "a_wins", "b_wins", "ties_both_orders", "position_inconsistent", "n_unreadable", "n_missing"])
        writer.writerow([figures["judge"], figures["spec"], figures["task"], figures["run_a"]["model"],
                         figures["run_b"]["model"], figures["n_decided"], wr.get("value"), wr.get("ci_low"),
                         wr.get("ci_high"), figures["a_wins"], figures["b_wins"], figures["ties_both_orders"],
                         figures["position_inconsistent"], figures["n_unreadable"], figures["n_missing"]])
        return buf.getvalue()
    strategy = (figures.get("settings") or {}).get("strategy", "")
    title = f"Pairwise, {_TASKS.get(figures['task'], figures['task'])}: judge {figures['spec']} ({strategy})"
    sections = [(title, ["Figure", "Value [95% CI]"], rows)]
    notes = _notes(figures)
    if fmt == "md":
        return _markdown(sections, notes)
    return render_tables(sections, notes, width or terminal_width(), wrap=(0,))
