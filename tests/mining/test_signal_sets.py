"""The labelled signal sets: their shape, and the precision/recall of the rules on them, which must not fall
below the floors recorded in the README (floor = measured figure minus a small margin)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from uxbench.errors import DataError
from uxbench.mining.signals.config import DEFAULT_CONFIG
from uxbench.mining.signals.evaluate import (
    FOLLOWUPS_PATH,
    GOLD_LABELS,
    TIMING_PATH,
    evaluate_rules,
    format_table,
    load_followups,
    load_jsonl,
    sweep_similarity,
)

# signal: (precision floor, recall floor) on the whole follow-up set (258 triples) and the timing set
FLOORS: dict[str, tuple[float, float]] = {
    "complaint": (0.95, 0.95),
    "dismiss": (0.95, 0.95),
    "repeat": (0.95, 0.95),
    # similarity alone no longer fires a rephrase below 0.625 (issue 8: on real follow-ups it found
    # templated continuations, not rephrases): recall on these written rephrases fell from 0.59 to 0.25
    "rephrase": (0.90, 0.20),
    "repeat_or_rephrase": (0.90, 0.52),
    "topic_change": (0.85, 0.90),
    "continuation": (0.90, 0.95),
    "praise": (0.90, 0.95),
    "builds_on": (0.80, 0.80),
    "engaged": (0.90, 0.90),
    "dissatisfied": (0.95, 0.75),
    "skim": (0.95, 0.80),
}
LABEL_ACCURACY_FLOOR = 0.85


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    measured: dict[str, Any] = evaluate_rules()
    return measured


def test_followup_set_shape() -> None:
    rows = load_followups()
    assert len(rows) >= 160
    assert len({r["id"] for r in rows}) == len(rows)
    per = Counter((r["label"], r["lang"]) for r in rows)
    for label in GOLD_LABELS:
        for lang in ("zh", "en"):
            assert per[(label, lang)] >= 4, (label, lang)
    assert {r["split"] for r in rows} == {"dev", "test", "holdout"}
    traps = " ".join(r.get("trap", "") for r in rows)
    for trap in (
        "不错",
        "没错",
        "not bad",
        "好的谢谢",
        "continue",
        "now the same for X",
        "next chunk of code",
        "story next scene",
        "错误码",
        "nothing wrong",
        "no problem",
    ):
        assert trap in traps, trap
    assert {r["label"] for r in rows if "不错" in r["next_user"] or "没错" in r["next_user"]} <= {
        "praise",
        "followup",
    }


def test_timing_set_shape() -> None:
    rows = load_jsonl(TIMING_PATH, ("reply", "gap_s", "label"))
    assert (
        len(rows) >= 20
        and {r["label"] for r in rows} == {"skim", "read"}
        and {r["lang"] for r in rows} == {"zh", "en"}
    )


def test_rules_precision_and_recall_stay_above_the_floors(
    result: dict[str, Any], record_property: Any
) -> None:
    print("\nRules on the labelled follow-up set (all splits) and the timing set:")
    print(format_table(result))
    print(f"rule_label accuracy (7 labels): {result['rule_labels']['accuracy']:.3f} on {result['n']} triples")
    for name, (p_floor, r_floor) in FLOORS.items():
        m = result["signals"][name]
        record_property(f"{name}_precision", m["precision"])
        record_property(f"{name}_recall", m["recall"])
        assert m["precision"] is not None and m["precision"] >= p_floor, (name, m)
        assert m["recall"] is not None and m["recall"] >= r_floor, (name, m)
    assert result["rule_labels"]["accuracy"] >= LABEL_ACCURACY_FLOOR


def test_each_split_is_reported_with_intervals() -> None:
    for split in ("dev", "test", "holdout"):
        r = evaluate_rules(split=split, timing_path=None)
        print(f"\n[{split}] n={r['n']}, label accuracy {r['rule_labels']['accuracy']:.3f}")
        print(format_table(r))
        m = r["signals"]["dissatisfied"]
        assert m["precision_ci"][0] <= m["precision"] <= m["precision_ci"][1]
        assert m["n_gold"] == sum(
            1
            for row in load_followups(split=split)
            if row["label"] in {"repeat", "rephrase", "complaint", "dismiss"}
        )


def test_default_repeat_threshold_is_the_dev_optimum() -> None:
    # Only the repeat threshold is still chosen on this written set; where similarity alone starts to fire a
    # rephrase (the score ramp from rephrase_threshold to repeat_threshold crossing fire_score) was chosen on
    # the development part of the real labelled follow-ups (docs/MINING.md, issue 8).
    best = max(r["repeat_f1"] for r in sweep_similarity(methods=("content_indel",), split="dev"))
    [mine] = sweep_similarity(
        methods=("content_indel",),
        split="dev",
        repeat_grid=(DEFAULT_CONFIG.repeat_threshold,),
        rephrase_grid=(DEFAULT_CONFIG.rephrase_threshold,),
    )
    assert DEFAULT_CONFIG.similarity_method == "content_indel"
    assert mine["repeat_f1"] == pytest.approx(best)


def test_labelled_set_errors_are_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"prev_user": "a", "assistant": "b", "next_user": "c", "label": "angry"}\n', encoding="utf-8"
    )
    with pytest.raises(DataError, match="unknown label"):
        load_followups(bad)
    bad.write_text('{"prev_user": "a"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"next_user|assistant"):
        load_followups(bad)
    with pytest.raises(DataError, match="cannot read"):
        load_followups(tmp_path / "missing.jsonl")
    assert FOLLOWUPS_PATH.exists()
