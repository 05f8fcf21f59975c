"""Precision and recall of the signal rules on the real labelled follow-ups (`signals_dev/labels.jsonl`).

    python /work/shared/data/signals_dev/build_log.py /tmp/signals_dev/log.jsonl
    python bench/signals_dev.py --log /tmp/signals_dev/log.jsonl --part dev            # tune on this
    python bench/signals_dev.py --log /tmp/signals_dev/log.jsonl --part dev --list     # read FPs and misses
    python bench/signals_dev.py --log /tmp/signals_dev/log.jsonl --part held-out       # report only

A quick measuring script for rule work (the project's `uxbench mine eval-signals` is the reference
evaluation). Split by conversation: `held-out` when int(sha256(conversation_id), 16) % 100 < 50, else
`dev`. `--list` prints the texts of false positives and misses, and refuses to for the held-out part.
An item whose reply is missing from the log counts as a miss when its label is dissatisfied.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from uxbench.mining.signals import SignalConfig, compute_signals
from uxbench.mining.signals.split import split_of
from uxbench.mining.types import Session, Turn

LABELS = Path("/work/shared/data/signals_dev/labels.jsonl")


def part_of(conversation_id: str) -> str:
    return split_of(conversation_id)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def load_sessions(log: Path, wanted: set[str]) -> dict[str, Session]:
    turns: dict[str, list[Turn]] = defaultdict(list)
    with log.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["conversation_id"] in wanted:
                turns[row["conversation_id"]].append(Turn(**row))
    return {cid: Session(conversation_id=cid, turns=sorted(ts, key=lambda t: t.turn_index))
            for cid, ts in turns.items()}


def measure(items: list[dict[str, Any]], sessions: dict[str, Session], config: SignalConfig,
            threshold: float | None) -> list[dict[str, Any]]:
    out = []
    for item in items:
        session = sessions.get(item["conversation_id"])
        row: dict[str, Any] = {**item, "pred": False, "score": 0.0, "by": "", "texts": None}
        if session is not None:
            sigs = {s.turn_index: s for s in compute_signals(session, config)}
            ts = sigs.get(item["u2_turn_index"] - 1)
            if ts is not None:
                score = getattr(ts, "dissatisfied_score", None)
                row["pred"] = ts.dissatisfied if threshold is None or score is None else score >= threshold
                row["score"] = score if score is not None else float(ts.dissatisfied)
                row["by"] = ",".join(ts.dissatisfied_by) + f" [{ts.followup_label}]"
                by_index = {t.turn_index: t.content for t in session.turns}
                row["texts"] = tuple(by_index.get(item["u2_turn_index"] - k, "") for k in (2, 1, 0))
                row["evidence"] = {n: ts.signal(n).evidence for n in ("complaint", "dismiss", "repeat", "rephrase")
                                   if ts.signal(n).fired}
        out.append(row)
    return out


def report(rows: list[dict[str, Any]], title: str) -> None:
    tp = sum(r["pred"] and r["dissatisfied"] for r in rows)
    fp = sum(r["pred"] and not r["dissatisfied"] for r in rows)
    fn = sum(not r["pred"] and r["dissatisfied"] for r in rows)
    p = tp / (tp + fp) if tp + fp else 0.0
    rc = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
    pl, ph = wilson(tp, tp + fp)
    rl, rh = wilson(tp, tp + fn)
    print(f"{title:<22} n={len(rows):3d} tp={tp:2d} fp={fp:2d} fn={fn:2d}  precision {p:.2f} [{pl:.2f}, {ph:.2f}]"
          f"  recall {rc:.2f} [{rl:.2f}, {rh:.2f}]  F1 {f1:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", required=True, type=Path)
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--part", choices=("dev", "held-out", "all"), default="dev")
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--curve", action="store_true", help="precision/recall at each score threshold")
    a = ap.parse_args()
    items = [json.loads(x) for x in a.labels.read_text().splitlines() if x.strip()]
    if a.part != "all":
        items = [i for i in items if part_of(i["conversation_id"]) == a.part]
    sessions = load_sessions(a.log, {i["conversation_id"] for i in items})
    config = SignalConfig() if a.threshold is None else SignalConfig(dissatisfied_threshold=a.threshold)
    rows = measure(items, sessions, config, a.threshold)
    report(rows, f"{a.part} overall")
    for stratum in ("similar", "negative", "random"):
        report([r for r in rows if r["stratum"] == stratum], f"  {stratum}")
    if a.curve:
        for t in sorted({round(r["score"], 2) for r in rows if r["score"] > 0}):
            report([{**r, "pred": r["score"] >= t} for r in rows], f"  score >= {t:.2f}")
    if a.list:
        if a.part != "dev":
            raise SystemExit("--list shows texts: only for the dev part")
        for r in rows:
            if r["pred"] != r["dissatisfied"]:
                kind = "FP" if r["pred"] else "MISS"
                u1, a1, u2 = r["texts"] or ("", "", "")
                print(f"\n== {kind} {r['conversation_id']} {r['label']} ({r['why']}) score={r['score']:.2f} "
                      f"by={r['by']} ev={r.get('evidence')}")
                print(f"U1: {u1[:300]!r}\nA1: {a1[:300]!r} ... {a1[-200:]!r}\nU2: {u2[:500]!r}")


if __name__ == "__main__":
    main()
