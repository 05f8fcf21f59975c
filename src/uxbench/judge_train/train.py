"""`uxbench judge train --method lite`: rows -> label floor -> split -> features -> calibrated logistic
regression, beside a TF-IDF baseline -> model directory with a model card.

The directory holds `model.npz` + `model.json` (the model, `uxbench.judge_train.model`), `test.jsonl` and
`train.jsonl` (the two sides as Task 1 files, so `uxbench judge eval --judge lite:DIR --data DIR/test.jsonl`
recomputes the card and trains the same baseline from `train.jsonl`), `model_card.json` (every figure) and
`MODEL_CARD.md` (the same for people).

Progress: every phase reports (phase, done, total) through `tick` (`StageProgress` events, which the CLI draws
as the mining stages' bars), from the first rows read.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from uxbench.judge_train.baseline import NAME as BASELINE_NAME
from uxbench.judge_train.baseline import compare, document, fit_baseline
from uxbench.judge_train.card import write_card
from uxbench.judge_train.data import TrainRow, class_counts, class_weights, load_rows
from uxbench.judge_train.features import TextEncoder, default_encoder, encode_items, history_text, make_encoder
from uxbench.judge_train.label_sources import DEFAULT_FLOOR, apply_floor, describe
from uxbench.judge_train.model import ClassWeight, balanced_weights, fit, log_odds
from uxbench.judge_train.prompt_parse import as_scored
from uxbench.judge_train.split import Split, exclude_near_duplicates, split_rows
from uxbench.mining.pipeline.progress import StageProgress
from uxbench.scoring.prompts.judge_input import JudgeInput

Tick = Callable[[StageProgress], None]
CHUNK = 256
"""Rows encoded or scored between two progress events."""


def _no_tick(_: StageProgress) -> None:
    return None


@dataclass
class TrainOptions:
    data: Sequence[str]
    out: Path
    data_license: str | None = None
    test_fraction: float = 0.2
    split_date: datetime | None = None
    seed: int = 0
    exclude: Sequence[str] = ()
    exclude_threshold: float = 0.8
    encoder: str | None = None
    c: float | str = "auto"
    class_weight: ClassWeight = "balanced"
    prior: str | float = "train"
    min_label_precision: float = DEFAULT_FLOOR
    n_boot: int = 2000


@dataclass
class TrainResult:
    out: Path
    card: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


def items_of(rows: Sequence[TrainRow]) -> list[JudgeInput]:
    """What the judge reads of each row, through the templates (as at scoring time)."""
    return [as_scored(JudgeInput(history=r.history, query=r.query, response=r.response, lang=r.lang))[0]
            for r in rows]


def documents(items: Sequence[JudgeInput]) -> list[str]:
    """What the baseline reads of each item (the same text the judge reads)."""
    return [document(history_text(i), i.query, i.response) for i in items]


def encode_chunked(items: Sequence[JudgeInput], encoder: TextEncoder, tick: Tick,
                   phase: str) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
    """`encode_items` in chunks of `CHUNK`, with a progress event after each."""
    texts, uxs = [], []
    tick(StageProgress(phase, "rows", 0, len(items)))
    for start in range(0, len(items), CHUNK):
        text, ux = encode_items(items[start : start + CHUNK], encoder)
        texts.append(text)
        uxs.append(ux)
        tick(StageProgress(phase, "rows", min(start + CHUNK, len(items)), len(items)))
    if not texts:
        return encode_items([], encoder)
    return sp.vstack(texts, format="csr"), np.vstack(uxs)


def evaluation(golds: Sequence[str], probs: Sequence[float], *, n_boot: int, seed: int) -> dict[str, Any]:
    """Avg-Acc, Good-Acc, Bad-Acc (with CIs), ECE and Brier of probabilities, verdict = p >= 0.5: the same
    functions `uxbench run --task judge` summarises with."""
    from uxbench.metrics.calibration import calibration
    from uxbench.metrics.judge import judge_metrics

    preds = verdicts(probs)
    metrics = judge_metrics(list(golds), list(preds), n_boot=n_boot, seed=seed)
    cal = calibration([g == "good" for g in golds], list(probs))
    n_good = sum(1 for g in golds if g == "good")
    return {
        "n": len(golds), "avg_acc": metrics["all"]["avg_acc"], "good_acc": metrics["all"]["good_acc"],
        "bad_acc": metrics["all"]["bad_acc"], "accuracy": metrics["all"]["accuracy"],
        "ece": cal["ece"], "brier": cal["brier"], "share_good": n_good / max(len(golds), 1),
        "majority_baseline": {"avg_acc": 0.5, "accuracy": max(n_good, len(golds) - n_good) / max(len(golds), 1)},
    }


def verdicts(probs: Sequence[float]) -> list[str]:
    return ["good" if p >= 0.5 else "bad" for p in probs]


def write_task1(rows: Sequence[TrainRow], path: Path) -> None:
    """Rows as a Task 1 file the loaders read (with conversation id, time and the label's source)."""
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({
                "cid": r.id, "label": r.label, "conversation_id": r.conversation, "lang": r.lang,
                "history": [{"role": m.role, "content": m.content} for m in r.history],
                "query": r.query, "response": r.response, "label_source": r.label_source,
                "created_at": r.timestamp.isoformat() if r.timestamp else None,
            }, ensure_ascii=False) + "\n")


@dataclass
class Prepared:
    """The rows read, filtered and split, with what the model card says about them."""

    split: Split
    data_info: dict[str, Any]


def prepare(data: Sequence[str], *, exclude: Sequence[str] = (), exclude_threshold: float = 0.8,
            test_fraction: float = 0.2, seed: int = 0, split_date: datetime | None = None,
            data_license: str | None = None, min_label_precision: float = DEFAULT_FLOOR,
            say: Callable[[str], None] = lambda _: None) -> Prepared:
    """Read the rows, apply the label floor, leave out near-duplicates of the `exclude` sets, split (lite and
    lora alike)."""
    say(f"reading {len(data)} input{'s' if len(data) != 1 else ''} ...")
    rows, report = load_rows(data)
    say(f"read {len(rows)} labelled rows: {class_counts(rows)}")
    labels_by_source = {r.label_source: r.label for r in rows}
    rows, dropped = apply_floor(rows, min_label_precision)
    if dropped:
        say(f"left out {sum(dropped.values())} rows whose label's signals have a measured precision below "
            f"{min_label_precision:g}: {dict(dropped.most_common())}")
    kept_by_source = Counter(r.label_source for r in rows)
    n_excluded = 0
    if exclude:
        banned, _ = load_rows(exclude)
        rows, n_excluded = exclude_near_duplicates(rows, banned, threshold=exclude_threshold)
        say(f"left out {n_excluded} near-duplicates of the --exclude sets")
    split = split_rows(rows, test_fraction=test_fraction, seed=seed, split_date=split_date)
    say(f"split {split.info['kind']}: train {split.info['train']}, test {split.info['test']}")
    info = {"files": [str(p) for p in data], "license": data_license, "excluded_sets": [str(p) for p in exclude],
            "near_duplicates_left_out": n_excluded, "exclude_threshold": exclude_threshold, **report.as_dict(),
            "labels": describe(kept_by_source, labels_by_source, dropped, min_label_precision)}
    return Prepared(split, info)


def baseline_section(train_items: Sequence[JudgeInput], train_rows: Sequence[TrainRow],
                     test_items: Sequence[JudgeInput], test_rows: Sequence[TrainRow],
                     judge_verdicts: Sequence[str | None], *, class_weight: ClassWeight, prior: float,
                     n_boot: int, seed: int) -> dict[str, Any]:
    """The TF-IDF baseline trained on the judge's training rows (same class weights, same prior), scored on its
    test rows, and the paired comparison with the judge's verdicts there."""
    y = np.array([r.label == "good" for r in train_rows])
    weights = balanced_weights(y) if class_weight == "balanced" else np.ones(len(y))
    calibrated_at = 0.5 if class_weight == "balanced" else float(np.clip(y.mean(), 1e-4, 1 - 1e-4))
    model = fit_baseline(documents(train_items), y, sample_weight=weights,
                         shift=log_odds(prior) - log_odds(calibrated_at))
    probs = model.probability(documents(test_items)).tolist()
    golds = [r.label for r in test_rows]
    return {"name": BASELINE_NAME, "test": evaluation(golds, probs, n_boot=n_boot, seed=seed),
            "comparison": compare(golds, list(judge_verdicts), verdicts(probs), n_boot=n_boot, seed=seed),
            "verdicts": dict(zip([r.id for r in test_rows], verdicts(probs), strict=True))}


def train_lite(options: TrainOptions, say: Callable[[str], None] = lambda _: None,
               tick: Tick = _no_tick) -> TrainResult:
    timings: dict[str, float] = {}
    start = time.perf_counter()
    prepared = prepare(options.data, exclude=options.exclude, exclude_threshold=options.exclude_threshold,
                       test_fraction=options.test_fraction, seed=options.seed, split_date=options.split_date,
                       data_license=options.data_license, min_label_precision=options.min_label_precision,
                       say=say)
    split = prepared.split
    timings["read_split_s"] = time.perf_counter() - start

    encoder_name = options.encoder or default_encoder()
    encoder = make_encoder(encoder_name)
    if encoder_name == "e5":
        n_texts = 3 * (len(split.train) + len(split.test))
        say(f"encoding {n_texts} texts with multilingual-e5-small: about 0.1-0.4 s each on 2 busy cores "
            "(bench/judge.py); --encoder hashing takes seconds")
    t0 = time.perf_counter()
    train_items, test_items = items_of(split.train), items_of(split.test)
    text, ux = encode_chunked(train_items, encoder, tick, "encode training rows")
    timings["encode_train_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    y = np.array([r.label == "good" for r in split.train])
    model = fit(text, ux, y, [r.conversation for r in split.train], encoder=encoder_name,
                encoder_dim=encoder.dim, c=options.c, class_weight=options.class_weight, prior=options.prior,
                tick=lambda done, total: tick(StageProgress("fit (folds, then the whole side)", "fits", done,
                                                            total)))
    timings["fit_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    test_text, test_ux = encode_chunked(test_items, encoder, tick, "score test rows")
    logits = model.logit(test_text, test_ux)
    probs = 1.0 / (1.0 + np.exp(-logits))
    timings["score_test_s"] = time.perf_counter() - t0
    golds = [r.label for r in split.test]
    figures = evaluation(golds, probs.tolist(), n_boot=options.n_boot, seed=options.seed)
    prior = model.info["prior"]
    balanced = 1.0 / (1.0 + np.exp(-(logits - prior["log_odds"])))
    at_balanced = evaluation(golds, balanced.tolist(), n_boot=options.n_boot, seed=options.seed)
    t0 = time.perf_counter()
    tick(StageProgress("baseline (TF-IDF + logistic regression)", "fits", 0, 1))
    baseline = baseline_section(train_items, split.train, test_items, split.test, verdicts(probs.tolist()),
                                class_weight=options.class_weight, prior=prior["share_good"],
                                n_boot=options.n_boot, seed=options.seed)
    tick(StageProgress("baseline (TF-IDF + logistic regression)", "fits", 1, 1))
    timings["baseline_s"] = time.perf_counter() - t0

    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    baseline.pop("verdicts")
    card: dict[str, Any] = {
        "method": "lite",
        "data": prepared.data_info,
        "split": split.info,
        "class_weights": class_weights(split.train) if options.class_weight == "balanced" else None,
        "prior": prior,
        "encoder": encoder_name,
        "test": figures,
        "test_at_balanced_prior": {k: at_balanced[k] for k in ("avg_acc", "good_acc", "bad_acc")},
        "baseline": baseline,
        "heaviest_features": model.heaviest(),
        "timings_s": timings,
        "n_boot": options.n_boot,
        "seed": options.seed,
    }
    model.info.update(trained_rows=len(split.train), data_license=options.data_license)
    model.save(out)
    write_task1(split.test, out / "test.jsonl")
    write_task1(split.train, out / "train.jsonl")
    timings["total_s"] = time.perf_counter() - start
    write_card(out, card)
    return TrainResult(out=out, card=card, timings=timings)

