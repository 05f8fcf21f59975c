"""Precision and recall of the signals on real, labelled follow-ups (`uxbench mine eval-signals`).

Labels (one JSON object a line, as docs/MINING.md describes; the project's development set has this form):
`conversation_id`, `u2_turn_index` (the user's follow-up), `label` (one of `LABELS`), optional `dissatisfied` (it
must agree with the label), `stratum`, `confidence`, `why`. The labelled reply is the assistant turn at
`u2_turn_index - 1`: its row of the signal table (`signals.parquet`) is compared with the label. An item whose
reply has no row, or whose row is followed by another user turn than the labelled one, is **missing**: it counts
as a negative prediction (a miss when the item is dissatisfied), never skipped, and its reason is listed.

`score_items` is a pure function of the items and one `Prediction` per item, so the rules, a learned
classifier and the LLM check are scored by the same code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.data import user_files
from uxbench.errors import DataError
from uxbench.mining.signals.evaluate import prf

LABELS = ("repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue_positive", "continue_neutral")
DISSATISFIED_LABELS = frozenset({"repeat", "rephrase", "complaint", "dismiss"})
RULE_LABELS = ("repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue", "other")
"""The follow-up labels of the rules (`followup_label`) and of the LLM check."""
AS_RULE_LABEL = {"continue_neutral": "continue", "continue_positive": "other"}
"""A gold label in the rules' label set (thanks and approval are `other` there)."""

SIGNAL_GOLD: dict[str, frozenset[str]] = {
    "dissatisfied": DISSATISFIED_LABELS,
    "complaint": frozenset({"complaint"}),
    "dismiss": frozenset({"dismiss"}),
    "repeat": frozenset({"repeat"}),
    "rephrase": frozenset({"rephrase"}),
    "repeat_or_rephrase": frozenset({"repeat", "rephrase"}),
    "topic_change": frozenset({"topic_change"}),
    "continuation": frozenset({"continue_neutral"}),
    "praise": frozenset({"continue_positive"}),
}
"""Each measured signal and the gold labels it should fire on."""
EVIDENCE_SIGNALS = ("complaint", "dismiss", "repeat", "rephrase", "topic_change", "continuation", "praise",
                    "builds_on", "thumbs_down", "regenerate", "skim")
"""Signals whose evidence an error listing shows when they fired."""
_TEXT_CHARS = 400


@dataclass(frozen=True)
class LabelItem:
    conversation_id: str
    u2_turn_index: int
    label: str
    dissatisfied: bool
    stratum: str = "all"
    confidence: int | None = None
    why: str | None = None

    @property
    def reply_turn(self) -> int:
        return self.u2_turn_index - 1


@dataclass
class Prediction:
    """What a method says about one labelled reply."""

    signals: dict[str, bool]
    """Every name of `SIGNAL_GOLD` -> fired."""
    label: str | None
    """The method's follow-up label (`RULE_LABELS`), None when missing."""
    score: float = 0.0
    """The `dissatisfied` score in [0, 1] (a flag gives 0 or 1)."""
    evidence: dict[str, str] = field(default_factory=dict)
    """Fired signal -> what made it fire."""
    missing: str | None = None
    """Why there is no prediction (no reply row, another follow-up turn, a failed model call)."""
    followup: str | None = None
    """The follow-up text (for the error listing)."""
    prev_user: str | None = None


def _bad(path: Path, line: int, field_name: str, message: str) -> DataError:
    return DataError(message, source=str(path), line=line, field=field_name,
                     hint='a label line is {"conversation_id": ..., "u2_turn_index": N (the user\'s follow-up turn), '
                          f'"label": one of {", ".join(LABELS)}}}; docs/MINING.md, "uxbench mine eval-signals"')


def load_labels(path: Path | str) -> list[LabelItem]:
    """Labelled follow-ups, each checked (file, line and field named on an error)."""
    p = Path(path)
    try:
        lines = p.read_bytes().splitlines()
    except OSError as err:
        raise DataError(f"cannot read the labels: {err}", source=str(p)) from None
    items: list[LabelItem] = []
    seen: dict[tuple[str, int], int] = {}
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        row = user_files.parse_json(raw, str(p), line=n)
        if not isinstance(row, dict):
            raise DataError("expected a JSON object", source=str(p), line=n)
        for name in ("conversation_id", "u2_turn_index", "label"):
            if name not in row:
                raise _bad(p, n, name, "missing field")
        turn = row["u2_turn_index"]
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            raise _bad(p, n, "u2_turn_index", f"expected an integer >= 1 (the follow-up's turn), got {turn!r}")
        label = row["label"]
        if label not in LABELS:
            raise _bad(p, n, "label", f"unknown label {label!r}; expected one of {', '.join(LABELS)}")
        implied = label in DISSATISFIED_LABELS
        dissatisfied = row.get("dissatisfied", implied)
        if dissatisfied is not implied:
            raise _bad(p, n, "dissatisfied", f"{dissatisfied!r} disagrees with label {label!r}")
        key = (str(row["conversation_id"]), turn)
        if key in seen:
            raise _bad(p, n, "u2_turn_index", f"the same follow-up is labelled on line {seen[key]} too")
        seen[key] = n
        confidence = row.get("confidence")
        items.append(LabelItem(
            conversation_id=key[0], u2_turn_index=turn, label=label, dissatisfied=implied,
            stratum=str(row.get("stratum") or "all"),
            confidence=int(confidence) if isinstance(confidence, int) else None,
            why=str(row["why"]) if row.get("why") is not None else None))
    if not items:
        raise DataError("no labelled item in the file", source=str(p))
    return items


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _TEXT_CHARS:
        return text
    return text[:_TEXT_CHARS] + " …"


def rule_prediction(item: LabelItem, row: Mapping[str, Any] | None, texts: Mapping[int, str],
                    threshold: float | None = None, missing_reason: str | None = None) -> Prediction:
    """The rules' prediction from the reply's row of the signal table (`signals.parquet`); `texts` holds the
    conversation's turns by turn_index. With `threshold`, `dissatisfied` is `dissatisfied_score >= threshold`
    (the flag stands in for the score when the table has no score column)."""
    followup, prev = texts.get(item.u2_turn_index), None
    if row is not None and row.get("next_user_turn") != item.u2_turn_index:
        nxt = row.get("next_user_turn")
        missing_reason = (f"the reply at turn {item.reply_turn} is followed by "
                          + (f"turn {nxt}" if nxt is not None else "no user turn")
                          + f", not by the labelled turn {item.u2_turn_index}")
        row = None
    if row is None:
        return Prediction(signals=dict.fromkeys(SIGNAL_GOLD, False), label=None, followup=_clip(followup),
                          missing=missing_reason or f"no reply at turn {item.reply_turn} in the signal table")
    if row.get("prev_user_turn") is not None:
        prev = texts.get(int(row["prev_user_turn"]))
    score = row.get("dissatisfied_score")
    score = float(score) if score is not None else float(bool(row.get("dissatisfied")))
    fired = {name: bool(row.get(name)) for name in SIGNAL_GOLD if name in row}
    fired["dissatisfied"] = score >= threshold if threshold is not None else bool(row.get("dissatisfied"))
    fired["repeat_or_rephrase"] = fired.get("repeat", False) or fired.get("rephrase", False)
    evidence = {name: str(row.get(f"{name}_evidence")) for name in EVIDENCE_SIGNALS
                if row.get(name) and row.get(f"{name}_evidence")}
    if row.get("dissatisfied_by"):
        evidence["dissatisfied_by"] = str(row["dissatisfied_by"])
    return Prediction(signals={name: fired.get(name, False) for name in SIGNAL_GOLD},
                      label=row.get("followup_label"), score=score, evidence=evidence,
                      followup=_clip(followup), prev_user=_clip(prev))


def _listing(item: LabelItem, pred: Prediction) -> dict[str, Any]:
    return {
        "conversation_id": item.conversation_id, "u2_turn_index": item.u2_turn_index, "stratum": item.stratum,
        "label": item.label, "confidence": item.confidence, "why": item.why, "predicted_label": pred.label,
        "score": pred.score, "evidence": pred.evidence, "missing": pred.missing, "followup": pred.followup,
        "prev_user": pred.prev_user,
    }


def _signal_figures(items: Sequence[LabelItem], preds: Sequence[Prediction]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, gold_labels in SIGNAL_GOLD.items():
        gold = [it.label in gold_labels for it in items]
        fired = [p.signals[name] for p in preds]
        tp = sum(g and f for g, f in zip(gold, fired, strict=True))
        fp = sum(f and not g for g, f in zip(gold, fired, strict=True))
        fn = sum(g and not f for g, f in zip(gold, fired, strict=True))
        out[name] = {"n": len(items), **prf(tp, fp, fn)}
    return out


def confusion(items: Sequence[LabelItem], preds: Sequence[Prediction]) -> dict[str, dict[str, int]]:
    """Gold label (the development set's seven) -> predicted follow-up label (or `missing`) -> count."""
    table: dict[str, Counter[str]] = {label: Counter() for label in LABELS}
    for it, p in zip(items, preds, strict=True):
        table[it.label][p.label or "missing"] += 1
    return {gold: dict(sorted(row.items())) for gold, row in table.items() if row}


def score_items(items: Sequence[LabelItem], preds: Sequence[Prediction]) -> dict[str, Any]:
    """Per-signal figures overall and per stratum, the label confusion, agreement of the follow-up label
    with the gold label (in the rules' label set), and the false positives and misses of `dissatisfied`."""
    if len(items) != len(preds):
        raise ValueError(f"{len(items)} items but {len(preds)} predictions")
    strata: dict[str, list[int]] = {}
    for k, it in enumerate(items):
        strata.setdefault(it.stratum, []).append(k)
    agree = sum(p.label == AS_RULE_LABEL.get(it.label, it.label) for it, p in zip(items, preds, strict=True))
    return {
        "n": len(items),
        "n_dissatisfied": sum(it.dissatisfied for it in items),
        "n_missing": sum(p.missing is not None for p in preds),
        "signals": _signal_figures(items, preds),
        "by_stratum": {
            s: {"n": len(ks), "signals": _signal_figures([items[k] for k in ks], [preds[k] for k in ks])}
            for s, ks in sorted(strata.items())
        },
        "label_agreement": {"agree": agree, "n": len(items), "share": agree / len(items) if items else None},
        "confusion": confusion(items, preds),
        "false_positives": [_listing(it, p) for it, p in zip(items, preds, strict=True)
                            if p.signals["dissatisfied"] and not it.dissatisfied],
        "misses": [_listing(it, p) for it, p in zip(items, preds, strict=True)
                   if it.dissatisfied and not p.signals["dissatisfied"]],
        "missing": [{"conversation_id": it.conversation_id, "u2_turn_index": it.u2_turn_index,
                     "dissatisfied": it.dissatisfied, "reason": p.missing}
                    for it, p in zip(items, preds, strict=True) if p.missing is not None],
    }
