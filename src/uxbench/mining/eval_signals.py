"""`uxbench mine eval-signals`: the signals of the mining pipeline measured on real labelled follow-ups.

The deterministic stages run on the log (`pipeline.mined`), each label item is joined to its reply's row
(`signals.real_eval`), and the items of the chosen part of the fixed split (`signals.split`) are scored. The
`dissatisfied` score's precision-recall curve is drawn on that part; the operating point for a target
precision is always chosen on the `dev` part and then measured on the part reported, so figures reported
on `held-out` were never tuned on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uxbench.mining.pipeline.mined import MinedLog, mine_for_eval
from uxbench.mining.signals.curve import pr_curve, threshold_for_precision
from uxbench.mining.signals.evaluate import prf
from uxbench.mining.signals.real_eval import (
    DISSATISFIED_LABELS,
    SIGNAL_GOLD,
    LabelItem,
    Prediction,
    load_labels,
    rule_prediction,
    score_items,
)
from uxbench.mining.signals.split import HELD_OUT_PERCENT, Split, split_of

if TYPE_CHECKING:
    from uxbench.models.model import Model

SCORE_COLUMN = "dissatisfied_score"


def _absent_reason(mined: MinedLog, cid: str) -> str | None:
    if cid in mined.absent:
        return f"conversation {mined.absent[cid]}"
    if cid not in mined.texts:
        return "conversation not in the log"
    return None


def rules_predictions(items: Sequence[LabelItem], mined: MinedLog, threshold: float | None = None) -> list[Prediction]:
    return [rule_prediction(it, mined.rows.get((it.conversation_id, it.reply_turn)),
                            mined.texts.get(it.conversation_id, {}), threshold,
                            _absent_reason(mined, it.conversation_id))
            for it in items]


def _at(items: Sequence[LabelItem], preds: Sequence[Prediction], threshold: float) -> dict[str, Any]:
    gold = [it.dissatisfied for it in items]
    fired = [p.score >= threshold for p in preds]
    tp = sum(g and f for g, f in zip(gold, fired, strict=True))
    fp = sum(f and not g for g, f in zip(gold, fired, strict=True))
    return {"threshold": threshold, "n": len(items), **prf(tp, fp, sum(gold) - tp)}


def build_result(items: Sequence[LabelItem], preds: Sequence[Prediction], *, split: Split,
                 target_precision: float, meta: dict[str, Any]) -> dict[str, Any]:
    """Scores of the items in `split`, the `dissatisfied` score's curve there, and the operating point for
    `target_precision` chosen on the `dev` part and measured on `split`."""
    parts = [split_of(it.conversation_id) for it in items]
    keep = [k for k, part in enumerate(parts) if split == "all" or part == split]
    chosen_items, chosen_preds = [items[k] for k in keep], [preds[k] for k in keep]
    result: dict[str, Any] = {
        **meta,
        "split": split,
        "split_rule": {"by": "sha256(conversation_id) % 100", "held_out_below": HELD_OUT_PERCENT},
        **score_items(chosen_items, chosen_preds),
    }
    dev = [k for k, part in enumerate(parts) if part == "dev"]
    dev_point = threshold_for_precision(
        pr_curve([preds[k].score for k in dev], [items[k].dissatisfied for k in dev]), target_precision)
    result["curve"] = pr_curve([p.score for p in chosen_preds], [it.dissatisfied for it in chosen_items])
    result["operating_point"] = {
        "target_precision": target_precision,
        "chosen_on": "dev",
        "threshold": dev_point["threshold"] if dev_point else None,
        "on_dev": dev_point,
        "reported_on": split,
        "reported": _at(chosen_items, chosen_preds, dev_point["threshold"]) if dev_point else None,
        "tuned_on_reported": split != "held-out",
    }
    return result


def evaluate_signals(labels: Path, log: Path, *, split: Split = "held-out", threshold: float | None = None,
                     target_precision: float = 0.6, workdir: Path | None = None, workers: int | None = None,
                     say: Callable[[str], None] | None = None,
                     signal_settings: dict[str, Any] | None = None, learned: str | None = None) -> dict[str, Any]:
    """The deterministic stages of `uxbench mine run` on labelled follow-ups: the rules, or with `learned` (a
    classifier directory) the learned follow-up classifier deciding `dissatisfied`."""
    items = load_labels(labels)
    mined = mine_for_eval(log, {it.conversation_id for it in items}, workdir=workdir, workers=workers, say=say,
                          signal_settings=signal_settings, learned=learned)
    has_score = SCORE_COLUMN in mined.columns
    meta = {
        "method": "rules" if learned is None else f"learned:{learned}", "labels": str(labels), "log": str(log),
        "threshold": threshold,
        "score_source": SCORE_COLUMN if has_score else "dissatisfied flag (0/1: the signal table has no "
                                                     f"{SCORE_COLUMN} column)",
    }
    if learned is not None:
        meta["note"] = ("the classifier's scores on the items it was trained on are in-sample: a threshold chosen "
                        "on dev, when it was trained on dev, is optimistic; its honest dev figures are "
                        "train-signals' cross-validation")
    return build_result(items, rules_predictions(items, mined, threshold), split=split,
                        target_precision=target_precision, meta=meta)


def label_prediction(label: str | None, missing: str | None = None, evidence: str | None = None) -> Prediction:
    """A prediction from a follow-up label alone (the LLM check): each signal from the label."""
    fired = {
        "dissatisfied": label in DISSATISFIED_LABELS, "complaint": label == "complaint",
        "dismiss": label == "dismiss", "repeat": label == "repeat", "rephrase": label == "rephrase",
        "repeat_or_rephrase": label in ("repeat", "rephrase"), "topic_change": label == "topic_change",
        "continuation": label == "continue", "praise": False,
    }
    assert set(fired) == set(SIGNAL_GOLD)
    return Prediction(signals=fired, label=label, score=float(fired["dissatisfied"]), missing=missing,
                      evidence={"model": evidence} if evidence else {})


async def llm_predictions(items: Sequence[LabelItem], mined: MinedLog, model: Model) -> list[Prediction]:
    """The LLM follow-up check on every labelled follow-up that has its reply (same text as the pipeline's
    `--llm-signals` stage sends: de-identified); a failed call is missing, not skipped."""
    from uxbench.mining.signals.llm_check import FollowupPair, classify_followups

    base = rules_predictions(items, mined)  # the join (and the reasons an item is missing)
    asked = [k for k, p in enumerate(base) if p.missing is None]
    pairs = []
    for k in asked:
        it = items[k]
        texts = mined.texts[it.conversation_id]
        row = mined.rows[(it.conversation_id, it.reply_turn)]
        prev = row.get("prev_user_turn")
        pairs.append(FollowupPair(prev_user=texts.get(int(prev)) if prev is not None else None,
                                  assistant=texts[it.reply_turn], next_user=texts[it.u2_turn_index]))
    verdicts = await classify_followups(pairs, model)
    out = [label_prediction(None, p.missing) for p in base]
    for k, verdict in zip(asked, verdicts, strict=True):
        if verdict.label == "failed":
            out[k] = label_prediction(None, f"model call failed: {verdict.error}")
        else:
            out[k] = label_prediction(verdict.label, evidence=verdict.reason)
        out[k].followup, out[k].prev_user = base[k].followup, base[k].prev_user
    return out


async def evaluate_llm_signals(labels: Path, log: Path, spec: str, model_args: dict[str, str], *,
                               split: Split = "held-out", target_precision: float = 0.6,
                               workdir: Path | None = None, cache_path: Path | None = None,
                               concurrency: int | None = None,
                               say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The LLM follow-up check (`--llm-signals`) on labelled follow-ups: the same figures as the rules',
    with the prompt files' hash. Only the labelled follow-ups are sent to the model."""
    import asyncio
    import tempfile

    from uxbench.mining.llm import default_cache_path, open_model
    from uxbench.mining.signals.llm_check import PROMPT_FILES, prompt_sha256
    from uxbench.models.registry import validate_provider_args

    validate_provider_args(spec, model_args)
    items = load_labels(labels)
    wanted = {it.conversation_id for it in items}
    with tempfile.TemporaryDirectory(prefix="uxbench-eval-signals-") as tmp:
        mined = await asyncio.to_thread(mine_for_eval, log, wanted, workdir=workdir, say=say)
        cache = cache_path or default_cache_path((workdir or Path(tmp)) / "work")
        cache.parent.mkdir(parents=True, exist_ok=True)
        async with open_model(spec, model_args, cache_path=cache, concurrency=concurrency) as model:
            preds = await llm_predictions(items, mined, model)
    meta = {
        "method": "llm", "model": spec, "labels": str(labels), "log": str(log), "threshold": None,
        "score_source": "the model's label (0/1: dissatisfied when repeat, rephrase, complaint or dismiss)",
        "prompt_files": [str(PROMPT_FILES[lang].name) for lang in ("en", "zh")],
        "prompt_sha256": prompt_sha256(),
        "failed": sum(bool(p.missing and p.missing.startswith("model call failed")) for p in preds),
    }
    return build_result(items, preds, split=split, target_precision=target_precision, meta=meta)
