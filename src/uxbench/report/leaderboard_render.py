"""The leaderboard (`report.leaderboard.leaderboard`) as a terminal table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from uxbench.report.layout import Section, render_tables, terminal_width
from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, pct
from uxbench.report.trust_text import FLAG_MARK, corrected_cell, correction_notes

DROPPABLE = ("Δ vs above (pp)", "Size", "Family", "Org", "n", "Released", "Ties with")
"""Columns a narrow terminal may lose, in this order (position, rank, model and the figures always stay)."""
_TREND_NAMES = {"release": "release date", "params": "parameter count", "size": "size class"}


def _signed(diff: dict[str, Any] | None) -> str:
    if not diff or diff.get("diff") is None:
        return DASH
    return pct({"value": diff["diff"], "ci_low": diff.get("ci_low"), "ci_high": diff.get("ci_high")}, signed=True)


def _size(row: dict[str, Any]) -> str:
    if row["params_b"] is not None:
        return f"{row['params_b']:g}B"
    return row["size"] or DASH


def _has_corrected(board: dict[str, Any]) -> bool:
    return any(row.get("corrected") for row in board["rows"])


def _ties(board: dict[str, Any], row: dict[str, Any]) -> str:
    position = {r["label"]: i + 1 for i, r in enumerate(board["rows"])}
    return " ".join(f"#{position[label]}" for label in row.get("ties_with") or []) or "none"


def _rows(board: dict[str, Any]) -> list[list[str]]:
    out = []
    corrected = _has_corrected(board)
    for i, row in enumerate(board["rows"]):
        rank = DASH if row["rank"] is None else str(row["rank"])
        label = row["label"] + (" [DEMO DATA]" if row["demo_data"] else "")
        figures = [pct(row["metric"])] + ([corrected_cell(row.get("corrected"))] if corrected else [])
        out.append([f"#{i + 1}", rank, label, *figures, str(row["metric"].get("n") or DASH), _ties(board, row),
                    _signed(row.get("vs_previous")), row["org"] or DASH, row["family"] or DASH,
                    row["released"] or DASH, _size(row)])
    return out


def _p_text(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def pair_text(diff: dict[str, Any] | None) -> str:
    """A pair's difference as the view and the site show it: '+20.8 [2.1, 39.5] (n=24, p = 0.030, Holm 0.090:
    not significant)'. The interval and p are one test, and Holm's adjustment over the board's pairs only ever
    raises p, so 'significant' never stands beside an interval that holds 0."""
    if not diff or diff.get("diff") is None:
        return DASH
    text = _signed(diff)
    bits = [f"n={diff.get('n')}"]
    if diff.get("p_value") is not None:
        bits.append(f"p = {_p_text(diff['p_value'])}")
    if diff.get("p_adjusted") is not None:
        bits.append(f"Holm {_p_text(diff['p_adjusted'])}: " + ("significant" if diff.get("significant")
                                                               else "not significant"))
    return f"{text} ({', '.join(bits)})"


def trend_lines(board: dict[str, Any]) -> list[str]:
    trends = list(board["trends"].values())
    if trends and all(t["n"] == 0 for t in trends):
        return ["Scaling trends: none of these models is in the model table (data/models.yaml; add entries with "
                "$UXBENCH_MODELS or --models)."]
    return [f"Scaling by {_TREND_NAMES.get(t['by'], t['by'])}: {trend_text(t)}"
            + (f"; no {_TREND_NAMES.get(t['by'], t['by'])} for: {', '.join(t['left_out'])}" if t["left_out"] else "")
            + "." for t in trends]


def trend_text(t: dict[str, Any]) -> str:
    """'Spearman rho +0.87 [+0.12, +0.99], p = 0.021 (Fisher z), significant, n = 6 models', or why the trend is
    not estimable: the interval, p and the verdict come from one test (`metrics.correlation.trend`)."""
    if t.get("rho") is None:
        reason = t.get("reason") or f"{t['n']} models"
        return f"not estimable ({reason})"
    ci = f" [{t['ci_low']:+.2f}, {t['ci_high']:+.2f}]" if t.get("ci_low") is not None else ""
    verdict = "significant" if t.get("significant") else "not significant"
    return (f"Spearman rho {t['rho']:+.2f}{ci}, p = {t['p_value']:.3f} (Fisher z), {verdict} at alpha "
            f"{t.get('alpha', 0.05):g}, n = {t['n']} models")


def separability_line(board: dict[str, Any]) -> str:
    sep = board["separability"]
    if not sep["n_compared"]:
        return "Separability: no pair of runs could be compared."
    return (f"Separability: {sep['n_significant']} of {sep['n_compared']} pairs differ significantly "
            f"({100 * sep['separability']:.0f}%, Holm-adjusted, alpha {sep['alpha']:g}).")


def mdd_line(board: dict[str, Any]) -> str | None:
    mdd = board.get("mdd")
    if not mdd:
        return None
    spread = (f"; {100 * mdd['min']:.1f} to {100 * mdd['max']:.1f} pp over {mdd['n_pairs']} pairs"
              if mdd["n_pairs"] > 1 else "")
    return (f"Minimum detectable difference between neighbours (paired, 80% power, alpha 0.05, from each pair's "
            f"discordance): {100 * mdd['median']:.1f} pp{' (median' + spread + ')' if spread else ''}; smaller "
            "gaps need more cases (uxbench plan).")


def _board_notes(board: dict[str, Any], report: dict[str, Any]) -> list[str]:
    lines = [f"Data: {board['data']['label']}."] if board.get("data") else []
    judge = {r["judge_spec"] for r in board["rows"] if r.get("judge_spec")}
    if judge:
        lines.append(f"Judge: {', '.join(sorted(judge))}.")
    lines.append(separability_line(board))
    if (mdd := mdd_line(board)) is not None:
        lines.append(mdd)
    methods = board["ci_methods"]
    lines.append(f"95% CIs: {board['metric'].rstrip(' %')} {methods['figure']}; Δ vs above {methods['pairs']} "
                 f"({report['n_boot']} rounds, seed {report['seed']})"
                 + ("; corrected: delta method over the judge's calibration (Lee et al. 2025)."
                    if _has_corrected(board) else "."))
    for row in board["rows"]:
        if row.get("corrected"):
            block = {"scored_only": row["corrected"], "calibration": row["corrected"].get("calibration")}
            lines += [line for line in correction_notes(row["label"], block)
                      if FLAG_MARK.strip() in line or "refused" in line]
    lines += [f"{row['label']}: {row['unscored']}." for row in board["rows"] if row.get("unscored")]
    return lines + trend_lines(board) + [f"Note: {w}" for w in board["warnings"]]


def _sections(report: dict[str, Any]) -> tuple[list[Section], list[list[str]]]:
    sections, after = [], []
    for board in report["tasks"].values():
        head = ["#", "Rank", "Model", f"{board['metric']} [95% CI]"]
        if _has_corrected(board):
            head.append("Corrected %\n[95% CI]")
        head += ["n", "Ties with", "Δ vs above (pp)", "Org", "Family", "Released", "Size"]
        title = f"{board['title']}: {board['metric']} {board['convention']}"
        if board.get("data") and len([b for b in report["tasks"].values() if b["task"] == board["task"]]) > 1:
            title += f" on {board['data']['description']} ({(board['data']['fingerprint'] or 'unknown')[:8]})"
        sections.append((title, head, _rows(board)))
        after.append(_board_notes(board, report))
    return sections, after


def _notes(report: dict[str, Any]) -> list[str]:
    notes = ["DEMO DATA: some runs use the bundled demo cases, not the benchmark."] if report["demo_data"] else []
    rule = next(iter(report["tasks"].values()))["separability"]["rule"] if report["tasks"] else None
    if rule:
        notes.append(f"Ranks: {rule}; runs on different data are never ranked together.")
    notes += report.get("notes") or []
    notes += [f"Skipped {s}" for s in report["skipped"]]
    if report["ignored_pairwise"]:
        notes.append(f"Pairwise comparison directories are not ranked ({len(report['ignored_pairwise'])} ignored; "
                     "see `uxbench bias`).")
    return notes


def _csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["board", "task", "data_fingerprint", "data_limit", "rank", "label", "model", "metric", "value",
                     "ci_low", "ci_high", "ci_method", "n", "corrected", "corrected_ci_low", "corrected_ci_high",
                     "corrected_flags", "ties_with", "tied_with_previous", "diff_vs_previous", "diff_ci_low",
                     "diff_ci_high", "diff_p_adjusted", "mdd_vs_previous", "judge", "judge_spec", "org", "family",
                     "released", "size", "params_b", "demo_data", "run_dir"])
    for board_id, board in report["tasks"].items():
        data = board.get("data") or {}
        for row in board["rows"]:
            m, d, c = row["metric"], row.get("vs_previous") or {}, row.get("corrected") or {}
            line = [board_id, board["task"], data.get("fingerprint"), data.get("limit"), row["rank"], row["label"],
                    row["model"], board["metric"], m["value"], m["ci_low"], m["ci_high"], m.get("method"), m["n"],
                    c.get("value"), c.get("ci_low"), c.get("ci_high"),
                    ";".join(f["code"] for f in c.get("flags") or []) or (c.get("status") if c else None),
                    ";".join(row.get("ties_with") or []), row["tied_with_previous"], d.get("diff"), d.get("ci_low"),
                    d.get("ci_high"), d.get("p_adjusted"), (d.get("mdd") or {}).get("value"), row["judge"],
                    row["judge_spec"], row["org"], row["family"], row["released"], row["size"], row["params_b"],
                    row["demo_data"], row["run_dir"]]
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
        blocks = [_markdown([section], [], text_columns=3) + "".join(f"\n{line}\n" for line in lines)
                  for section, lines in zip(sections, after, strict=True)]
        return _markdown([], notes) + "\n" + "\n".join(blocks)
    parts = []
    for k, (section, lines) in enumerate(zip(sections, after, strict=True)):
        header = section[1]
        wrap = (header.index("Model"), header.index("Ties with"))  # names wrap; figures never do
        parts.append(render_tables([section], notes if k == 0 else [], width or terminal_width(),
                                   droppable=DROPPABLE, after=[lines], wrap=wrap))
    return "".join(parts) if parts else render_tables([], notes, width or terminal_width())
