"""`uxbench sim signals RUN`: do the mining detectors find the reactions the simulator intended?

Each session goes the way `uxbench mine run` reads it: its canonical log rows (`store.canonical_rows`) through
the canonical adapter, session building and the signal stage (`mining.signals.compute_signals`, default
configuration). For every assistant reply the user reacted to, the intended act (the policy's) is set against
the reaction the detectors found:

    intended complain -> complaint;  rephrase -> rephrase;  repeat -> repeat;  dismiss -> dismiss;
    abandon_topic -> topic change;  leave (patience ran out, no message) -> conversation end;
    answer / follow_up / stop_success -> satisfied (no dissatisfied reaction)

This is a consistency check of the simulator against the detectors, reported as such: agreement measures how
well the two vocabularies line up on simulated text, not how good either is on real users. Likes and dislikes
are structured fields and round-trip exactly (counted apart). Free-mode sessions have no intended acts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from uxbench.metrics.agreement import cohen_kappa
from uxbench.metrics.proportions import proportion
from uxbench.sim.store import SimStore, canonical_rows
from uxbench.sim.types import SessionRecord

LABELS = ("satisfied", "complain", "rephrase", "repeat", "dismiss", "abandon_topic", "leave")
_INTENDED = {"answer": "satisfied", "follow_up": "satisfied", "stop_success": "satisfied", "complain": "complain",
             "rephrase": "rephrase", "repeat": "repeat", "dismiss": "dismiss", "abandon_topic": "abandon_topic"}
DISSATISFIED = frozenset(LABELS) - {"satisfied"}


def detected_reaction(signal: Any) -> str:
    """The one reaction the detectors found after a reply (in the recovery chains' order of precedence)."""
    if signal.complaint.fired:
        return "complain"
    if signal.dismiss.fired:
        return "dismiss"
    if signal.repeat.fired:
        return "repeat"
    if signal.rephrase.fired:
        return "rephrase"
    if signal.topic_change.fired:
        return "abandon_topic"
    if signal.next_user_turn is None:
        return "leave"
    return "satisfied"


def session_pairs(record: SessionRecord) -> list[dict[str, Any]]:
    """(intended, detected, dissatisfied flag) for every reply of one session that has an intended reaction."""
    from uxbench.mining.logformat import parse_canonical
    from uxbench.mining.sessions import build_session
    from uxbench.mining.signals import compute_signals

    turns = [t for row in canonical_rows(record) for t in parse_canonical(row)]
    session = build_session(record.session_id, turns)
    by_turn = {s.turn_index: s for s in compute_signals(session)}
    out = []
    for i, turn in enumerate(record.turns):
        if turn.role != "assistant":
            continue
        nxt = record.turns[i + 1] if i + 1 < len(record.turns) else None
        if nxt is not None and nxt.act in _INTENDED:
            intended = _INTENDED[nxt.act]
        elif nxt is None and record.termination.reason == "patience_exhausted":
            intended = "leave"
        else:
            continue
        sig = by_turn.get(turn.turn_index)
        if sig is None:
            continue
        out.append({"session_id": record.session_id, "turn_index": turn.turn_index, "lang": record.lang,
                    "intended": intended, "detected": detected_reaction(sig), "dissatisfied": bool(sig.dissatisfied),
                    "feedback": turn.feedback, "thumbs_down": bool(sig.thumbs_down.fired),
                    "thumbs_up": bool(sig.thumbs_up.fired)})
    return out


def agreement_report(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Agreement, Cohen's kappa, the confusion matrix, recall per intended act, and the dissatisfied flag's
    agreement with the intended acts."""
    intended = [p["intended"] for p in pairs]
    detected = [p["detected"] for p in pairs]
    kappa = cohen_kappa(intended, detected) if pairs else None
    confusion = {a: {b: 0 for b in LABELS} for a in LABELS}
    for a, b in zip(intended, detected, strict=True):
        confusion[a][b] += 1
    per_act = {a: proportion(confusion[a][a], sum(confusion[a].values())) for a in LABELS
               if sum(confusion[a].values())}
    flag_hits = sum((p["intended"] in DISSATISFIED) == p["dissatisfied"] for p in pairs)
    thumbs = [p for p in pairs if p["feedback"] is not None]
    thumbs_hits = sum((p["feedback"] == "dislike") == p["thumbs_down"] and (p["feedback"] == "like") == p["thumbs_up"]
                      for p in thumbs)
    by_lang: dict[str, Any] = {}
    for lang in sorted({p["lang"] for p in pairs}):
        group = [p for p in pairs if p["lang"] == lang]
        by_lang[lang] = proportion(sum(p["intended"] == p["detected"] for p in group), len(group))
    return {
        "what": "consistency check: intended simulator acts against the mining detectors' reactions on the same "
                "simulated messages (not a measure of either on real users)",
        "n": len(pairs),
        "agreement": proportion(sum(a == b for a, b in zip(intended, detected, strict=True)), len(pairs)),
        "kappa": kappa,
        "by_lang": by_lang,
        "recall_by_act": per_act,
        "dissatisfied_flag_agreement": proportion(flag_hits, len(pairs)),
        "feedback_round_trip": proportion(thumbs_hits, len(thumbs)),
        "confusion": confusion,
        "confusion_order": "rows: intended act; columns: detected reaction",
    }


def signal_check(run_dir: str | Path) -> dict[str, Any]:
    from uxbench.errors import UxbenchError

    store = SimStore.open_existing(run_dir)
    try:
        records = [r for r in store.iter_sessions() if r.mode == "structured"]
    finally:
        store.close()
    if not records:
        raise UxbenchError(f"{run_dir} holds no structured-mode sessions: free-mode sessions have no intended acts "
                           "to compare (run `uxbench mine run` on them instead).")
    pairs = [p for r in records for p in session_pairs(r)]
    report = agreement_report(pairs)
    report["n_sessions"] = len(records)
    report["counts"] = dict(Counter(p["intended"] for p in pairs))
    return report


def render_signal_check(report: dict[str, Any], fmt: str) -> str:
    from uxbench.report.render import _markdown, _rich, pct

    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    kappa = (report.get("kappa") or {}).get("kappa") or {}
    k_text = "—" if kappa.get("value") is None else \
        f"{kappa['value']:.3f} [{kappa['ci_low']:.3f}, {kappa['ci_high']:.3f}]"
    head = [["Agreement %", pct(report.get("agreement")), str(report["n"])],
            ["Cohen's kappa", k_text, str(report["n"])],
            ["Dissatisfied flag agrees %", pct(report.get("dissatisfied_flag_agreement")), str(report["n"])],
            ["Likes/dislikes round trip %", pct(report.get("feedback_round_trip")),
             str((report.get("feedback_round_trip") or {}).get("n", 0))]]
    head += [[f"Agreement % ({lang})", pct(cell), str(cell.get("n"))] for lang, cell in report["by_lang"].items()]
    recall = [[act, pct(cell), str(cell.get("n"))] for act, cell in report["recall_by_act"].items()]
    matrix = [[a, *[str(report["confusion"][a][b]) for b in LABELS]] for a in LABELS]
    if fmt == "csv":
        return "\n".join(",".join(f'"{c}"' for c in row) for row in [["intended", *LABELS], *matrix]) + "\n"
    short = ["sat.", "compl.", "reph.", "rep.", "dism.", "aband.", "leave"]
    sections = [("Intended acts against detected reactions", ["", "value [95% CI]", "n"], head),
                ("Recall by intended act", ["act", "detected as intended %", "n"], recall),
                ("Confusion (rows intended, columns detected)", ["intended", *short], matrix)]
    notes = [f"{report['n_sessions']} structured sessions; {report['what']}."]
    if fmt == "table":
        return _rich(sections, notes, None, wrap=(0,))
    return _markdown(sections, notes, text_columns=1)
