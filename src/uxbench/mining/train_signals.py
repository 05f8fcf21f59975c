"""`uxbench mine train-signals`: train the learned follow-up classifier on labelled follow-ups, measure it by
cross-validation grouped by conversation, and compare it with the rules on the same items, paired.

The classifier is trained on one part of the fixed split (`dev` by default). Within that part, 5-fold
cross-validation by conversation gives every item a prediction from a model that never saw its conversation;
the model saved is then fitted on the whole part, and, when it was trained on `dev`, measured once on
`held-out` beside the rules. Comparison, per item (`dissatisfied` right or wrong): McNemar's test, the
paired stratified bootstrap of balanced accuracy (`metrics.paired`), and a paired bootstrap of the F1
difference. Items whose reply is missing from the log cannot be featurised: they are left out of training
and count as not flagged (for both methods) when measuring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uxbench.errors import ConfigError
from uxbench.metrics.paired import mcnemar, paired_bootstrap_diff
from uxbench.metrics.proportions import percentile_interval
from uxbench.mining.pipeline.mined import MinedLog, mine_for_eval
from uxbench.mining.signals.evaluate import prf
from uxbench.mining.signals.learned import FollowupClassifier, Triple
from uxbench.mining.signals.real_eval import LabelItem, load_labels
from uxbench.mining.signals.split import Split, split_of

FOLDS = 5
N_BOOT = 2000
REPORT_FILE = "report.json"


def triples(items: Sequence[LabelItem], mined: MinedLog) -> list[Triple | None]:
    """The (question, reply, follow-up) of each item, None when its reply is not in the signal table."""
    out: list[Triple | None] = []
    for it in items:
        row = mined.rows.get((it.conversation_id, it.reply_turn))
        texts = mined.texts.get(it.conversation_id, {})
        if row is None or row.get("next_user_turn") != it.u2_turn_index or it.u2_turn_index not in texts:
            out.append(None)
            continue
        prev = row.get("prev_user_turn")
        out.append(Triple(texts.get(int(prev)) if prev is not None else None, texts.get(it.reply_turn, ""),
                          texts[it.u2_turn_index]))
    return out


def rules_flags(items: Sequence[LabelItem], mined: MinedLog) -> list[bool]:
    flags = []
    for it in items:
        row = mined.rows.get((it.conversation_id, it.reply_turn))
        flags.append(bool(row and row.get("next_user_turn") == it.u2_turn_index and row.get("dissatisfied")))
    return flags


def cross_validated(found: Sequence[Triple | None], gold: Sequence[bool], groups: Sequence[str], *,
                    folds: int = FOLDS, seed: int = 0) -> list[float]:
    """Out-of-fold P(dissatisfied) per item (GroupKFold by conversation); 0 where the triple is missing."""
    from sklearn.model_selection import GroupKFold

    have = {k: t for k, t in enumerate(found) if t is not None}
    keys = list(have)
    probs = [0.0] * len(found)
    splitter = GroupKFold(n_splits=min(folds, len({groups[k] for k in keys})))
    for train, test in splitter.split(keys, groups=[groups[k] for k in keys]):
        tr, te = [keys[i] for i in train], [keys[i] for i in test]
        clf = FollowupClassifier.fit([have[k] for k in tr], [gold[k] for k in tr], seed=seed)
        for k, p in zip(te, clf.predict_proba([have[k] for k in te]), strict=True):
            probs[k] = p
    return probs


def _prf(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, Any]:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    return {"n": len(gold), **prf(tp, fp, sum(gold) - tp)}


def _f1(gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """F1 per bootstrap row (rows of index resamples applied to gold and pred), 0 where undefined."""
    tp = (gold & pred).sum(-1)
    denom = gold.sum(-1) + pred.sum(-1)
    return np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)


def compare(gold: Sequence[bool], learned: Sequence[bool], rules: Sequence[bool], *, seed: int = 0,
            n_boot: int = N_BOOT) -> dict[str, Any]:
    """The learned classifier (A) against the rules (B) on the same items, paired."""
    g, a, b = (np.asarray(x, dtype=bool) for x in (gold, learned, rules))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(g), size=(n_boot, len(g)))
    diffs = _f1(g[idx], a[idx]) - _f1(g[idx], b[idx])
    low, high = percentile_interval(diffs, 0.95)
    f1_a, f1_b = float(_f1(g, a)), float(_f1(g, b))
    return {
        "learned": _prf(gold, learned), "rules": _prf(gold, rules),
        "f1_diff": f1_a - f1_b, "f1_diff_ci": [float(low), float(high)], "n_boot": n_boot, "seed": seed,
        "mcnemar": mcnemar(a == g, b == g),
        "balanced_accuracy": paired_bootstrap_diff(list(a == g), list(b == g),
                                                   ["bad" if x else "good" for x in gold], n_boot=n_boot, seed=seed),
    }


def verdict(comparison: dict[str, Any]) -> str:
    """A plain sentence: does the learned classifier beat the rules here?"""
    low, high = comparison["f1_diff_ci"]
    d = comparison["f1_diff"]
    p = comparison["mcnemar"]["p_value"]
    if low > 0:
        return f"the learned classifier beats the rules: F1 {d:+.2f} [{low:+.2f}, {high:+.2f}], McNemar p {p:.2g}"
    if high < 0:
        return f"the rules beat the learned classifier: F1 {d:+.2f} [{low:+.2f}, {high:+.2f}], McNemar p {p:.2g}"
    return (f"no significant difference between the learned classifier and the rules: F1 {d:+.2f} "
            f"[{low:+.2f}, {high:+.2f}], McNemar p {p:.2g}")


def train_signals(labels: Path, log: Path, out: Path, *, split: Split = "dev", folds: int = FOLDS, seed: int = 0,
                  workdir: Path | None = None, say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Cross-validate, fit on `split`, save to `out` (model.json, report.json), measure on held-out when the
    training part is dev; returns the report."""
    from uxbench.mining.pipeline.store import atomic_write_json

    all_items = load_labels(labels)
    mined = mine_for_eval(log, {it.conversation_id for it in all_items}, workdir=workdir, say=say)
    parts = [split_of(it.conversation_id) for it in all_items]
    train_k = [k for k, p in enumerate(parts) if split == "all" or p == split]
    items = [all_items[k] for k in train_k]
    found = triples(items, mined)
    gold = [it.dissatisfied for it in items]
    have = {k: t for k, t in enumerate(found) if t is not None}
    usable = list(have)
    if len({gold[k] for k in usable}) < 2:
        raise ConfigError(f"the {split} part of {labels} has no follow-ups of both kinds with their reply in the log")
    probs = cross_validated(found, gold, [it.conversation_id for it in items], folds=folds, seed=seed)
    clf = FollowupClassifier.fit(list(have.values()), [gold[k] for k in usable], seed=seed)
    report: dict[str, Any] = {
        "labels": str(labels), "log": str(log), "train_split": split, "n_train": len(items),
        "n_train_missing": len(items) - len(usable), "folds": folds, "seed": seed, "threshold": clf.threshold,
        "cv": compare(gold, [p >= clf.threshold for p in probs], rules_flags(items, mined), seed=seed),
    }
    report["cv"]["verdict"] = verdict(report["cv"])
    if split == "dev":
        held = [all_items[k] for k, p in enumerate(parts) if p == "held-out"]
        held_found = triples(held, mined)
        held_probs = clf.predict_proba([t for t in held_found if t is not None])
        it_probs = iter(held_probs)
        flags = [t is not None and next(it_probs) >= clf.threshold for t in held_found]
        report["held_out"] = compare([it.dissatisfied for it in held], flags, rules_flags(held, mined), seed=seed)
        report["held_out"]["verdict"] = verdict(report["held_out"])
    report["top_features"] = clf.top_features()
    clf.info = {k: report[k] for k in ("labels", "train_split", "n_train", "folds", "seed")}
    report["model"] = str(clf.save(out))
    atomic_write_json(out / REPORT_FILE, report)
    return report
