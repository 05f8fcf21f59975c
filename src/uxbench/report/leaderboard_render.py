"""The leaderboard (`report.leaderboard.leaderboard`) as a terminal table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from uxbench.report.layout import Section, render_tables, terminal_width
from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, pct

DROPPABLE = ("Δ vs above (pp)", "Size", "Family", "Org", "n", "Released")
"""Columns a narrow terminal may lose, in this order (rank, model and the figure always stay)."""
_TREND_NAMES = {"release": "release date", "params": "parameter count", "size": "size class"}


def _signed(diff: dict[str, Any] | None) -> str:
    if not diff or diff.get("diff") is None:
        return DASH
    return pct({"value": diff["diff"], "ci_low": diff.get("ci_low"), "ci_high": diff.get("ci_high")}, signed=True)


def _size(row: dict[str, Any]) -> str:
    if row["params_b"] is not None:
        return f"{row['params_b']:g}B"
    return row["size"] or DASH


def _rows(board: dict[str, Any]) -> list[list[str]]:
    out = []
    for row in board["rows"]:
        rank = DASH if row["rank"] is None else str(row["rank"])
        label = row["label"] + (" [DEMO DATA]" if row["demo_data"] else "")
        out.append([rank, label, pct(row["metric"]), str(row["metric"].get("n") or DASH),
                    _signed(row.get("vs_previous")), row["org"] or DASH, row["family"] or DASH,
                    row["released"] or DASH, _size(row)])
    return out


def trend_lines(board: dict[str, Any]) -> list[str]:
    trends = list(board["trends"].values())
    if trends and all(t["n"] == 0 for t in trends):
        return ["Scaling trends: none of these models is in the model table (data/models.yaml; add entries with "
                "$UXBENCH_MODELS or --models)."]
    lines = []
    for t in trends:
        what = _TREND_NAMES.get(t["by"], t["by"])
        left = f"; no {what} for: {', '.join(t['left_out'])}" if t["left_out"] else ""
        if t["rho"] is None:
            lines.append(f"Scaling by {what}: not computed ({t['n']} models with a {what}; needs 3 with different "
                         f"values){left}.")
            continue
        ci = f" [{t['ci_low']:+.2f}, {t['ci_high']:+.2f}]" if t["ci_low"] is not None else ""
        test = "exact permutation" if t["exact"] else f"{t['permutations']} permutations"
        lines.append(f"Scaling by {what}: Spearman rho {t['rho']:+.2f}{ci}, p = {t['p_value']:.3f} ({test}), "
                     f"n = {t['n']} models{left}.")
    return lines


def _board_notes(board: dict[str, Any]) -> list[str]:
    judge = {r["judge_spec"] for r in board["rows"] if r.get("judge_spec")}
    lines = [f"Judge: {', '.join(sorted(judge))}."] if judge else []
    return lines + trend_lines(board) + [f"Note: {w}" for w in board["warnings"]]


def _sections(report: dict[str, Any]) -> tuple[list[Section], list[list[str]]]:
    header = ["Rank", "Model", "", "n", "Δ vs above (pp)", "Org", "Family", "Released", "Size"]
    sections, after = [], []
    for board in report["tasks"].values():
        head = list(header)
        head[2] = f"{board['metric']} [95% CI]"
        sections.append((f"{board['title']}: {board['metric']} {board['convention']}", head, _rows(board)))
        after.append(_board_notes(board))
    return sections, after


def _notes(report: dict[str, Any]) -> list[str]:
    notes = ["DEMO DATA: some runs use the bundled demo cases, not the benchmark."] if report["demo_data"] else []
    notes.append("Ranks: runs whose paired difference from the run above has a 95% CI containing 0 share its rank.")
    notes += [f"Skipped {s}" for s in report["skipped"]]
    if report["ignored_pairwise"]:
        notes.append(f"Pairwise comparison directories are not ranked ({len(report['ignored_pairwise'])} ignored; "
                     "see `uxbench bias`).")
    return notes


def _csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["task", "rank", "label", "model", "metric", "value", "ci_low", "ci_high", "n",
                     "tied_with_previous", "diff_vs_previous", "diff_ci_low", "diff_ci_high", "judge", "judge_spec",
                     "org", "family", "released", "size", "params_b", "demo_data", "run_dir"])
    for task, board in report["tasks"].items():
        for row in board["rows"]:
            m, d = row["metric"], row.get("vs_previous") or {}
            line = [task, row["rank"], row["label"], row["model"], board["metric"], m["value"], m["ci_low"],
                    m["ci_high"], m["n"], row["tied_with_previous"], d.get("diff"), d.get("ci_low"), d.get("ci_high"),
                    row["judge"], row["judge_spec"], row["org"], row["family"], row["released"], row["size"],
                    row["params_b"], row["demo_data"], row["run_dir"]]
            writer.writerow(["" if v is None else v for v in line])
    return buf.getvalue()


def render_leaderboard(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return _csv(report)
    sections, after = _sections(report)
    notes = _notes(report)
    if fmt == "md":
        blocks = [_markdown([section], []) + "".join(f"\n{line}\n" for line in lines)
                  for section, lines in zip(sections, after, strict=True)]
        return _markdown([], notes) + "\n" + "\n".join(blocks)
    return render_tables(sections, notes, width or terminal_width(), droppable=DROPPABLE, after=after)
