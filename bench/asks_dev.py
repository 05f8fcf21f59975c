"""Precision and recall of "the assistant asked for fact X" on 711 real assistant turns (`bench/asks_dev/`).

    python ../shared/data/signals_dev/build_log.py POOL --pool           # the real pool (92,489 turns)
    python bench/asks_dev.py --pool POOL --part dev                      # tune on this half
    python bench/asks_dev.py --pool POOL --part dev --list               # read its false alarms and misses
    python bench/asks_dev.py --pool POOL --part held-out [--e5]          # report this half only

The texts are rebuilt from the pool by (conversation_id, turn_index); the labels hold ids only. Each labelled
turn is scored against each of the 20 fact kinds (`kinds.json`): a (turn, kind) pair is positive when the label
lists the kind. Detectors:

- `patterns, rules assessor (before)`: what `--assessor rules` did before `uxbench.sim.asks`: the reply asks
  something (the old question regex, below) and one of the kind's `ask_patterns` matches anywhere in it;
- `patterns, UFS check (before)`: what the UFS code check did: a pattern matches anywhere, no question needed;
- `label only (before)`: a persona with no `ask_patterns` (the label, escaped, was the pattern);
- `uxbench.sim.asks`: `asks_for(reply, label, ask_patterns)`, and with the label only;
- `--e5`: `bench/asks_dev_e5.py` (multilingual-e5-small, needs `uxbench[judge]`) with the threshold chosen on the
  dev half (the best F1), beside the code detector (either one says asked).

Split by conversation (`uxbench.mining.signals.split.split_of`). `--list` prints texts, and refuses the held-out
half. Also: precision and recall of "the reply asks the user for anything" (`asks_user` labels).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uxbench.metrics.proportions import wilson_ci
from uxbench.mining.signals.split import split_of
from uxbench.sim.asks import asks_anything, asks_for

HERE = Path(__file__).resolve().parent / "asks_dev"
CJK = re.compile("[\u4e00-\u9fff]")
OLD_QUESTION_RE = re.compile(  # `sim/assess.py` before the change, verbatim: the baseline's "asks something"
    r"[?？]|\b(please|kindly) (provide|share|send|tell|give|confirm)\b|\bcould you (tell|give|share|send|provide)\b|"
    r"\b(tell|send) me\b|\bwhat is your\b|请(提供|告诉|发|输入|确认|问)|麻烦(提供|告诉|发)|能否(提供|告诉)|"
    r"是多少|是什么",
    re.IGNORECASE,
)
Detector = Callable[[str, dict[str, Any], str], bool]


def load(pool: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    labels = [json.loads(line) for line in (HERE / "labels.jsonl").open(encoding="utf-8")]
    kinds = json.loads((HERE / "kinds.json").read_text(encoding="utf-8"))["kinds"]
    wanted = {(r["conversation_id"], r["turn_index"]) for r in labels}
    texts: dict[tuple[str, int], str] = {}
    with pool.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            key = (row["conversation_id"], row["turn_index"])
            if key in wanted and row["role"] == "assistant":
                texts[key] = row["content"]
    missing = wanted - set(texts)
    if missing:
        sys.exit(f"{len(missing)} labelled turns are not in {pool} (e.g. {sorted(missing)[0]}): is it the pool "
                 "that build_log.py --pool writes?")
    for r in labels:
        r["text"] = texts[(r["conversation_id"], r["turn_index"])]
        r["lang"] = "zh" if len(CJK.findall(r["text"])) >= 20 else "en"
        r["part"] = split_of(r["conversation_id"])
    return labels, kinds


def _old_rules(text: str, kind: dict[str, Any], lang: str) -> bool:
    return bool(OLD_QUESTION_RE.search(text)) and any(re.search(p, text, re.I) for p in kind["ask_patterns"][lang])


def _old_ufs(text: str, kind: dict[str, Any], lang: str) -> bool:
    return any(re.search(p, text, re.I) for p in kind["ask_patterns"][lang])


def _old_label(text: str, kind: dict[str, Any], lang: str) -> bool:
    return bool(OLD_QUESTION_RE.search(text)) and bool(re.search(re.escape(kind["label"][lang]), text, re.I))


def _new(text: str, kind: dict[str, Any], lang: str) -> bool:
    return asks_for(text, kind["label"][lang], tuple(kind["ask_patterns"][lang]))


def _new_label(text: str, kind: dict[str, Any], lang: str) -> bool:
    return asks_for(text, kind["label"][lang])


def score(rows: list[dict[str, Any]], kinds: list[dict[str, Any]], detect: Detector) -> dict[str, Any]:
    tp = fp = fn = 0
    errors: list[tuple[str, str, dict[str, Any]]] = []
    for r in rows:
        for kind in kinds:
            said = detect(r["text"], kind, r["lang"])
            gold = kind["id"] in r["asked"]
            tp += said and gold
            fp += said and not gold
            fn += gold and not said
            if said != gold:
                errors.append(("false alarm" if said else "miss", kind["id"], r))
    return {"tp": tp, "fp": fp, "fn": fn, "errors": errors}


def fmt(k: int, n: int) -> str:
    if n == 0:
        return "n/a (0)"
    low, high = wilson_ci(k, n)
    return f"{k / n:.2f} [{low:.2f}, {high:.2f}] ({k}/{n})"


def table(rows: list[dict[str, Any]], kinds: list[dict[str, Any]], detectors: dict[str, Detector]) -> None:
    print("| detector | precision [95% CI] | recall [95% CI] | F1 |")
    print("|---|---|---|---|")
    for name, detect in detectors.items():
        s = score(rows, kinds, detect)
        p_n, r_n = s["tp"] + s["fp"], s["tp"] + s["fn"]
        p = s["tp"] / p_n if p_n else 0.0
        rec = s["tp"] / r_n if r_n else 0.0
        f1 = 2 * p * rec / (p + rec) if p + rec else 0.0
        print(f"| {name} | {fmt(s['tp'], p_n)} | {fmt(s['tp'], r_n)} | {f1:.2f} |")


def asks_table(rows: list[dict[str, Any]]) -> None:
    print("\n\"asks the user for anything\" (any kind or other information):\n")
    print("| detector | precision | recall |")
    print("|---|---|---|")
    for name, detect in (("question regex (before)", lambda t: bool(OLD_QUESTION_RE.search(t))),
                         ("uxbench.sim.asks.asks_anything", asks_anything)):
        said = [detect(r["text"]) for r in rows]
        tp = sum(s and r["asks_user"] for s, r in zip(said, rows, strict=True))
        print(f"| {name} | {fmt(tp, sum(said))} | {fmt(tp, sum(r['asks_user'] for r in rows))} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool", type=Path, default=Path(os.environ.get(
        "UXBENCH_SIGNALS_POOL", "~/.cache/uxbench/signals_dev/pool.jsonl")).expanduser())
    parser.add_argument("--part", choices=("dev", "held-out", "all"), default="held-out")
    parser.add_argument("--list", action="store_true", help="print the errors of the new detector (dev only)")
    parser.add_argument("--e5", action="store_true", help="add the e5 detector (needs uxbench[judge])")
    args = parser.parse_args()
    if args.list and args.part != "dev":
        sys.exit("--list reads texts: only for --part dev (the held-out half is for reporting)")
    labels, kinds = load(args.pool)
    rows = [r for r in labels if args.part == "all" or r["part"] == args.part]
    detectors: dict[str, Detector] = {
        "patterns, rules assessor (before)": _old_rules, "patterns, UFS check (before)": _old_ufs,
        "label only (before)": _old_label, "uxbench.sim.asks": _new, "uxbench.sim.asks, label only": _new_label,
    }
    if args.e5:
        from asks_dev_e5 import E5AskDetector, choose_threshold

        dev = [r for r in labels if r["part"] == "dev"]
        e5 = E5AskDetector()
        threshold = choose_threshold(e5, [(r["text"], [(k["label"][r["lang"]], k["id"] in r["asked"])
                                                        for k in kinds]) for r in dev])
        print(f"e5 threshold chosen on dev: {threshold:.3f}\n")
        e5.threshold = threshold
        detectors["e5 (threshold from dev)"] = lambda t, k, lang: e5.asks_for(t, k["label"][lang])
        detectors["uxbench.sim.asks or e5"] = lambda t, k, lang: _new(t, k, lang) or e5.asks_for(t, k["label"][lang])
    n_pos = sum(len(r["asked"]) for r in rows)
    print(f"part {args.part}: {len(rows)} turns ({sum(r['lang'] == 'zh' for r in rows)} Chinese), "
          f"{len(rows) * len(kinds)} (turn, kind) pairs, {n_pos} positive\n")
    table(rows, kinds, detectors)
    for stratum in sorted({r["stratum"] for r in rows}):
        part = [r for r in rows if r["stratum"] == stratum]
        print(f"\nstratum {stratum}: {len(part)} turns, {sum(len(r['asked']) for r in part)} positive pairs\n")
        table(part, kinds, {k: v for k, v in detectors.items() if "before" in k or k == "uxbench.sim.asks"})
    asks_table(rows)
    if args.list:
        for kind_of, kind, r in score(rows, kinds, _new)["errors"]:
            print(f"\n--- {kind_of}: {kind} in {r['conversation_id']}:{r['turn_index']} ({r['stratum']})")
            print(r["text"][:1500])
    return 0


if __name__ == "__main__":
    sys.exit(main())
