"""Render comparison reports and run summaries as a terminal table, Markdown, CSV or JSON.

Figures are stored as fractions; the human formats show percentages (points for positive bias) as
`72.9 [70.1, 75.6]`. CSV keeps the fractions for machines. Demo-data runs say so in every format.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal, get_args

from rich.console import Console
from rich.table import Table
from rich.text import Text

from uxbench.errors import ConfigError
from uxbench.report.compare import DEMO_LABEL, METRICS, report_from_summaries

ReportFormat = Literal["table", "md", "csv", "json"]
FORMATS: tuple[str, ...] = get_args(ReportFormat)
DASH = "—"
_NAMES = {
    "avg_acc": "Avg-Acc", "good_acc": "Good-Acc", "bad_acc": "Bad-Acc", "bad_f1": "Bad-F1",
    "positive_bias": "Pos. bias (pp)", "accuracy": "Accuracy",
}
_TITLES = {
    "all": "All cases (unparseable and neutral count as wrong)",
    "valid_only": "Valid answers only (published leaderboard convention)",
}
_DEMO_BANNER = f"{DEMO_LABEL}: figures come from the bundled demo cases, not from the benchmark."


def pct(cell: dict[str, Any] | None, *, signed: bool = False) -> str:
    """`72.9 [70.1, 75.6]` from a {value, ci_low, ci_high} cell of fractions; a dash when undefined."""
    if not cell or cell.get("value") is None:
        return DASH
    spec = "+.1f" if signed else ".1f"
    text = format(100 * cell["value"], spec)
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{100 * cell['ci_low']:.1f}, {100 * cell['ci_high']:.1f}]"
    return text


def _p(p: float | None) -> str:
    if p is None:
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _run_cell(row: dict[str, Any]) -> str:
    return f"{row['label']} [{DEMO_LABEL}]" if row["demo_data"] else str(row["label"])


def _n_text(row: dict[str, Any], conv: str) -> str:
    if conv == "valid_only":
        return str(row["valid_only"].get("n", DASH))
    return f"{row['n']} ({row['n_good']}/{row['n_bad']})"


def _metric_tables(report: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) for each convention."""
    out = []
    for conv, title in _TITLES.items():
        header = ["Run", "Data", "n (good/bad)" if conv == "all" else "n valid"]
        header += [f"{_NAMES[m]} %" if m != "positive_bias" else _NAMES[m] for m in METRICS]
        header.append("Unparseable %")
        rows = []
        for row in report["runs"]:
            cells = [_run_cell(row), str(row["data"] or DASH), _n_text(row, conv)]
            cells += [pct(row[conv][m], signed=(m == "positive_bias")) for m in METRICS]
            cells.append(pct(row["unparseable"]))
            rows.append(cells)
        out.append((f"UX Judge: {title}", header, rows))
    return out


def _paired_table(report: dict[str, Any]) -> tuple[str, list[str], list[list[str]]] | None:
    if not report.get("paired"):
        return None
    header = ["Run", "n matched", "both right", "both wrong", "only this run", "only baseline",
              "McNemar p", "test", "Δ Avg-Acc (pp)"]
    rows = []
    for e in report["paired"]:
        m = e.get("mcnemar") or {}
        d = e.get("avg_acc_diff") or {}
        diff = {"value": d.get("diff"), "ci_low": d.get("ci_low"), "ci_high": d.get("ci_high")}
        rows.append([str(e["other"]), str(e["n_matched"]), str(m.get("both_right", DASH)),
                     str(m.get("both_wrong", DASH)), str(m.get("a_only", DASH)), str(m.get("b_only", DASH)),
                     _p(m.get("p_value")), str(m.get("method", DASH)), pct(diff, signed=True)])
    return (f"Paired tests vs baseline {report['baseline']} (all cases)", header, rows)


def _breakdown_tables(summary: dict[str, Any], limit: int) -> list[tuple[str, list[str], list[list[str]]]]:
    out = []
    for name, values in ((summary.get("metrics") or {}).get("breakdowns") or {}).items():
        keys = list(values)
        shown = set(sorted(keys, key=lambda k: -int(values[k].get("n", 0)))[:limit])
        rows = [
            [k, str(v["n"]), pct(v.get("good_acc")), pct(v.get("bad_acc")), pct(v.get("avg_acc")),
             pct(v.get("unparseable"))]
            for k, v in values.items() if k in shown
        ]
        title = f"By {name}" + (f" (largest {limit} of {len(keys)})" if len(keys) > limit else "")
        out.append((title, [name, "n", "Good-Acc %", "Bad-Acc %", "Avg-Acc %", "Unparseable %"], rows))
    return out


def _notes(report: dict[str, Any]) -> list[str]:
    notes = [_DEMO_BANNER] if report.get("demo_data") else []
    return notes + [f"Note: {w}" for w in report.get("warnings", [])]


def _rich(sections: list[tuple[str, list[str], list[list[str]]]], notes: list[str], width: int) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    for note in notes:
        console.print(Text(note))
    for title, header, rows in sections:
        table = Table(title=Text(title), title_justify="left")
        for i, h in enumerate(header):
            table.add_column(Text(h), justify="left" if i < 2 else "right", no_wrap=i >= 2)
        for r in rows:
            table.add_row(*(Text(c) for c in r))
        console.print(table)
    # Rich pads every line to the console width; trailing blanks only get in the way.
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(sections: list[tuple[str, list[str], list[list[str]]]], notes: list[str]) -> str:
    lines = [f"> **{n}**" if n == _DEMO_BANNER else f"> {n}" for n in notes]
    for title, header, rows in sections:
        lines += ["", f"### {title}", "", "| " + " | ".join(map(_md_cell, header)) + " |"]
        lines.append("|" + "|".join(("---" if i < 2 else "---:") for i in range(len(header))) + "|")
        lines += ["| " + " | ".join(map(_md_cell, r)) + " |" for r in rows]
    return "\n".join(lines).lstrip("\n") + "\n"


def _csv(report: dict[str, Any]) -> str:
    """One row per run; fractions (not percentages) with value/ci_low/ci_high columns."""
    fixed = ["label", "model", "task", "run_dir", "run_id", "data", "data_label", "fingerprint",
             "n", "n_errors", "n_good", "n_bad"]
    metric_cols = [(conv, m) for conv in _TITLES for m in METRICS]
    header = [*fixed, "valid_only.n"]
    for conv, m in metric_cols:
        header += [f"{conv}.{m}.{p}" for p in ("value", "ci_low", "ci_high")]
    header += [f"unparseable.{p}" for p in ("k", "value", "ci_low", "ci_high")]
    header += ["paired.n_matched", "paired.mcnemar_p", "paired.avg_acc_diff", "paired.avg_acc_diff_ci_low",
               "paired.avg_acc_diff_ci_high"]
    by_other = {e["other"]: e for e in report.get("paired", [])}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in report["runs"]:
        line: list[Any] = [row.get(k) for k in fixed] + [row["valid_only"].get("n")]
        for conv, m in metric_cols:
            line += [row[conv][m].get(p) for p in ("value", "ci_low", "ci_high")]
        line += [row["unparseable"].get(p) for p in ("k", "value", "ci_low", "ci_high")]
        e = by_other.get(row["label"])
        d = (e or {}).get("avg_acc_diff") or {}
        line += [e["n_matched"] if e else None, ((e or {}).get("mcnemar") or {}).get("p_value"),
                 d.get("diff"), d.get("ci_low"), d.get("ci_high")]
        writer.writerow(["" if v is None else v for v in line])
    return buf.getvalue()


def _check_fmt(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ConfigError(f"Unknown report format {fmt!r}; choose one of: {', '.join(FORMATS)}.")


def render(report: dict[str, Any], fmt: ReportFormat, *, width: int = 200) -> str:
    """A `compare_runs` / `report_from_summaries` report as text in the chosen format."""
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return _csv(report)
    sections = _metric_tables(report)
    paired = _paired_table(report)
    if paired:
        sections.append(paired)
    notes = _notes(report)
    return _rich(sections, notes, width) if fmt == "table" else _markdown(sections, notes)


def render_summary(
    summary: dict[str, Any], fmt: ReportFormat, *, width: int = 160, max_breakdown_values: int = 8,
    breakdowns: bool = True,
) -> str:
    """One run's summary, concise: headline figures in both conventions, unparseable share, breakdowns."""
    _check_fmt(fmt)
    report = report_from_summaries([summary])
    if fmt == "csv":
        return _csv(report)
    if fmt == "json":
        row = report["runs"][0]
        short = {**row, "breakdowns": (summary.get("metrics") or {}).get("breakdowns", {})}
        return json.dumps(short, ensure_ascii=False, indent=2) + "\n"
    row = report["runs"][0]
    head = ["Convention", "n"] + [f"{_NAMES[m]} %" if m != "positive_bias" else _NAMES[m] for m in METRICS]
    rows = [[_TITLES[c].split(" (")[0], _n_text(row, c)] + [pct(row[c][m], signed=(m == "positive_bias"))
                                                             for m in METRICS] for c in _TITLES]
    title = f"{row['model']} on {row['data'] or 'data'}" + (f" [{DEMO_LABEL}]" if row["demo_data"] else "")
    unp = row["unparseable"]
    notes = [*_notes(report), f"Unparseable answers: {unp.get('k')} of {unp.get('n')} ({pct(unp)} %)"]
    if row["neutral_escape_bad"].get("value") is not None:
        notes.append(f"Neutral escape (bad cases answered neutral): {pct(row['neutral_escape_bad'])} %")
    sections = [(title, head, rows), *(_breakdown_tables(summary, max_breakdown_values) if breakdowns else [])]
    if not breakdowns and summary.get("run_dir"):
        notes.append(f"Breakdowns by scenario, dimension, difficulty and turns: uxbench report {summary['run_dir']}")
    return _rich(sections, notes, width) if fmt == "table" else _markdown(sections, notes)
