"""The lite judge against the TF-IDF baseline on real users' good/bad marks it never saw.

    python bench/signals_dev_rows.py --log ~/.cache/uxbench/signals_dev/log.jsonl --out /tmp/sd
    python bench/judge_real.py --dev /tmp/sd/dev.jsonl --held-out /tmp/sd/held-out.jsonl             # report
    python bench/judge_real.py --dev /tmp/sd/dev.jsonl --cv 5 --repeats 4                            # tune on dev

Rows: the 240 labelled real ShareGPT follow-ups (`bench/signals_dev_rows.py`: a dissatisfied follow-up makes
the reply before it bad). `--held-out`: the judge and the baseline are trained on every dev row and scored on
the held-out part (other conversations); `--cv`: grouped K-fold over the dev part only (folds by
conversation, repeated with shuffled groups), the predictions pooled, for choosing features without looking at
the held-out part. The judge is the product's code (`uxbench.judge_train`: rendered and parsed prompts,
features, Platt-calibrated logistic regression), the baseline the one `judge train` reports; both at the
balanced prior (`--prior balanced`, what Avg-Acc assumes) unless `--prior train`. Figures: Avg-Acc with 95%
CIs, and the paired Avg-Acc difference (stratified bootstrap CI) with McNemar's p.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from uxbench.judge_train.baseline import compare
from uxbench.judge_train.data import TrainRow, load_rows
from uxbench.judge_train.features import encode_items, make_encoder
from uxbench.judge_train.model import fit
from uxbench.judge_train.train import baseline_section, evaluation, items_of, verdicts


def scores(train: Sequence[TrainRow], test: Sequence[TrainRow], encoder: str, prior: str,
           seed: int, c: float | str = "auto") -> tuple[list[float], list[str]]:
    """p(good) of the judge and the baseline's verdicts on `test`, both trained on `train`."""
    enc = make_encoder(encoder)
    train_items, test_items = items_of(train), items_of(test)
    text, ux = encode_items(train_items, enc)
    y = np.array([r.label == "good" for r in train])
    model = fit(text, ux, y, [r.conversation for r in train], encoder=encoder, encoder_dim=enc.dim, prior=prior, c=c)
    probs = model.probability(*encode_items(test_items, enc)).tolist()
    share = model.info["prior"]["share_good"]
    base = baseline_section(train_items, train, test_items, test, verdicts(probs), class_weight="balanced",
                            prior=share, n_boot=10, seed=seed)
    return probs, [base["verdicts"][r.id] for r in test]


def report(golds: list[str], probs: list[float], base: list[str], n_boot: int, seed: int) -> dict[str, Any]:
    judge = evaluation(golds, probs, n_boot=n_boot, seed=seed)
    baseline = evaluation(golds, [1.0 if v == "good" else 0.0 for v in base], n_boot=n_boot, seed=seed)
    return {"n": len(golds), "judge": {k: judge[k] for k in ("avg_acc", "good_acc", "bad_acc", "ece")},
            "baseline": {k: baseline[k] for k in ("avg_acc", "good_acc", "bad_acc")},
            "comparison": compare(golds, verdicts(probs), base, n_boot=n_boot, seed=seed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", required=True)
    parser.add_argument("--held-out")
    parser.add_argument("--cv", type=int, default=0, help="grouped folds over the dev part (tuning)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--encoder", default="hashing", choices=["hashing", "e5"])
    parser.add_argument("--prior", default="balanced")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--c", default="auto", help="the judge's inverse regularisation strength, or auto")
    args = parser.parse_args()
    if args.c != "auto":
        args.c = float(args.c)
    dev, _ = load_rows([args.dev])
    if args.held_out:
        test, _ = load_rows([args.held_out])
        probs, base = scores(dev, test, args.encoder, args.prior, args.seed, args.c)
        result = {"mode": "train on dev, report on held-out", **report([r.label for r in test], probs, base,
                                                                      args.n_boot, args.seed)}
    else:
        golds: list[str] = []
        all_probs: list[float] = []
        all_base: list[str] = []
        conversations = sorted({r.conversation for r in dev})
        for repeat in range(args.repeats):
            random.Random(args.seed + repeat).shuffle(conversations)
            fold_of = {c: i % args.cv for i, c in enumerate(conversations)}
            for k in range(args.cv):
                train = [r for r in dev if fold_of[r.conversation] != k]
                test = [r for r in dev if fold_of[r.conversation] == k]
                probs, base = scores(train, test, args.encoder, args.prior, args.seed, args.c)
                golds += [r.label for r in test]
                all_probs += probs
                all_base += base
        result = {"mode": f"grouped {args.cv}-fold on dev x {args.repeats} (pooled; repeats share rows, so the CI "
                          "is narrower than the data supports)", **report(golds, all_probs, all_base, args.n_boot,
                                                                        args.seed)}
    result.update(encoder=args.encoder, prior=args.prior, c=args.c)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
