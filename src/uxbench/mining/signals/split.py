"""The fixed split of a labelled follow-up set into a `dev` part (tune on it) and a `held-out` part (report on it).

By conversation, so two items of one conversation never fall on both sides: an item is `held-out` when
SHA-256(conversation_id), read as a hexadecimal integer, is below 50 modulo 100, else `dev`. Nothing random,
nothing that depends on the order or the number of items: the same conversation lands on the same side in every
run, on every machine, and when items are added. This is the rule the detectors were tuned under (their authors
read dev items only), so held-out figures are figures the rules were never fitted to.

On the ShareGPT development set (`../shared/data/signals_dev/labels.jsonl`, 240 items) this gives 109 `dev`
items (26 dissatisfied) and 131 `held-out` items (29 dissatisfied). Choose thresholds and rules on `dev`;
report the figures of `held-out`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar

Split = Literal["dev", "held-out", "all"]
SPLITS: tuple[Split, ...] = ("dev", "held-out", "all")
HELD_OUT_PERCENT = 50

M = TypeVar("M", bound=Mapping[str, Any])


def split_of(conversation_id: str) -> Literal["dev", "held-out"]:
    """The part a conversation belongs to."""
    value = int(hashlib.sha256(conversation_id.encode()).hexdigest(), 16)
    return "held-out" if value % 100 < HELD_OUT_PERCENT else "dev"


def in_split(conversation_id: str, split: Split) -> bool:
    return split == "all" or split_of(conversation_id) == split


def select(items: Iterable[M], split: Split, key: str = "conversation_id") -> list[M]:
    """The items (mappings with a conversation id under `key`) of one part, in their order."""
    return [item for item in items if in_split(str(item[key]), split)]
