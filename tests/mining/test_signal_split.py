"""The dev / held-out split of labelled follow-ups: by conversation, fixed, about half each."""

from __future__ import annotations

from uxbench.mining.signals.split import select, split_of


def test_split_is_fixed_by_conversation_id() -> None:
    # pinned: a change of the seed or of the rule would silently mix tuned and reported figures
    pinned = {cid: split_of(cid) for cid in ("a", "d", "e", "f", "sg_1ODPDpW_0")}
    assert pinned == PINNED


PINNED = {"a": "dev", "d": "held-out", "e": "held-out", "f": "dev", "sg_1ODPDpW_0": "held-out"}


def test_split_is_about_half_and_disjoint() -> None:
    items = [{"conversation_id": f"conv-{i}", "k": i} for i in range(4000)]
    dev, held = select(items, "dev"), select(items, "held-out")
    assert len(dev) + len(held) == len(items)
    assert 0.46 < len(dev) / len(items) < 0.54
    assert not {d["conversation_id"] for d in dev} & {h["conversation_id"] for h in held}
    assert select(items, "all") == items
