"""Render comparison reports and run summaries as a terminal table, Markdown, CSV or JSON.

Figures are stored as fractions; the human formats show percentages (points for positive bias) as
`72.9 [70.1, 75.6]`. CSV keeps the fractions for machines. Demo-data runs say so in every format.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal, get_args

from uxbench.errors import ConfigError
from uxbench.report.compare import DEMO_LABEL, METRICS, report_from_summaries
from uxbench.report.layout import fit_columns, render_tables, terminal_width
from uxbench.report.usage import cost_note

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
COMPARE_DROPPABLE = ("Data", "Accuracy %", "Good-Acc %", "Bad-Acc %", "Unparseable %", "Bad-F1 %", "test",
                     "both right", "both wrong", "Pos. bias (pp)", "Detectable (pp)")
"""Columns a narrow terminal leaves out of the comparison tables, first to last (md, csv and json keep all)."""
BREAKDOWN_DROPPABLE = ("Unparseable %", "Good-Acc %", "Bad-Acc %")
"""Columns the breakdown tables leave out on a narrow terminal, the same for every breakdown."""


NOT_MEASURED = "not measured"
NO_INTERVAL = "(1 persona: no CI)"
"""Printed after a value whose interval is degenerate (`degenerate` in the cell: one cluster)."""


def pct(cell: dict[str, Any] | None, *, signed: bool = False) -> str:
    """`72.9 [70.1, 75.6]` from a {value, ci_low, ci_high} cell of fractions; a dash when undefined."""
    if cell and cell.get("not_measured"):
        return NOT_MEASURED
    if not cell or cell.get("value") is None:
        return DASH
    spec = "+.1f" if signed else ".1f"
    text = format(100 * cell["value"], spec)
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{100 * cell['ci_low']:.1f}, {100 * cell['ci_high']:.1f}]"
    elif cell.get("degenerate"):
        text += f" {NO_INTERVAL}"
    return text


def paired_diff(m: dict[str, Any], *, star: bool = False) -> str:
    """`+0.125 [+0.031, +0.219]` from a paired-difference cell (`diff`, `ci_low`, `ci_high`, `significant`), with
    " *" when `star` and significant; no interval for a degenerate one (one persona)."""
    if m.get("diff") is None:
        return DASH
    text = f"{m['diff']:+.3f}"
    if m.get("ci_low") is not None and m.get("ci_high") is not None:
        text += f" [{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]"
    elif m.get("degenerate"):
        text += f" {NO_INTERVAL}"
    return text + (" *" if star and m.get("significant") else "")


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
    header = ["Run", "n matched", "both right", "both wrong", "right only in\nthis run / baseline",
              "McNemar p", "test", "Δ Avg-Acc (pp)", "Detectable (pp)"]
    rows = []
    for e in report["paired"]:
        m = e.get("mcnemar") or {}
        d = e.get("avg_acc_diff") or {}
        diff = {"value": d.get("diff"), "ci_low": d.get("ci_low"), "ci_high": d.get("ci_high")}
        rows.append([str(e["other"]), str(e["n_matched"]), str(m.get("both_right", DASH)),
                     str(m.get("both_wrong", DASH)), f"{m.get('a_only', DASH)} / {m.get('b_only', DASH)}",
                     _p(m.get("p_value")), str(m.get("method", DASH)), pct(diff, signed=True),
                     _detectable(e.get("mdd"))])
    return (f"Paired tests vs baseline {report['baseline']} (all cases)", header, rows)


def _ci_methods(summary: dict[str, Any]) -> str:
    """How the intervals of a Task 1 summary were made, as the figures say it."""
    boot = (summary.get("metrics") or {}).get("bootstrap") or {}
    rounds = f" ({boot['n_boot']} rounds, seed {boot.get('seed', 0)})" if boot.get("n_boot") else ""
    return f"Avg-Acc, Bad-F1 and positive bias by stratified bootstrap{rounds}; the other rates by Wilson"


def _detectable(mdd: dict[str, Any] | None) -> str:
    """The minimum detectable difference (80% power, alpha 0.05) of a paired comparison, in points."""
    return DASH if not mdd or mdd.get("value") is None else f"{100 * mdd['value']:.1f}"


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
    if report.get("paired"):
        notes.append("Δ Avg-Acc: paired stratified bootstrap; McNemar: exact binomial below 25 discordant cases, "
                     "else chi-square with continuity correction.")
        notes.append("Detectable: the smallest Avg-Acc difference the matched cases detect with 80% power at alpha "
                     "0.05, from the pair's discordance (uxbench plan --task judge for the cases a smaller one needs).")
    return notes + [f"Note: {w}" for w in report.get("warnings", [])]


def _rich(sections: list[tuple[str, list[str], list[list[str]]]], notes: list[str], width: int | None, *,
          droppable: tuple[str, ...] = (), wrap: tuple[int, ...] = (0, 1)) -> str:
    """Terminal tables no wider than `width` (default: the terminal's): the columns named in `droppable` go, in
    that order, while a table is too wide (a note names them), the `wrap` columns (names) wrap, and figures are
    never wrapped or cut (`report.layout`)."""
    return render_tables(sections, notes, width or terminal_width(), droppable=droppable, wrap=wrap)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(sections: list[tuple[str, list[str], list[list[str]]]], notes: list[str], *,
              text_columns: int = 2) -> str:
    """Markdown tables: the first `text_columns` columns left-aligned (names), the others right-aligned (figures)."""
    lines = [f"> **{n}**" if n == _DEMO_BANNER else f"> {n}" for n in notes]
    for title, header, rows in sections:
        lines += ["", f"### {title}", "", "| " + " | ".join(map(_md_cell, header)) + " |"]
        lines.append("|" + "|".join(("---" if i < text_columns else "---:") for i in range(len(header))) + "|")
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


def render(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
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
    if fmt == "table":
        return _rich(sections, notes, width, droppable=COMPARE_DROPPABLE, wrap=(0,))
    return _markdown([(t, [h.replace("\n", " ") for h in head], rows) for t, head, rows in sections], notes)


def render_summary(
    summary: dict[str, Any], fmt: ReportFormat, *, width: int | None = None, max_breakdown_values: int = 8,
    breakdowns: bool = True,
) -> str:
    """One run's summary, concise: headline figures in both conventions (a row per figure, a column per
    convention), unparseable share, breakdowns."""
    _check_fmt(fmt)
    report = report_from_summaries([summary])
    if fmt == "csv":
        return _csv(report)
    if fmt == "json":
        row = report["runs"][0]
        short = {**row, "breakdowns": (summary.get("metrics") or {}).get("breakdowns", {})}
        return json.dumps(short, ensure_ascii=False, indent=2) + "\n"
    row = report["runs"][0]
    head = ["Figure", *(_TITLES[c].split(" (")[0] for c in _TITLES)]
    rows = [["n (good/bad)", _n_text(row, "all"), _n_text(row, "valid_only")]]
    rows += [[f"{_NAMES[m]} %" if m != "positive_bias" else _NAMES[m],
              *(pct(row[c][m], signed=(m == "positive_bias")) for c in _TITLES)] for m in METRICS]
    title = f"{row['model']} on {row['data'] or 'data'}" + (f" [{DEMO_LABEL}]" if row["demo_data"] else "")
    unp = row["unparseable"]
    notes = [*_notes(report), f"Unparseable answers: {unp.get('k')} of {unp.get('n')} ({pct(unp)} %)"]
    left_out = [f"{summary[k]} {what}" for k, what in (("n_errors", "failed"), ("n_too_long", "too long for the model"))
                if summary.get(k)]
    if left_out:
        notes.append(f"Left out of the figures: {' and '.join(left_out)} of {summary.get('n_samples')} samples.")
    if row["neutral_escape_bad"].get("value") is not None:
        notes.append(f"Neutral escape (bad cases answered neutral): {pct(row['neutral_escape_bad'])} %")
    notes += _graded_notes(summary)
    notes.append("All cases: " + _TITLES["all"].split(" (")[1].rstrip(")") + "; valid answers only: the "
                 + _TITLES["valid_only"].split(" (")[1].rstrip(")") + ". Figures: % [95% CI]: "
                 + _ci_methods(summary) + ".")
    cost = cost_note(summary)
    if cost:
        notes.append(cost)
    parts = _breakdown_tables(summary, max_breakdown_values) if breakdowns else []
    if not breakdowns and summary.get("run_dir"):
        notes.append(f"Breakdowns by scenario, dimension, difficulty and turns: uxbench report {summary['run_dir']}")
    if fmt != "table":
        return _markdown([(title, head, rows), *parts], notes, text_columns=1)
    width = width or terminal_width()
    parts, dropped = same_columns(parts, width, BREAKDOWN_DROPPABLE)
    if dropped:
        notes.append(f"The breakdowns leave out {', '.join(dropped)} to fit {width} columns (--format md, csv or "
                     "json show everything).")
    return _rich([(title, head, rows), *parts], notes, width, wrap=(0,))


def _graded_notes(summary: dict[str, Any]) -> list[str]:
    """Likert and rubric runs: the rule that made the verdicts, and how often a liked and a disliked case tie."""
    out = []
    rubric = summary.get("rubric")
    if isinstance(rubric, dict):
        out.append(f"Rubric {rubric.get('id')}: {rubric.get('rule')} ({rubric.get('threshold')}).")
    graded = rubric if isinstance(rubric, dict) else summary.get("likert")
    ties = graded.get("pair_ties") if isinstance(graded, dict) else None
    if isinstance(ties, dict) and ties.get("tie_share"):
        out.append(f"Liked vs disliked cases, {ties['n_pairs']} pairs: same score {pct(ties['tie_share'])} %, "
                   f"liked scored higher {pct(ties['liked_higher'])} %, disliked higher "
                   f"{pct(ties['disliked_higher'])} %.")
    return out


def same_columns(sections: list[tuple[str, list[str], list[list[str]]]], width: int, droppable: tuple[str, ...]
                 ) -> tuple[list[tuple[str, list[str], list[list[str]]]], list[str]]:
    """Tables that share their columns (breakdowns) keep the same ones: the droppable columns go, in order, until
    the widest of them fits `width`. Returns the tables and the names left out."""
    if not sections:
        return sections, []
    header = sections[0][1]
    every_row = [r for _, _, rows in sections for r in rows]
    names = [title.split(" (")[0] for title, _, _ in sections]  # each table's own first-column header counts too
    rows = every_row + [[name, *header[1:]] for name in names]
    keep, dropped = fit_columns(header, rows, width, optional=[header.index(d) for d in droppable if d in header],
                                wrap=(0,))
    out = []
    for title, head, table_rows in sections:
        out.append((title, [head[i] for i in keep], [[r[i] for i in keep] for r in table_rows]))
    return out, dropped
