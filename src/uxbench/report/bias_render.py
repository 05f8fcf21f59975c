"""The bias report (`report.bias.bias_report`) as a terminal table, Markdown, CSV or JSON.

Judges are named J1, J2, ... in the tables (a legend maps them to their specs), so that a matrix of several
judges still fits a terminal; when it does not, the matrix is printed one row per judge x candidate.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from uxbench.report.bias import TASK_TITLES
from uxbench.report.layout import Section, render_tables, table_width, terminal_width
from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, pct

DROPPABLE = ("Median chars", "p", "n", "Tie %", "Inconsistent %", "Good %", "Agreement %", "beta per SD log-len")
"""Columns a narrow terminal may lose, in this order (the others always stay)."""
LEGEND = "* = the judge's own family, + = its own organisation (model table: data/models.yaml, $UXBENCH_MODELS)."


def num(cell: dict[str, Any] | None, key: str = "value", digits: int = 2, signed: bool = True) -> str:
    """`+0.40 [+0.13, +0.63]` from a {value, ci_low, ci_high} cell (not percentages)."""
    if not cell or cell.get(key) is None:
        return DASH
    spec = f"+.{digits}f" if signed else f".{digits}f"
    text = format(cell[key], spec)
    if cell.get("ci_low") is not None and cell.get("ci_high") is not None:
        text += f" [{format(cell['ci_low'], spec)}, {format(cell['ci_high'], spec)}]"
    return text


def _p(p: float | None) -> str:
    return DASH if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def _ids(section: dict[str, Any]) -> dict[str, str]:
    return {j["key"]: f"J{i + 1}" for i, j in enumerate(section["self_preference"]["judges"])}


def _matrix(title: str, section: dict[str, Any], width: int, multiline: bool) -> list[Section]:
    matrix = section["self_preference"]
    ids = _ids(section)
    judges = [j["key"] for j in matrix["judges"]]
    rows = []
    for cand in matrix["candidates"]:
        cells = []
        for key in judges:
            cell = matrix["cells"].get(key, {}).get(cand["label"])
            if cell is None:
                cells.append(DASH)
                continue
            rate = cell["rate"]
            value = pct({"value": rate["value"]}) + cell["relation"]
            ci = f"[{100 * rate['ci_low']:.1f}, {100 * rate['ci_high']:.1f}]" if rate["value"] is not None else ""
            cells.append(f"{value}\n{ci}\nn={rate['n']}" if multiline else f"{value} {ci} n={rate['n']}")
        rows.append([cand["label"], *cells])
    header = ["Candidate", *(ids[k] for k in judges)]
    if multiline and table_width(header, rows, range(len(header)), (0,)) > width:
        long_rows = []
        for cand in matrix["candidates"]:
            for key in judges:
                cell = matrix["cells"].get(key, {}).get(cand["label"])
                if cell is not None:
                    long_rows.append([cand["label"], ids[key], pct(cell["rate"]) + cell["relation"],
                                      str(cell["rate"]["n"])])
        return [(f"{title}: Good % by judge", ["Candidate", "Judge", "Good % [95% CI]", "n"], long_rows)]
    return [(f"{title}: Good % by judge (columns) and candidate", header, rows)]


def _length(title: str, section: dict[str, Any]) -> list[Section]:
    ids = _ids(section)
    corr = [[ids[e["judge"]], str(e["n"]), num(e["spearman"]), _p(e["spearman"].get("p_value")),
             num((e["length_controlled"] or {}).get("beta"))] for e in section["length_bias"]]
    lc_rows = []
    for e in section["length_bias"]:
        for cand, g in e["length_controlled"]["groups"].items():
            median = g.get("median_chars")
            lc_rows.append([cand, ids[e["judge"]], pct(g["raw"]), pct(g["lc"]),
                            DASH if median is None else f"{median:.0f}"])
    return [
        (f"{title}: length bias (score vs reply length)",
         ["Judge", "n", "Spearman rho [95% CI]", "p", "beta per SD log-len"], corr),
        (f"{title}: length-controlled Good %", ["Candidate", "Judge", "Good %", "LC Good %", "Median chars"], lc_rows),
    ]


def _agreement(title: str, section: dict[str, Any]) -> list[Section]:
    ids = _ids(section)
    rows = [[ids[e["judge_a"]], ids[e["judge_b"]], str(e["n"]), pct(e["agreement"]), num(e["kappa"])]
            for e in section["agreement"]]
    return [(f"{title}: agreement between judges", ["Judge", "Judge", "n", "Agreement %", "Cohen's kappa"], rows)] \
        if rows else []


def _resolution(title: str, section: dict[str, Any]) -> list[Section]:
    ids = _ids(section)
    resolution = section.get("resolution") or {}
    out: list[Section] = []
    ties = [[ids[e["judge"]], e["measure"], pct(e["rate"]), str(e["n_pairs"])] for e in resolution.get("ties") or []
            if e["n_pairs"]]
    if ties:
        out.append((f"{title}: tie rate (two models' replies to one case the judge cannot order)",
                    ["Judge", "Tie when", "Tie %", "Pairs"], ties))
    taus = [[ids[e["judge_a"]], ids[e["judge_b"]], str(e["n_runs"]), num({"value": e["tau"], "ci_low": e["ci_low"],
                                                                          "ci_high": e["ci_high"]})]
            for e in resolution.get("leaderboards") or []]
    if taus:
        out.append((f"{title}: do two judges rank the runs alike? (Kendall tau, bootstrap over cases)",
                    ["Judge", "Judge", "Runs", "tau [95% CI]"], taus))
    return out


def _calibration(report: dict[str, Any]) -> list[Section]:
    cals = report["calibration"]
    if not cals:
        return []
    out: list[Section] = [("Task 1 calibration (probability verdicts)", ["Model", "Run", "n", "ECE", "Brier"],
                           [[c["model"], c["path"], str(c["n"]), f"{c['ece']:.3f}", f"{c['brier']:.3f}"]
                            for c in cals])]
    for cal in cals:
        bins = [[f"{b['lo']:.1f}-{b['hi']:.1f}", str(b["n"]), num({"value": b["mean_p"]}, signed=False),
                 num({"value": b["good_rate"]}, signed=False), num({"value": b["gap"]})]
                for b in cal["bins"] if b["n"]]
        out.append((f"Reliability, {cal['model']}", ["p(good) bin", "n", "mean p", "good rate", "gap"], bins))
    return out


def _pairwise(report: dict[str, Any]) -> list[Section]:
    rows = [[str(e["spec"]), f"A {e['model_a']}{e['relation_a']} vs B {e['model_b']}{e['relation_b']}",
             pct(e["win_rate_a"]), pct((e["win_rate_a"] or {}).get("ties")), pct(e["position_inconsistency"]),
             str(e["n_decided"])] for e in report["pairwise"]]
    return [("Pairwise: win rate of A over B per judge (ties half)",
             ["Judge", "Pair", "A win %", "Tie %", "Inconsistent %", "n"], rows)] if rows else []


def _judge_agreement(report: dict[str, Any]) -> list[Section]:
    found = report.get("judge_agreement") or {}
    out: list[Section] = []
    rows = []
    for g in found.get("groups", []):
        runs = "\n".join(f"{r['model']} ({r['formulation']})" for r in g["runs"])
        labels, scores = g["labels"], g["scores"]
        rows.append([runs, str(labels["n_items"]), num({**labels, "value": labels["kappa"]}),
                     num({**scores, "value": scores["kappa"]}) if scores else (g["note"] or DASH)])
    if rows:
        out.append(("Task 1: agreement across judges (runs on the same cases), Fleiss' kappa",
                    ["Judges", "n", "kappa of good/bad", "kappa of the scores"], rows))
    ties = [[t["model"], t["formulation"], str(t["n_pairs"]), pct(t["tie_share"]), pct(t["liked_higher"])]
            for t in found.get("ties", [])]
    if ties:
        out.append(("Task 1 graded judges: liked vs disliked case pairs",
                    ["Model", "Formulation", "Pairs", "Same score %", "Liked higher %"], ties))
    return out


def sections_and_notes(report: dict[str, Any], width: int, multiline: bool) -> tuple[list[Section], list[str]]:
    sections: list[Section] = []
    notes = ["DEMO DATA: some runs use the bundled demo cases, not the benchmark."] if report.get("demo_data") else []
    for task, section in report["tasks"].items():
        title = TASK_TITLES[task]
        legend = ", ".join(f"{j_id} = {j['label']}" for j_id, j in zip(
            _ids(section).values(), section["self_preference"]["judges"], strict=True))
        notes.append(f"{title} judges: {legend}.")
        sections += _matrix(title, section, width, multiline) + _length(title, section) + _agreement(title, section)
        sections += _resolution(title, section)
    sections += _calibration(report) + _judge_agreement(report) + _pairwise(report)
    notes.append(LEGEND)
    notes += [f"Note: {n}" for n in report.get("notes", [])]
    notes += [f"Skipped {s}" for s in report.get("skipped", [])]
    return sections, notes


def _csv(report: dict[str, Any]) -> str:
    """Long format: one row per figure (fractions, not percentages)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["section", "task", "judge", "other", "figure", "value", "ci_low", "ci_high", "n", "mark"])
    for task, section in report["tasks"].items():
        labels = {j["key"]: j["label"] for j in section["self_preference"]["judges"]}
        for key, by_cand in section["self_preference"]["cells"].items():
            for cand, cell in by_cand.items():
                r = cell["rate"]
                writer.writerow(["self_preference", task, labels[key], cand, "good_rate", r["value"], r["ci_low"],
                                 r["ci_high"], r["n"], cell["relation"]])
        for e in section["length_bias"]:
            s = e["spearman"]
            writer.writerow(["length_bias", task, e["label"], "", "spearman", s["value"], s["ci_low"], s["ci_high"],
                             e["n"], ""])
            beta = e["length_controlled"].get("beta") or {}
            writer.writerow(["length_bias", task, e["label"], "", "beta_per_sd_log_length", beta.get("value"),
                             beta.get("ci_low"), beta.get("ci_high"), e["n"], ""])
            for cand, g in e["length_controlled"]["groups"].items():
                writer.writerow(["length_controlled", task, e["label"], cand, "lc_good_rate", g["lc"]["value"],
                                 g["lc"]["ci_low"], g["lc"]["ci_high"], g["n"], ""])
        for e in section["agreement"]:
            k = e["kappa"]
            writer.writerow(["agreement", task, e["label_a"], e["label_b"], "kappa", k["value"], k["ci_low"],
                             k["ci_high"], e["n"], ""])
            a = e["agreement"]
            writer.writerow(["agreement", task, e["label_a"], e["label_b"], "raw_agreement", a["value"], a["ci_low"],
                             a["ci_high"], e["n"], ""])
        for e in (section.get("resolution") or {}).get("ties") or []:
            r = e["rate"]
            writer.writerow(["tie_rate", task, e["label"], e["measure"], "tie_rate", r["value"], r["ci_low"],
                             r["ci_high"], e["n_pairs"], ""])
        for e in (section.get("resolution") or {}).get("leaderboards") or []:
            writer.writerow(["leaderboard_agreement", task, e["label_a"], e["label_b"], "kendall_tau", e["tau"],
                             e["ci_low"], e["ci_high"], e["n_runs"], ""])
    for cal in report["calibration"]:
        writer.writerow(["calibration", "judge", cal["model"], "", "ece", cal["ece"], "", "", cal["n"], ""])
        writer.writerow(["calibration", "judge", cal["model"], "", "brier", cal["brier"], "", "", cal["n"], ""])
    for g in (report.get("judge_agreement") or {}).get("groups", []):
        names = " + ".join(r["model"] for r in g["runs"])
        for figure in ("labels", "scores"):
            if g[figure]:
                writer.writerow(["judge_agreement", "judge", names, "", f"fleiss_kappa_{figure}",
                                 g[figure]["kappa"], g[figure].get("ci_low"), g[figure].get("ci_high"),
                                 g[figure]["n_items"], ""])
    for t in (report.get("judge_agreement") or {}).get("ties", []):
        writer.writerow(["pair_ties", "judge", t["model"], t["formulation"], "tie_share", t["tie_share"]["value"],
                         t["tie_share"]["ci_low"], t["tie_share"]["ci_high"], t["n_pairs"], ""])
    for e in report["pairwise"]:
        w = e["win_rate_a"] or {}
        writer.writerow(["pairwise", e["task"], e["spec"], f"{e['model_a']} vs {e['model_b']}", "win_rate_a",
                         w.get("value"), w.get("ci_low"), w.get("ci_high"), e["n_decided"],
                         f"{e['relation_a']}/{e['relation_b']}"])
    return buf.getvalue()


def render_bias(report: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    _check_fmt(fmt)
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return _csv(report)
    if fmt == "md":
        sections, notes = sections_and_notes(report, 10_000, multiline=False)
        return _markdown(sections, notes)
    width = width or terminal_width()
    sections, notes = sections_and_notes(report, width, multiline=True)
    return render_tables(sections, notes, width, droppable=DROPPABLE)
