"""`uxbench judge train` and `judge eval` results as a terminal table, Markdown, CSV or JSON (`--format`).

Each judge measured (the trained judge, the TF-IDF baseline, a reference, another judge) is a row with its
Avg-Acc, Good-Acc and Bad-Acc (95% CIs, percent), ECE, Brier and n; each paired comparison is a row of its
own table (the Avg-Acc difference in points with its CI, McNemar's p, and what it says). CSV keeps fractions,
one row per judge and per comparison; JSON is every figure the library returned.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from uxbench.errors import ConfigError
from uxbench.report.layout import Section, render_tables, terminal_width
from uxbench.report.render import DASH, FORMATS, pct

_FIGURE_HEAD = ["Judge", "n", "Avg-Acc %", "Good-Acc %", "Bad-Acc %", "ECE", "Brier"]
_PAIR_HEAD = ["Judge", "Against", "n", "Difference (points)", "McNemar p", "Says"]
_DROPPABLE = ("Brier", "ECE", "McNemar p")


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        import difflib

        close = difflib.get_close_matches(fmt, FORMATS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}{hint}")
    return fmt


def p_value(p: float | None) -> str:
    """A p-value as people read it: three decimals, or `< 0.001`."""
    if p is None:
        return DASH
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _num(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f}"


def _diff(paired: dict[str, Any]) -> str:
    if paired.get("diff") is None:
        return DASH
    text = f"{100 * paired['diff']:+.1f}"
    if paired.get("ci_low") is not None and paired.get("ci_high") is not None:
        text += f" [{100 * paired['ci_low']:+.1f}, {100 * paired['ci_high']:+.1f}]"
    return text


def says(paired: dict[str, Any]) -> str:
    low, high = paired.get("ci_low"), paired.get("ci_high")
    if low is not None and low > 0:
        return "better"
    if high is not None and high < 0:
        return "worse"
    return "no detectable difference"


def figure_row(name: str, f: dict[str, Any]) -> list[str]:
    return [name, str(f.get("n", DASH)), pct(f.get("avg_acc")), pct(f.get("good_acc")), pct(f.get("bad_acc")),
            _num(f.get("ece")), _num(f.get("brier"))]


def pair_row(name: str, against: str, comparison: dict[str, Any]) -> list[str]:
    paired = comparison.get("paired") or comparison.get("bootstrap") or {}
    return [name, against, str(paired.get("n", DASH)), _diff(paired),
            p_value((comparison.get("mcnemar") or {}).get("p_value")), says(paired)]


def render(figures: Sequence[tuple[str, dict[str, Any]]], pairs: Sequence[tuple[str, str, dict[str, Any]]],
           notes: Sequence[str], raw: dict[str, Any], fmt: str, *, width: int | None = None) -> str:
    """The figures and paired comparisons in `fmt` (`raw` is what `json` prints)."""
    check_format(fmt)
    if fmt == "json":
        return json.dumps(raw, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return _csv(figures, pairs)
    sections: list[Section] = [("Held-out figures (verdict = p(good) >= 0.5)", _FIGURE_HEAD,
                                [figure_row(n, f) for n, f in figures])]
    if pairs:
        sections.append(("Paired on the same cases (Avg-Acc difference, stratified bootstrap 95% CI)", _PAIR_HEAD,
                         [pair_row(a, b, c) for a, b, c in pairs]))
    if fmt == "table":
        return render_tables(sections, list(notes), width or terminal_width(), droppable=_DROPPABLE, wrap=(0, 1))
    lines = [f"> {n}" for n in notes]
    for title, header, rows in sections:
        lines += ["", f"### {title}", "", "| " + " | ".join(header) + " |",
                  "|" + "|".join("---" if i == 0 or header[i] in ("Against", "Says") else "---:"
                                 for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines).lstrip("\n") + "\n"


def _csv(figures: Sequence[tuple[str, dict[str, Any]]], pairs: Sequence[tuple[str, str, dict[str, Any]]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    header = ["kind", "judge", "against", "n"]
    for metric in ("avg_acc", "good_acc", "bad_acc"):
        header += [f"{metric}.{p}" for p in ("value", "ci_low", "ci_high")]
    header += ["ece", "brier", "diff", "diff_ci_low", "diff_ci_high", "mcnemar_p"]
    writer.writerow(header)
    for name, f in figures:
        line: list[Any] = ["judge", name, "", f.get("n")]
        for metric in ("avg_acc", "good_acc", "bad_acc"):
            cell = f.get(metric) or {}
            line += [cell.get(p) for p in ("value", "ci_low", "ci_high")]
        line += [f.get("ece"), f.get("brier"), None, None, None, None]
        writer.writerow(["" if v is None else v for v in line])
    for a, b, comparison in pairs:
        paired = comparison.get("paired") or comparison.get("bootstrap") or {}
        line = ["paired", a, b, paired.get("n"), *([None] * 9), None, None, paired.get("diff"),
                paired.get("ci_low"), paired.get("ci_high"), (comparison.get("mcnemar") or {}).get("p_value")]
        writer.writerow(["" if v is None else v for v in line])
    return buf.getvalue()
