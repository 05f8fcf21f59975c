"""`uxbench plan`'s answer as a terminal table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from uxbench.report.layout import render_tables, terminal_width
from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown

HEADER = ["Discordance from", "Discordance", "Cases needed", "Detectable at\nthe pilots' size"]


def _rows(report: dict[str, Any]) -> list[list[str]]:
    out = []
    for row in report["rows"]:
        needed = f"{row['n_needed']:,}" if row["n_needed"] is not None else "not possible"
        mdd = f"{100 * row['mdd_at_pilot']:.1f} pp at {int(row['pilot_n'])}" if row["mdd_at_pilot"] else DASH
        out.append([row["source"], f"{row['discordance']:.3f}", needed, mdd])
    return out


def render_plan(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["task", "difference", "alpha", "power", "source", "discordance", "n_needed", "pilot_n",
                         "mdd_at_pilot", "note"])
        for row in report["rows"]:
            writer.writerow(["" if v is None else v for v in (
                report["task"], report["difference"], report["alpha"], report["power"], row["source"],
                row["discordance"], row["n_needed"], row["pilot_n"], row["mdd_at_pilot"], row["note"])])
        return buf.getvalue()
    title = (f"Cases for a {report['figure']} difference of {100 * report['difference']:.1f} pp "
             f"(paired, power {report['power']:g}, alpha {report['alpha']:g})")
    notes = []
    if report["n_needed"] is not None:
        notes.append(f"Answer: {report['n_needed']:,} {report['unit']} shared by both systems"
                     + (" (the largest of the rows)." if len(report["rows"]) > 1 else "."))
    notes.append(f"Method: {report['method']}: n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, psi = the share "
                 "of cases on which the two systems disagree.")
    notes += report["notes"]
    section = [(title, HEADER, _rows(report))]
    if fmt == "table":
        return render_tables(section, [], width or terminal_width(), wrap=(0,), after=[notes])
    return _markdown([(t, [h.replace("\n", " ") for h in head], rows) for t, head, rows in section], notes,
                     text_columns=1)
