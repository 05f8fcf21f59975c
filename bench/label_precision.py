"""Precision of every mining signal used as a training label, on real labelled follow-ups.

    python bench/label_precision.py --log ~/.cache/uxbench/signals_dev/log.jsonl            # prints the table
    python bench/label_precision.py --log ~/.cache/uxbench/signals_dev/log.jsonl --write    # updates the shipped one

The deterministic stages of `uxbench mine run` run on the 240 real ShareGPT conversations of
`../shared/data/signals_dev` (text rebuilt by its `build_log.py`); each labelled reply gets the label
`uxbench judge train --data MINE_RUN` would give it (thumbs, else `dissatisfied` -> bad, `satisfied` -> good),
and each signal behind a label is counted right when the label agrees with the person's reading of the user's
next message. `--write` stores the result in `src/uxbench/judge_train/label_precision.json`, which the model
card quotes and `--min-label-precision` reads (its dev figures; the card reports held-out ones).
The items are drawn in strata (similar, negative, random; see the set's README), not in the population's
proportions: a precision here is that of this sample.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from uxbench.judge_train.label_sources import PRECISION_FILE, labelled_replies, measure

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT.parent / "shared" / "data" / "signals_dev" / "labels.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", default=str(LABELS))
    parser.add_argument("--log", required=True, help="the built log (build_log.py OUT.jsonl)")
    parser.add_argument("--write", action="store_true", help=f"update src/uxbench/judge_train/{PRECISION_FILE}")
    args = parser.parse_args()
    table = measure(labelled_replies(args.labels, args.log))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    result = {
        "measured_on": "signals_dev: 240 real ShareGPT follow-ups labelled by reading them (stratified sample; "
                       "dev / held-out by sha256(conversation_id) % 100 < 50)",
        "command": "python bench/label_precision.py --log ~/.cache/uxbench/signals_dev/log.jsonl --write",
        "code": commit,
        **table,
    }
    for e in result["signals"]:
        cells = []
        for part in ("dev", "held-out"):
            p = e[part]
            shown = "n/a" if p["precision"] is None else \
                f"{p['precision']:.2f} [{p['ci_low']:.2f}, {p['ci_high']:.2f}]"
            cells.append(f"{part} {p['agree']}/{p['fired']} {shown}")
        print(f"{e['label']:4} {e['signal']:16} " + "   ".join(cells))
    for part in ("dev", "held-out"):
        b = result["base_rate_good"][part]
        print(f"base rate good, {part}: {b['agree']}/{b['fired']} = {b['precision']:.2f}")
    if args.write:
        path = ROOT / "src" / "uxbench" / "judge_train" / PRECISION_FILE
        path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
