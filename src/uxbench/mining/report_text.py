"""`uxbench mine report` as terminal tables (no wider than the terminal, no figure cut) and as Markdown.

Every rate names its denominator: the dissatisfied rate is over all replies, each signal's rate over the replies
where that signal can be computed (a rephrase needs a next user message; a thumbs-down does not), shown as
fired / computable next to the percentage. Signals the log does not record are "n/a", not 0%. The per-scenario
and per-day tables only appear when they break the overall figures down (two scenarios or days or more);
otherwise a line says why there is no such table.
"""

from __future__ import annotations

from uxbench.metrics.proportions import wilson_ci
from uxbench.mining.report import (
    NO_TIME,
    RECORDED_BY,
    TABLE_SIGNALS,
    UNLABELLED,
    MiningReport,
    SignalRates,
)
from uxbench.report.layout import Section, render_tables, terminal_width


def _pct(k: int, n: int, *, ci: bool = True) -> str:
    """`45.5 [21.3, 72.0]` (percent of n, Wilson 95% CI); a dash when n is 0."""
    if n == 0:
        return "—"
    text = f"{100 * k / n:.1f}"
    if ci:
        low, high = wilson_ci(k, n)
        text += f" [{100 * low:.1f}, {100 * high:.1f}]"
    return text


def _not_in_log(name: str) -> str:
    return f"n/a: no {RECORDED_BY.get(name, name)} in the log"


def signal_rows(rates: SignalRates, names: tuple[str, ...] = TABLE_SIGNALS) -> list[list[str]]:
    """One row per signal: name, fired / computable, % [95% CI] of the computable replies."""
    rows = []
    for name in names:
        count = rates.counts.get(name)
        if count is None:
            rows.append([name, "—", _not_in_log(name) if name in RECORDED_BY else "n/a: never computable"])
        else:
            rows.append([name, f"{count[0]} / {count[1]}", _pct(*count)])
    return rows


def fired_summary(rates: SignalRates, names: tuple[str, ...] = TABLE_SIGNALS) -> str:
    """`complaint 2/9` lines: the signals that fired, highest rate first, each with its denominator; one per
    line, so a name never wraps away from its count."""
    fired = [(name, c) for name in names if (c := rates.counts.get(name)) is not None and c[0]]
    fired.sort(key=lambda item: (-item[1][0] / item[1][1], item[0]))
    return "\n".join(f"{name} {k}/{n}" for name, (k, n) in fired) or "none"


def _breakdown(title: str, key: str, rows: list[SignalRates]) -> Section:
    return (title, [key, "replies", "dissatisfied %\n[95% CI]", "signals fired\n(fired / computable)"],
            [[r.key, str(r.turns), _pct(r.dissatisfied, r.turns), fired_summary(r)] for r in rows])


def _headline(report: MiningReport) -> list[str]:
    lines = [f"{report.conversations} conversations, {report.assistant_turns} assistant replies.",
             f"Dissatisfied: {report.dissatisfied_turns} of the {report.assistant_turns} replies, "
             f"{_pct(report.dissatisfied_turns, report.assistant_turns)} %.",
             "A signal's rate is over the replies where it can be computed (fired / computable): a rephrase "
             "or a complaint needs a next user message, a thumbs-down does not."]
    shown = [name for name in report.not_recorded if name in TABLE_SIGNALS]
    if shown:
        missing = sorted({RECORDED_BY.get(name, name) for name in shown})
        lines.append(f"The log records no {' and no '.join(missing)}: {', '.join(shown)} are n/a, not 0%.")
    return lines


def _why_no_table(report: MiningReport) -> list[str]:
    notes = []
    if len(report.by_scenario) < 2:
        notes.append("No per-scenario table: " + (
            "the agents gave every reply one scenario." if report.scenarios_from == "agents" else
            f"scenarios come from the agents (`mine run --model ...`); without them every reply is {UNLABELLED}."))
    days = [d.key for d in report.by_day]
    if days == [NO_TIME]:
        notes.append("No per-day table: the log has no timestamps.")
    elif len(days) == 1:
        notes.append(f"No per-day table: every reply is from {days[0]}.")
    if not report.patterns:
        notes.append("No failure patterns: no reply was dissatisfied.")
    if not any(o.count for o in report.recovery):
        notes.append("No recovery outcomes: no dissatisfied reply was followed by the user.")
    return notes


def report_table(report: MiningReport, width: int | None = None) -> str:
    """The report as terminal tables no wider than `width` (default: the terminal's)."""
    width = width or terminal_width()
    overall = report.overall
    sections: list[Section] = []
    if overall is not None:
        sections.append((f"Signals on all {overall.turns} replies", ["signal", "fired / computable", "% [95% CI]"],
                         signal_rows(overall)))
    if len(report.by_scenario) >= 2:
        sections.append(_breakdown("Per scenario", "scenario", report.by_scenario))
    if len(report.by_day) >= 2:
        sections.append(_breakdown("Per day", "day", report.by_day))
    n_bad = sum(p.count for p in report.patterns)
    n_chains = sum(o.count for o in report.recovery)
    if n_bad:
        sections.append(_patterns(report, n_bad))
    if n_chains:
        sections.append((f"Recovery outcomes after a dissatisfied reply ({n_chains} chains)",
                         ["outcome", "chains", "% [95% CI]"],
                         [[o.outcome, str(o.count), _pct(o.count, n_chains)] for o in report.recovery]))
    notes = _headline(report) + _why_no_table(report)
    # Only the names wrap: a signal's line keeps its count ("complaint 120/1200" never splits).
    return render_tables(sections, notes, width, wrap=(0,), show_all="--format md or json show everything")


def _patterns(report: MiningReport, n_bad: int) -> Section:
    return (
        "Top failure patterns: " + ("dimension x signal, bad candidates" if report.patterns_from ==
                                    "candidates" else "signals of the dissatisfied replies"),
        ["pattern", "count", f"% of {n_bad}"], [[p.pattern, str(p.count), f"{100 * p.share:.1f}"]
                                               for p in report.patterns])


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    return ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(map(cell, r)) + " |" for r in rows), ""]


def _md_rates(key: str, rows: list[SignalRates]) -> list[str]:
    """Every signal as a column, each cell `18.2% (2/11)`: Markdown has room for them all."""
    header = [key, "replies", "dissatisfied % [95% CI]", *TABLE_SIGNALS]
    body = []
    for r in rows:
        cells = []
        for name in TABLE_SIGNALS:
            c = r.counts.get(name)
            cells.append("n/a" if c is None else f"{_pct(*c, ci=False)}% ({c[0]}/{c[1]})")
        body.append([r.key, str(r.turns), _pct(r.dissatisfied, r.turns), *cells])
    return _md_table(header, body)


def report_markdown(report: MiningReport) -> str:
    """The report as Markdown."""
    lines = [f"# Mining report: {report.directory}", "", *_headline(report), ""]
    if report.overall is not None:
        lines += ["## Signals on all replies", "", "Each rate is over the replies where the signal can be computed.",
                  "", *_md_table(["signal", "fired / computable", "% [95% CI]"], signal_rows(report.overall))]
    lines += [f"> {note}" for note in _why_no_table(report)] + [""]
    if len(report.by_scenario) >= 2:
        lines += ["## Signal rates per scenario", "", *_md_rates("scenario", report.by_scenario)]
    if len(report.by_day) >= 2:
        lines += ["## Signal rates per day", "", *_md_rates("day", report.by_day)]
    lines += ["## Top failure patterns (" + ("dimension x signal" if report.patterns_from == "candidates"
                                             else "signal combinations on dissatisfied replies") + ")", "",
              *_md_table(["pattern", "count", "%"], [[p.pattern, str(p.count), f"{100 * p.share:.1f}"]
                                                     for p in report.patterns])]
    n_chains = sum(o.count for o in report.recovery)
    lines += [f"## Recovery outcomes ({n_chains} chains from dissatisfied replies)", "",
              *_md_table(["outcome", "chains", "% [95% CI]"],
                         [[o.outcome, str(o.count), _pct(o.count, n_chains)] for o in report.recovery])]
    return "\n".join(lines)
