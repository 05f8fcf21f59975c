"""`uxbench sim proxies` as text: one row per user proxy, the pairwise reward differences, the tool-call effect of
premature disclosure and the cost-fidelity frontier (table, Markdown, CSV or JSON)."""

from __future__ import annotations

from typing import Any

from uxbench.report.layout import Section, render_tables, terminal_width
from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, pct
from uxbench.report.sim_quality import _emit


def _signed(m: dict[str, Any] | None, digits: int = 3) -> str:
    if not m or m.get("diff") is None:
        return DASH
    ci = "" if m.get("ci_low") is None else f" [{m['ci_low']:+.{digits}f}, {m['ci_high']:+.{digits}f}]"
    star = " *" if m.get("significant") else ""
    return f"{m['diff']:+.{digits}f}{ci}{star}"


def _stack(cell: str) -> str:
    """`0.42 [0.30, 0.55]` as two lines, the value above its interval (figures are never cut or wrapped)."""
    value, sep, ci = cell.partition(" [")
    return f"{value}\n[{ci}" if sep else cell


def _num(value: Any, digits: int = 2) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def render_proxies(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    proxies = report["proxies"]
    reward = [[e["label"], pct(e["mean_reward"]), _signed(e["vs_first"]), str(e["n_sessions"])] for e in proxies]
    fidelity = [[e["label"], pct(e["successes_with_violation"]), pct(e.get("premature_disclosure_rate")),
                 pct(e.get("ufs"))] for e in proxies]
    calls = [[e["label"], _num(e["tool_calls_per_success"]), _signed(e.get("tool_calls_vs_first"), 2)]
             for e in proxies]
    asked = [[e["label"], _num(e["questions_per_session"]), _signed(e.get("questions_vs_first"), 2)]
             for e in proxies]
    pooled = report["tool_calls_success_pooled"]
    within = pooled.get("within_task") or {}
    effect = [["with premature disclosure", _num(pooled["with_disclosure"]), str(pooled["n_with"])],
              ["without", _num(pooled["without_disclosure"]), str(pooled["n_without"])],
              ["difference (with - without)", _signed({"diff": pooled["difference"], "ci_low": pooled["ci_low"],
                                                       "ci_high": pooled["ci_high"]}, 2), str(pooled["n_tasks"])
               + " tasks"],
              ["difference within a task", _signed(within, 2), f"{within.get('n_clusters', 0)} tasks with both"]]
    pair_rows = [[f"{p['b']} - {p['a']}", _signed(p), str(p["n_pairs"])] for p in report["pairs"]]
    sections: list[Section] = [
        ("Task reward per user proxy, the agent held fixed (vs first: paired on task and trial)",
         ["User proxy", "mean reward %", "vs first", "sessions"], reward),
        ("Fidelity per user proxy", ["User proxy", "successes with\nviolation %", "premature\ndisclosure %",
                                     "UFS %"], fidelity),
        ("The agent's tool calls per successful session (vs first: paired, on the task and trial pairs where "
         "both sessions succeeded)", ["User proxy", "tool calls", "vs first"], calls),
        ("The agent's questions per session (replies that ask the user something; vs first: paired)",
         ["User proxy", "questions", "vs first"], asked),
        ("Tool calls per successful episode, pooled over the proxies", ["", "tool calls", "episodes"], effect),
        ("Reward differences between proxies (paired on task and trial; * = the 95% CI excludes 0)",
         ["B - A", "difference", "pairs"], pair_rows),
    ]
    notes = [report["statement"]]
    largest = report.get("largest_difference")
    if largest is not None:
        notes.append(f"Largest reward difference: {largest['b']} vs {largest['a']}: {_signed(largest)} "
                     f"({largest['n_pairs']} paired sessions, {largest['n_tasks']} tasks).")
    front = report["frontier"]
    if front.get("target") is not None:
        notes.append(f"Cheapest proxy with UFS >= {front['target']:.2f}: "
                     f"{front.get('cheapest_meeting_target') or 'none'} (estimate); "
                     f"{front.get('cheapest_meeting_target_ci') or 'none'} (interval's lower bound).")
    notes.append("Pareto set (simulator cost per session against UFS): " + (", ".join(front["pareto"]) or "none") +
                 f"; cost in {front['cost_unit']}.")
    for e in report["proxies"]:
        agreement = e.get("judge_agreement")
        if agreement:
            kappa = agreement.get("kappa")
            value = kappa.get("value") if isinstance(kappa, dict) else kappa
            notes.append(f"{e['label']}: the judge agrees with the code items on "
                         f"{pct({'value': agreement['agreement']})}% of {agreement['n_items']} items "
                         f"(Cohen's kappa {_num(value)}).")
        if e["unscored"]:
            notes.append(f"{e['label']}: {e['unscored']} sessions have no reward (the evaluator failed): counted as 0.")
    notes.append("UFS and violations are checked by code" + (f" and by the judge {report['judge']} (blind to the "
                                                             "reward)" if report.get("judge") else
                                                             "; add a judge pass with `uxbench sim fidelity RUN "
                                                             "--judge J` and `--judge J` here") + ".")
    notes += [f"Warning: {w}" for w in report.get("warnings", [])]
    if fmt == "table":  # only the proxy's name wraps: every other column is a figure, its interval stacked below
        stacked: list[Section] = [(title, header, [[row[0], *(_stack(c) for c in row[1:])] for row in rows])
                                  for title, header, rows in sections[:4]]
        return render_tables([*stacked, *sections[4:]], notes, width or terminal_width(), wrap=(0,))
    if fmt == "md":  # only the proxy's name is text
        return _markdown([(t, [h.replace("\n", " ") for h in hd], r) for t, hd, r in sections], notes, text_columns=1)
    return _emit(sections, notes, fmt, report, width)
