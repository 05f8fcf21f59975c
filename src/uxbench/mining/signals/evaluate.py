"""Precision and recall of the signal rules (and of the LLM check) on the project's labelled sets.

`signal_sets/followups.jsonl`: (previous user message, reply, next user message) triples in Chinese and
English, each with its gold label: repeat, rephrase, complaint, dismiss, topic_change, continue, praise or
followup (a neutral question that builds on the reply), the false-positive traps marked in `trap`, and a
`split` (dev: used to choose thresholds, test: held out). `signal_sets/timing.jsonl`: reply lengths and
gaps labelled skim / read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uxbench.data import user_files
from uxbench.errors import DataError
from uxbench.mining.signals.config import DEFAULT_CONFIG, SignalConfig
from uxbench.mining.signals.followup import FOLLOWUP_LABELS, Followup, analyse_followup
from uxbench.mining.signals.llm_check import FollowupPair, classify_followups
from uxbench.mining.signals.similarity import SimilarityMethod
from uxbench.mining.signals.timing import skim_from_gap

if TYPE_CHECKING:
    from uxbench.models.model import Model

SETS_DIR = Path(__file__).resolve().parent.parent / "signal_sets"
FOLLOWUPS_PATH = SETS_DIR / "followups.jsonl"
TIMING_PATH = SETS_DIR / "timing.jsonl"
GOLD_LABELS = ("repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue", "praise", "followup")
DISSATISFIED_GOLD = frozenset({"repeat", "rephrase", "complaint", "dismiss"})
COARSE = {"praise": "other", "followup": "continue"}
"""Gold label -> the label set shared by the rules' `rule_label` and the LLM check."""

# rule signal -> the gold labels it should fire on
SIGNAL_GOLD: dict[str, frozenset[str]] = {
    "complaint": frozenset({"complaint"}),
    "dismiss": frozenset({"dismiss"}),
    "repeat": frozenset({"repeat"}),
    "rephrase": frozenset({"rephrase"}),
    "repeat_or_rephrase": frozenset({"repeat", "rephrase"}),
    "topic_change": frozenset({"topic_change"}),
    "continuation": frozenset({"continue"}),
    "praise": frozenset({"praise"}),
    "builds_on": frozenset({"followup"}),
    "engaged": frozenset({"followup", "continue"}),
    "dissatisfied": DISSATISFIED_GOLD,
}


def load_jsonl(path: Path | str, required: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of a labelled set, each checked for its required fields."""
    p = Path(path)
    rows: list[dict[str, Any]] = []
    try:
        lines = p.read_bytes().splitlines()
    except OSError as err:
        raise DataError(f"cannot read labelled set: {err}", source=str(p)) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = user_files.parse_json(line, str(p), line=n)
        if not isinstance(row, dict):
            raise DataError("each line must be a JSON object", source=str(p), line=n)
        for key in required:
            if key not in row:
                raise DataError("missing field", source=str(p), line=n, field=key)
        rows.append(row)
    return rows


def load_followups(path: Path | str = FOLLOWUPS_PATH, split: str | None = None) -> list[dict[str, Any]]:
    rows = load_jsonl(path, ("prev_user", "assistant", "next_user", "label"))
    for n, row in enumerate(rows, 1):
        if row["label"] not in GOLD_LABELS:
            raise DataError(f"unknown label {row['label']!r}; expected one of {GOLD_LABELS}",
                            source=str(path),
                            line=n, field="label")
    return [r for r in rows if split is None or r.get("split") == split]


def prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    """Precision, recall, F1 and Wilson 95% intervals (None where undefined)."""
    from uxbench.metrics.proportions import wilson_ci

    n_pred, n_gold = tp + fp, tp + fn
    precision = tp / n_pred if n_pred else None
    recall = tp / n_gold if n_gold else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    return {
        "tp": tp, "fp": fp, "fn": fn, "n_pred": n_pred, "n_gold": n_gold,
        "precision": precision, "precision_ci": list(wilson_ci(tp, n_pred)) if n_pred else None,
        "recall": recall, "recall_ci": list(wilson_ci(tp, n_gold)) if n_gold else None,
        "f1": f1,
    }


def _score(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, Any]:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    fn = sum(g and not p for g, p in zip(gold, pred, strict=True))
    return prf(tp, fp, fn)


def label_metrics(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Per-label P/R/F1 over the shared label set, accuracy, and the dissatisfied flag implied by labels."""
    coarse = [COARSE.get(g, g) for g in gold]
    per: dict[str, dict[str, Any]] = {
        lab: _score([g == lab for g in coarse], [p == lab for p in pred]) for lab in FOLLOWUP_LABELS
    }
    bad = {"repeat", "rephrase", "complaint", "dismiss"}
    per["dissatisfied"] = _score([g in bad for g in coarse], [p in bad for p in pred])
    correct = sum(g == p for g, p in zip(coarse, pred, strict=True))
    return {"n": len(gold), "accuracy": correct / len(gold) if gold else None, "labels": per}


def _fired(f: Followup, name: str, config: SignalConfig) -> bool:
    if name == "repeat_or_rephrase":
        return bool(f.repeat.fired or f.rephrase.fired)
    if name == "engaged":
        return bool(f.builds_on.fired or f.continuation.fired)
    if name == "dissatisfied":
        return any(getattr(f, s).fired for s in ("complaint", "dismiss", "repeat", "rephrase")
                   if s in config.strong_signals)
    return bool(getattr(f, name).fired)


def evaluate_skim(path: Path | str = TIMING_PATH, config: SignalConfig = DEFAULT_CONFIG) -> dict[str, Any]:
    rows = load_jsonl(path, ("reply", "gap_s", "label"))
    gold = [r["label"] == "skim" for r in rows]
    pred = [
        bool(skim_from_gap(r["reply"] * int(r.get("reply_repeat", 1)), float(r["gap_s"]),
                           seconds_per_unit=config.skim_seconds_per_unit, max_gap_s=config.skim_max_gap_s,
                           min_reply_chars=config.skim_min_reply_chars).fired)
        for r in rows
    ]
    return {"n": len(rows), **_score(gold, pred)}


def evaluate_rules(
    path: Path | str = FOLLOWUPS_PATH,
    *,
    timing_path: Path | str | None = TIMING_PATH,
    config: SignalConfig = DEFAULT_CONFIG,
    split: str | None = None,
) -> dict[str, Any]:
    """Per-signal precision/recall/F1 (with n and Wilson CIs) of the rules on a labelled follow-up set,
    plus label-level metrics of `rule_label` and, when `timing_path` is given, the skim rule."""
    rows = load_followups(path, split)
    found = [analyse_followup(r["prev_user"], r["assistant"], r["next_user"], config) for r in rows]
    signals = {
        name: _score([r["label"] in gold for r in rows], [_fired(f, name, config) for f in found])
        for name, gold in SIGNAL_GOLD.items()
    }
    if timing_path is not None:
        signals["skim"] = evaluate_skim(timing_path, config)
    errors = [
        {"id": r.get("id"), "gold": r["label"], "rule": f.label, "next_user": r["next_user"]}
        for r, f in zip(rows, found, strict=True) if COARSE.get(r["label"], r["label"]) != f.label
    ]
    return {
        "n": len(rows),
        "split": split or "all",
        "signals": signals,
        "rule_labels": label_metrics([r["label"] for r in rows], [f.label for f in found]),
        "errors": errors,
    }


async def evaluate_llm(
    path: Path | str,
    model: Model,
    *,
    split: str | None = None,
) -> dict[str, Any]:
    """Label-level metrics of the LLM follow-up check on a labelled set, with the failed count."""
    rows = load_followups(path, split)
    pairs = [FollowupPair(prev_user=r["prev_user"], assistant=r["assistant"], next_user=r["next_user"])
             for r in rows]
    verdicts = await classify_followups(pairs, model)
    result = label_metrics([r["label"] for r in rows], [v.label for v in verdicts])
    result["failed"] = sum(v.label == "failed" for v in verdicts)
    result["retried"] = sum(v.attempts > 1 for v in verdicts)
    return result


def sweep_similarity(
    path: Path | str = FOLLOWUPS_PATH,
    *,
    split: str | None = "dev",
    methods: Sequence[SimilarityMethod] = ("token_indel", "char_indel", "token_set", "char_bigram_dice"),
    repeat_grid: Sequence[float] = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9),
    rephrase_grid: Sequence[float] = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6),
) -> list[dict[str, Any]]:
    """F1 of repeat, rephrase and repeat-or-rephrase for every (method, repeat, rephrase threshold),
    best first by mean F1 of repeat and rephrase, then by precision of repeat-or-rephrase."""
    rows = load_followups(path, split)
    out = []
    for method in methods:
        for rep in repeat_grid:
            for reph in (r for r in rephrase_grid if r <= rep):
                cfg = DEFAULT_CONFIG.model_copy(
                    update={"similarity_method": method, "repeat_threshold": rep, "rephrase_threshold": reph})
                found = [analyse_followup(r["prev_user"], r["assistant"], r["next_user"], cfg) for r in rows]
                scores = {name: _score([r["label"] in SIGNAL_GOLD[name] for r in rows],
                                       [_fired(f, name, cfg) for f in found])
                          for name in ("repeat", "rephrase", "repeat_or_rephrase")}
                out.append({"method": method, "repeat_threshold": rep, "rephrase_threshold": reph,
                            **{f"{k}_f1": v["f1"] for k, v in scores.items()},
                            "repeat_or_rephrase_precision": scores["repeat_or_rephrase"]["precision"] or 0.0})
    out.sort(key=lambda d: (-(d["repeat_f1"] + d["rephrase_f1"]) / 2, -d["repeat_or_rephrase_precision"]))
    return out


def format_table(result: dict[str, Any]) -> str:
    """A plain-text table of per-signal figures (for test output and the README)."""
    lines = [f"{'signal':<20}{'n_gold':>7}{'n_pred':>7}{'prec':>7}{'  95% CI':<15}"
             f"{'recall':>7}{'  95% CI':<15}"
             f"{'F1':>6}"]
    for name, m in result["signals"].items():
        def fmt(v: float | None) -> str:
            return f"{v:.2f}" if v is not None else "  - "

        def ci(c: list[float] | None) -> str:
            return f"  [{c[0]:.2f},{c[1]:.2f}]" if c else "  -"

        lines.append(f"{name:<20}{m['n_gold']:>7}{m['n_pred']:>7}{fmt(m['precision']):>7}{ci(m['precision_ci']):<15}"
                     f"{fmt(m['recall']):>7}{ci(m['recall_ci']):<15}{m['f1']:>6.2f}")
    return "\n".join(lines)
