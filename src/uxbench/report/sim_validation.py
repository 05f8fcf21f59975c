"""Simulated against real users as text: `sim validate` (free-run and replay), `sim rubric-agreement` and the
summary of `personas build`."""

from __future__ import annotations

from typing import Any

from uxbench.report.layout import Section
from uxbench.report.render import DASH, ReportFormat, _check_fmt, pct
from uxbench.report.sim_quality import _emit, _n


def _num(cell: dict[str, Any] | None, key: str = "value", digits: int = 3, signed: bool = False) -> str:
    if not cell or cell.get(key) is None:
        return DASH
    spec = f"+.{digits}f" if signed else f".{digits}f"
    text = format(cell[key], spec)
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{format(cell['ci_low'], spec)}, {format(cell['ci_high'], spec)}]"
    return text


def _reaction_rows(reactions: dict[str, Any]) -> list[list[str]]:
    rows = []
    for label, r in reactions["rates"].items():
        rows.append([label, pct(r["real"]), pct(r["sim"]), _num(r["ratio_sim_over_real"], digits=2)])
    bad = reactions["dissatisfied"]
    rows.append(["dissatisfied (any)", pct(bad["real"]), pct(bad["sim"]), DASH])
    return rows


def _headline(pair: dict[str, Any], title: str) -> Section:
    r = pair["reactions"]
    rows = [["Cooperativeness gap (real - sim dissatisfied)", _num(r["cooperativeness_gap"], signed=True),
             "positive: simulated users complain, repeat and give up less"],
            ["Jensen-Shannon distance of reactions", _num(r["js_distance"]), "0 = the same shares, 1 = none shared"]]
    if "agreement" in pair:
        k = pair["agreement"]["kappa"]
        rows.insert(0, ["Cohen's kappa, simulated vs real reaction", _num(k),
                        f"{pair['agreement']['n']} replies answered by both"])
    length = pair.get("session_length")
    if length:
        rows.append(["KS statistic, session length (user turns)", _num({"value": length["statistic"]}),
                     f"p = {_num({'value': length['p_value']})}; medians {length['median_real']} real, "
                     f"{length['median_sim']} sim"])
    disc = pair.get("discriminator")
    if disc:
        rows.append(["Discriminator AUC (sim vs real user turns)", _num(disc),
                     disc.get("note") or f"0.5 = indistinguishable; {disc['n_real']} + {disc['n_sim']} distinct "
                                         "messages"])
        if disc.get("length_baseline"):
            rows.append(["Length-only baseline AUC", _num(disc["length_baseline"]),
                         "what message length alone gives away (the same folds)"])
    return (title, ["Figure", "value [95% CI]", "reading"], rows)


def _verdict_rows(verdict: dict[str, Any]) -> list[list[str]]:
    return [[f"{c['criterion']}: {c['status']}", c["evidence"]] for c in verdict["criteria"]]


def _free_run(report: dict[str, Any], notes: list[str]) -> tuple[list[Section], dict[str, Any]]:
    real = report["real"]
    sections: list[Section] = []
    for assistant, entry in report["by_assistant"].items():
        runs = ", ".join(entry["runs"])
        n = entry["n_conversations"]
        sections.append(_headline(entry, f"{assistant}: real {real['name']} ({n['real']} conversations) against "
                                         f"{runs} ({n['sim']} conversations)"))
        v = entry["verdict"]
        sections.append((f"Verdict for {assistant}: {v['status'].replace('_', ' ').upper()} (judged against "
                         "the real logs' split-half control)", ["Criterion", "evidence"],
                         _verdict_rows(v)))
        notes.append(f"{assistant}: {v['summary']}" + (f" Caveat: {v['caveat']}." if v.get("caveat") else ""))
    control = report["split_half_control"]
    notes.append(f"Split-half control (two halves of the real logs): gap "
                 f"{_num(control['reactions']['cooperativeness_gap'], signed=True)}, JS distance "
                 f"{_num(control['reactions']['js_distance'])}"
                 + (f", discriminator AUC {_num(control['discriminator'])}" if control.get("discriminator") else "")
                 + ": the scale sampling noise alone gives.")
    disc = next((e["discriminator"] for e in report["by_assistant"].values() if e.get("discriminator")), None)
    if disc and disc.get("reading"):
        notes.append(f"Discriminator AUC: {disc['reading']}")
    system = report["system_level"]
    if "kendall_tau" in system:
        notes.append(f"System level: Kendall tau {_num({'value': system['kendall_tau']['tau']}, signed=True)} "
                     f"over {len(system['assistants'])} assistants (p = "
                     f"{_num({'value': system['kendall_tau']['p_value']})}).")
    else:
        notes.append(f"System level: {system['note']}.")
    stick = report.get("yardstick") or {}
    for kind in ("thumbs", "ratings"):
        y = stick.get(kind)
        if y:
            extra = (f"recall of real dislikes {pct(y['recall_of_dislikes'])}, dissatisfied after likes "
                     f"{pct(y['dissatisfied_after_likes'])}, " if kind == "thumbs" else
                     f"{y['n_low']} low and {y['n_high']} high ratings, ")
            notes.append(f"How the mined labels track the real {kind}: {extra}AUC {_num(y['auc'])}.")
    notes += [f"Warning: {c['message']}." for c in report.get("checks", [])]
    first = next(iter(report["by_assistant"].values()))
    return sections, first


def render_validate(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    notes = list(report.get("notes", []))
    if report["mode"] == "replay":
        pair = {"reactions": report["reactions"], "agreement": report["agreement"]}
        sections: list[Section] = [_headline(pair, f"Replay: {report['n_steps']} real replies of "
                                                   f"{report['n_conversations']} conversations")]
        cats = report["agreement"]["categories"]
        sections.append(("Confusion matrix (rows: simulated reaction, columns: real reaction)", ["sim \\ real", *cats],
                         [[c, *map(str, row)] for c, row in zip(cats, report["agreement"]["table"], strict=True)]))
        notes.append("Walks: " + ", ".join(f"{k} {v}" for k, v in report["walks"].items()))
        thumbs = report["thumbs"]
    else:
        sections, pair = _free_run(report, notes)
        thumbs = pair["thumbs"]
    for entry in ([pair] if report["mode"] == "replay" else list(report["by_assistant"].values())):
        title = "Reaction rates per assistant turn" + ("" if report["mode"] == "replay" else
                                                       f" ({', '.join(entry['runs'])})")
        sections.append((title, ["Reaction", "real %", "simulated %", "ratio sim/real"],
                         _reaction_rows(entry["reactions"])))
    if thumbs.get("note"):
        notes.append(f"Thumbs: {thumbs['note']}.")
    else:
        sections.append(("Thumbs per assistant turn (real) vs like / dislike (simulated)",
                         ["Feedback", "real %", "simulated %", "ratio sim/real"],
                         [[k, pct(v["real"]), pct(v["sim"]), _num(v["ratio_sim_over_real"], digits=2)]
                          for k, v in thumbs["rates"].items() if k != "none"]))
    notes.append("Intervals: cluster bootstraps over conversations (rates: Wilson on the effective n).")
    return _emit(sections, notes, fmt, report, width, droppable=("reading", "ratio sim/real"))


def render_rubric_agreement(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    rows = [[name, _num(report[key]["auc"]), pct(report[key]["accuracy"])]
            for name, key in (("general (" + report["general_rubric"] + ")", "general"),
                              ("personalised (the persona's own)", "personal"))]
    diff = report["auc_difference"]
    notes = [f"AUC difference, personalised - general: {_num(diff, signed=True)} (paired over the same replies; a "
             "positive value says the persona's rubric predicts the real reaction better).",
             f"{report['n_items']} held-out real replies of {report['n_conversations']} conversations "
             f"({report['n_good']} satisfied, {report['n_bad']} not; outcomes: "
             + ", ".join(f"{k} {v}" for k, v in report["outcome_sources"].items()) + f"); {report['n_unscored']} "
             "replies a rubric could not score are left out."]
    if report.get("skipped_personas"):
        notes.append("Personas left out: " + ", ".join(f"{k} {v}" for k, v in report["skipped_personas"].items()))
    return _emit([("Which rubric predicts the real user's reaction?", ["Rubric", "AUC [95% CI]", "accuracy %"],
                   rows)], notes, fmt, report, width)


def render_build(report: dict[str, Any], out: str, fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    rows = [["conversations read", _n(report["conversations_read"])],
            ["personas built", _n(report["personas_built"])],
            ["held out (whole conversations)", _n(len(report["held_out_conversations"]))]]
    rows += [[f"skipped: {k.replace('_', ' ')}", _n(v)] for k, v in report["skipped"].items()]
    rows += [[f"facts: {k.replace('_', ' ')}", _n(v)] for k, v in report["facts"].items()]
    notes = [f"Personas: {out}; build report: {out}.build.json (hold-out split, dropped facts by conversation "
             "digest and fact id, extraction failures)."]
    if report["facts"].get("dropped_not_in_source"):
        notes.append(f"{report['facts']['dropped_not_in_source']} extracted facts were dropped: their values do not "
                     "occur in the user's messages (the extraction model invented or altered them).")
    return _emit([("Personas built from mined sessions", ["", "n"], rows)], notes, fmt, report, width)
