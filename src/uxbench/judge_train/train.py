"""`uxbench judge train --method lite`: rows -> split -> features -> calibrated logistic regression -> model
directory with a model card.

The directory holds `model.npz` + `model.json` (the model, `uxbench.judge_train.model`), `test.jsonl` and
`train.jsonl` (the two sides as Task 1 files, so `uxbench judge eval --data DIR/test.jsonl` recomputes the
card), `model_card.json` (every figure) and `MODEL_CARD.md` (the same for people).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from uxbench.judge_train.card import write_card
from uxbench.judge_train.data import TrainRow, class_counts, class_weights, load_rows
from uxbench.judge_train.features import TextEncoder, default_encoder, encode_items, make_encoder
from uxbench.judge_train.model import ClassWeight, LiteModel, fit
from uxbench.judge_train.prompt_parse import as_scored
from uxbench.judge_train.split import Split, exclude_near_duplicates, split_rows
from uxbench.scoring.prompts.judge_input import JudgeInput


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
    c: float = 1.0
    class_weight: ClassWeight = "balanced"
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


def probabilities(model: LiteModel, items: Sequence[JudgeInput], encoder: TextEncoder) -> np.ndarray[Any, Any]:
    text, ux = encode_items(items, encoder)
    return model.probability(text, ux)


def evaluation(golds: Sequence[str], probs: Sequence[float], *, n_boot: int, seed: int) -> dict[str, Any]:
    """Avg-Acc, Good-Acc, Bad-Acc (with CIs), ECE and Brier of probabilities, verdict = p >= 0.5: the same
    functions `uxbench run --task judge` summarises with."""
    from uxbench.metrics.calibration import calibration
    from uxbench.metrics.judge import judge_metrics

    preds = ["good" if p >= 0.5 else "bad" for p in probs]
    metrics = judge_metrics(list(golds), list(preds), n_boot=n_boot, seed=seed)
    cal = calibration([g == "good" for g in golds], list(probs))
    n_good = sum(1 for g in golds if g == "good")
    return {
        "n": len(golds), "avg_acc": metrics["all"]["avg_acc"], "good_acc": metrics["all"]["good_acc"],
        "bad_acc": metrics["all"]["bad_acc"], "accuracy": metrics["all"]["accuracy"],
        "ece": cal["ece"], "brier": cal["brier"],
        "majority_baseline": {"avg_acc": 0.5, "accuracy": max(n_good, len(golds) - n_good) / max(len(golds), 1)},
    }


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
            data_license: str | None = None, say: Callable[[str], None] = lambda _: None) -> Prepared:
    """Read the rows, leave out near-duplicates of the `exclude` sets, split (lite and lora alike)."""
    rows, report = load_rows(data)
    say(f"read {len(rows)} labelled rows: {class_counts(rows)}")
    n_excluded = 0
    if exclude:
        banned, _ = load_rows(exclude)
        rows, n_excluded = exclude_near_duplicates(rows, banned, threshold=exclude_threshold)
        say(f"left out {n_excluded} near-duplicates of the --exclude sets")
    split = split_rows(rows, test_fraction=test_fraction, seed=seed, split_date=split_date)
    say(f"split {split.info['kind']}: train {split.info['train']}, test {split.info['test']}")
    info = {"files": [str(p) for p in data], "license": data_license, "excluded_sets": [str(p) for p in exclude],
            "near_duplicates_left_out": n_excluded, "exclude_threshold": exclude_threshold, **report.as_dict()}
    return Prepared(split, info)


def train_lite(options: TrainOptions, say: Callable[[str], None] = lambda _: None) -> TrainResult:
    timings: dict[str, float] = {}
    start = time.perf_counter()
    prepared = prepare(options.data, exclude=options.exclude, exclude_threshold=options.exclude_threshold,
                       test_fraction=options.test_fraction, seed=options.seed, split_date=options.split_date,
                       data_license=options.data_license, say=say)
    split = prepared.split
    timings["read_split_s"] = time.perf_counter() - start

    encoder_name = options.encoder or default_encoder()
    encoder = make_encoder(encoder_name)
    if encoder_name == "e5":
        n_texts = 3 * (len(split.train) + len(split.test))
        say(f"encoding {n_texts} texts with multilingual-e5-small: about 0.1-0.4 s each on 2 busy cores "
            "(bench/judge.py); --encoder hashing takes seconds")
    t0 = time.perf_counter()
    train_items = items_of(split.train)
    text, ux = encode_items(train_items, encoder)
    timings["encode_train_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    y = np.array([r.label == "good" for r in split.train])
    model = fit(text, ux, y, [r.conversation for r in split.train], encoder=encoder_name,
                encoder_dim=encoder.dim, c=options.c, class_weight=options.class_weight)
    timings["fit_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    probs = probabilities(model, items_of(split.test), encoder)
    timings["score_test_s"] = time.perf_counter() - t0
    golds = [r.label for r in split.test]
    figures = evaluation(golds, probs.tolist(), n_boot=options.n_boot, seed=options.seed)

    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    card: dict[str, Any] = {
        "method": "lite",
        "data": prepared.data_info,
        "split": split.info,
        "class_weights": class_weights(split.train) if options.class_weight == "balanced" else None,
        "encoder": encoder_name,
        "test": figures,
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
