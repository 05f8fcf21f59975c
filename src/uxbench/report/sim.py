"""Simulated-session runs (`uxbench sim run`) as text: the headline metrics with their CIs and denominators, with
and without the sessions the corruption gate flagged, endings, signal rates, recovery, pass^k, the gate and the
cost per party; and several runs side by side. Reads summaries only (`summary.json` of kind "sim")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uxbench.report.render import DASH, NO_INTERVAL, NOT_MEASURED, ReportFormat, _check_fmt, _markdown, _rich, pct

DEMO_BANNER = "DEMO: the embedded tiny model played the assistant and/or the simulated user; the figures show " \
              "the machinery, not a model's quality."
SIM_DROPPABLE = ("without flagged", "n")


def _plain(cell: dict[str, Any] | None, digits: int = 2) -> str:
    """`3.41 [3.10, 3.70]` for values not in [0, 1] (satisfaction, rates per 100 turns)."""
    if cell and cell.get("not_measured"):
        return NOT_MEASURED
    if not cell or cell.get("value") is None:
        return DASH
    text = f"{cell['value']:.{digits}f}"
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{cell['ci_low']:.{digits}f}, {cell['ci_high']:.{digits}f}]"
    elif cell.get("degenerate"):
        text += f" {NO_INTERVAL}"
    return text


def _n(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("n") is None:
        return DASH
    n = cell["n"]
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


def title_of(summary: dict[str, Any]) -> str:
    model = (summary.get("model") or {}).get("spec", DASH)
    simulator = (summary.get("simulator") or {}).get("spec", DASH)
    text = f"Simulated users ({summary.get('mode')}): {model}, simulator {simulator}"
    return text + (" [DEMO]" if summary.get("demo") else "")


def run_label(summary: dict[str, Any]) -> str:
    model = (summary.get("model") or {}).get("spec", DASH)
    simulator = (summary.get("simulator") or {}).get("spec", DASH)
    return f"{model}, simulator {simulator} ({summary.get('mode')})" + (" [DEMO]" if summary.get("demo") else "")


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def judge_note(summary: dict[str, Any]) -> str | None:
    """What the satisfaction judge gave, when one ran: how many replies it rated, how many answers held no rating
    and how many calls failed, with the first of each, so a judge that never answered usably says why."""
    judge = summary.get("judge")
    if not judge:
        return None
    text = (f"Satisfaction judge {judge['spec']}: {judge['rated']} of the {judge['replies']} replies it was asked "
            "to rate got a rating 1-5")
    problems = []
    if judge.get("unparsed"):
        example = judge.get("unparsed_example")
        problems.append(plural(judge["unparsed"], "answer held", "answers held") + " no rating 1-5"
                        + (f" (the first: {example!r})" if example else ""))
    if judge.get("errors"):
        example = judge.get("error_example")
        problems.append(plural(judge["errors"], "call failed", "calls failed")
                        + (f" (the first: {example})" if example else "")
                        + (f"; {judge['sessions_failed']} sessions' ratings are left out until a rerun of the same "
                           "command asks again" if judge.get("sessions_failed") else ""))
    return text + (": " + "; ".join(problems) if problems else "") + "."


def headline_rows(summary: dict[str, Any]) -> list[list[str]]:
    m = summary.get("metrics") or {}
    clean = summary.get("metrics_unflagged") or m

    def row(name: str, get: Any, fmt: Any, unit: str) -> list[str]:
        return [name, fmt(get(m)), fmt(get(clean)), _n(get(m)), unit]

    def judged(cell: dict[str, Any] | None) -> str:  # a judge that ran but rated nothing is not a dash
        if (not cell or cell.get("value") is None) and summary.get("judge"):
            return "no usable rating"
        return _plain(cell)

    def rates(x: dict[str, Any]) -> dict[str, Any]:
        return dict((x.get("signal_rates") or {}).get("rates") or {})
    rows = [
        row("Task success %", lambda x: x.get("success_rate"), pct, "sessions"),
        row("Abandonment % (patience)", lambda x: x.get("abandonment_rate"), pct, "sessions"),
        row("Turns to success (median)", lambda x: x.get("turns_to_success"), lambda c: _plain(c, 1),
            "successful sessions"),
        row("Final satisfaction (1-5)", lambda x: (x.get("satisfaction") or {}).get("final"), _plain, "sessions"),
        row("Min satisfaction (1-5)", lambda x: (x.get("satisfaction") or {}).get("min"), _plain, "sessions"),
        row("Satisfaction AUC (1-5)", lambda x: (x.get("satisfaction") or {}).get("auc"), _plain, "sessions"),
        row("Judge satisfaction, final", lambda x: (x.get("judge_satisfaction") or {}).get("final"), judged,
            "judged sessions"),
        row("Dissatisfied acts /100 turns", lambda x: rates(x).get("any_dissatisfied"), _plain, "assistant turns"),
        row("Likes /100 turns", lambda x: (x.get("feedback") or {}).get("like"), _plain, "assistant turns"),
        row("Dislikes /100 turns", lambda x: (x.get("feedback") or {}).get("dislike"), _plain, "assistant turns"),
        row("Recovered after a failure %", lambda x: (x.get("recovery") or {}).get("recovered"), pct, "chains"),
    ]
    if summary.get("judge"):  # the n of a judge that rated nothing is 0 sessions, not a dash
        rows[6][3] = str((m.get("judge_satisfaction") or {}).get("n") or 0) if rows[6][3] == DASH else rows[6][3]
    for k, cell in ((m.get("pass_k") or {}).items()):
        if k.isdigit():
            clean_cell = ((clean.get("pass_k") or {}).get(k))
            rows.append([f"pass^{k} %", pct(cell), pct(clean_cell), str(cell.get("n_clusters", DASH)), "personas"])
    return rows


def render_sim_summary(summary: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(summary, ensure_ascii=False, indent=2) + "\n"
    header = ["Metric", "all sessions [95% CI]", "without flagged", "n", "denominator"]
    rows = headline_rows(summary)
    if fmt == "csv":
        return "\n".join([",".join(f'"{h}"' for h in header)]
                         + [",".join(f'"{c}"' for c in r) for r in rows]) + "\n"
    m = summary.get("metrics") or {}
    sections: list[tuple[str, list[str], list[list[str]]]] = [(title_of(summary), header, rows)]
    ends = [[reason, pct(cell), _n(cell)] for reason, cell in (m.get("termination") or {}).items()]
    sections.append(("How sessions ended", ["reason", "% of sessions", "n"], ends))
    rates = (m.get("signal_rates") or {}).get("rates") or {}
    sections.append(("User reactions per 100 assistant turns (the simulator's acts)", ["act", "per 100 [95% CI]"],
                     [[name, _plain(cell)] for name, cell in rates.items()]))
    gate = summary.get("gate") or {}
    sections.append((f"Corruption gate: {gate.get('n_flagged', 0)} of {gate.get('n', 0)} sessions flagged",
                     ["type", "sessions"], [[k, str(v)] for k, v in (gate.get("by_type") or {}).items()]))
    usage = summary.get("usage") or {}
    per = summary.get("cost_per_session_usd") or {}
    sections.append(("Cost per party", ["party", "calls", "cached", "tokens in / out", "USD per session"],
                     [[party, str(u.get("calls", 0)), str(u.get("cached_calls", 0)),
                       f"{u.get('input_tokens', 0)} / {u.get('output_tokens', 0)}",
                       DASH if per.get(party) is None else f"{per[party]:.6f}"] for party, u in usage.items()]))
    notes = [DEMO_BANNER] if summary.get("demo") else []
    unanswered = {p: u for p, u in usage.items() if u.get("unanswered_requests")}
    if unanswered:
        parts = [f"{p} {u['unanswered_requests']}" + (f" (up to ${u['unanswered_cost_usd_max']:.6f})"
                                                      if u.get("unanswered_cost_usd_max") else "")
                 for p, u in unanswered.items()]
        notes.append("Requests sent but unanswered (retried, failed, or in flight when a run was stopped; counted as "
                     "spent, at most the mean cost of an answered call): " + ", ".join(parts) + ".")
    if (judged_note := judge_note(summary)) is not None:
        notes.append(judged_note)
    notes.append(f"{summary.get('n_sessions')} sessions of {summary.get('n_personas')} personas "
                 f"({summary.get('trials')} trial(s) each, at most {summary.get('max_turns')} replies); CIs: cluster "
                 "bootstrap over personas.")
    if summary.get("n_errors"):
        first = (summary.get("errors") or [""])[0]
        notes.append(f"{summary['n_errors']} sessions ended with an error (counted as failures); first: {first}")
    discarded = summary.get("discarded") or {}
    if discarded.get("generations"):
        notes.append(f"{discarded['generations']} simulator outputs were discarded and regenerated: "
                     + ", ".join(f"{k} {v}" for k, v in (discarded.get("by_reason") or {}).items()))
    reward = summary.get("reward")
    if reward:  # tool tasks: the benchmark's own reward, the figure UserProxyBench compares (`uxbench sim proxies`)
        notes.append(f"Task reward (the benchmark's evaluator): {pct(reward['mean'])} % over {reward['mean'].get('n')} "
                     f"sessions, interval over tasks ({reward['unscored']} unscored, counted as 0); "
                     f"{reward['tool_calls_per_session']:.2f} tool calls per session.")
    if fmt == "table":
        return _rich(sections, notes, width, droppable=SIM_DROPPABLE, wrap=(0,))
    return _markdown(sections, notes, text_columns=1)


def compare_rows(summaries: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for s in summaries:
        h = s.get("headline") or {}
        gate = s.get("gate") or {}
        rows.append([
            run_label(s), str(s.get("n_sessions")), pct(h.get("success_rate")),
            pct(h.get("abandonment_rate")), _plain(h.get("final_satisfaction")), _plain(h.get("dissatisfied_per_100")),
            f"{gate.get('n_flagged', 0)}/{gate.get('n', 0)}",
        ])
    return rows


def _stacked(text: str) -> str:
    """`0.42 [0.30, 0.55]` as two lines (value, then CI): figures are never cut, so narrow columns stack them."""
    value, sep, ci = text.partition(" [")
    return f"{value}\n[{ci}" if sep else text


def _label(name: str, width: int = 14) -> str:
    return "\n".join(name[i:i + width] for i in range(0, len(name), width)) or DASH


def render_sim_runs(summaries: list[dict[str, Any]], fmt: ReportFormat, *, width: int | None = None,
                    names: list[str] | None = None) -> str:
    """Several simulated-session runs side by side (headline figures; the paired test is `uxbench sim compare`).
    md and csv: one row per run; the terminal table has one column per run (figures with CIs fit 80 columns)."""
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(summaries, ensure_ascii=False, indent=2) + "\n"
    header = ["Run", "sessions", "success %", "abandoned %", "final satisfaction", "dissatisfied /100", "flagged"]
    rows = compare_rows(summaries)
    if fmt == "csv":
        return "\n".join([",".join(f'"{h}"' for h in header)] + [",".join(f'"{c}"' for c in r) for r in rows]) + "\n"
    notes = [DEMO_BANNER] if any(s.get("demo") for s in summaries) else []
    if fmt == "table":
        from uxbench.report.layout import terminal_width

        names = names or [f"run {i + 1}" for i in range(len(summaries))]
        width = width or terminal_width()
        cols = [[r[j] for r in rows] for j in range(1, len(header))]
        wide = 1 + 3 * (len(rows) + 1) + 20 + sum(max(len(c) for c in col) for col in zip(*cols, strict=True))
        cells = cols if wide <= width else [[_stacked(c) for c in col] for col in cols]
        table = [[header[j + 1], *cells[j]] for j in range(len(cols))]
        legend = [f"{n}: {run_label(s)}" for n, s in zip(names, summaries, strict=True)]
        return _rich([("Simulated-session runs", ["metric", *(_label(n) for n in names)], table)],
                     [*notes, *legend], width, wrap=(0,))
    return _markdown([("Simulated-session runs", header, rows)], notes, text_columns=1)


def load_sim_summary(path: Any, *, n_boot: int | None = None, seed: int | None = None) -> dict[str, Any]:
    """A finished sim run's summary; with `n_boot` or `seed`, recomputed from its store (nothing is rerun)."""
    from uxbench.errors import UxbenchError
    from uxbench.sim.store import SimStore

    store = SimStore.open_existing(path)
    try:
        summary = store.read_summary()
        if summary is None:
            raise UxbenchError(f"{path} has no summary.json: the simulation has not finished. Rerun the same "
                               "`uxbench sim run` command to resume it.")
        if n_boot is not None or seed is not None:
            from uxbench.sim.run import summarize

            fresh = summarize(store, store.read_manifest() or {}, n_boot=n_boot or 2000, seed=seed or 0)
            fresh["invocation"] = summary.get("invocation")
            summary = fresh
    finally:
        store.close()
    return summary


def sim_report(paths: list[Any], fmt: ReportFormat, *, n_boot: int | None = None, seed: int | None = None) -> str:
    """`uxbench report` on simulated-session runs: one run in full, several side by side."""
    summaries = [load_sim_summary(p, n_boot=n_boot, seed=seed) for p in paths]
    if len(summaries) == 1:
        return render_sim_summary(summaries[0], fmt)
    return render_sim_runs(summaries, fmt, names=[Path(p).name for p in paths])
