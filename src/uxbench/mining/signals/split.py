"""The fixed split of a labelled follow-up set into a `dev` part (tune on it) and a `held-out` part (report on it).

By conversation, so two items of one conversation never fall on both sides: an item is `dev` when the first
8 bytes of SHA-256(``SPLIT_SEED`` NUL conversation_id), read as a big-endian integer, are below
``DEV_SHARE`` of 2**64. Nothing random, nothing that depends on the order or the number of items: the same
conversation lands on the same side in every run, on every machine, and when items are added.

On the ShareGPT development set (`../shared/data/signals_dev/labels.jsonl`, 240 items) this gives 131 `dev`
items (33 dissatisfied) and 109 `held-out` items (22 dissatisfied). Choose thresholds and rules on `dev`;
report the figures of `held-out`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar

Split = Literal["dev", "held-out", "all"]
SPLITS: tuple[Split, ...] = ("dev", "held-out", "all")
SPLIT_SEED = "uxbench-signals-split-v1"
DEV_SHARE = 0.5

M = TypeVar("M", bound=Mapping[str, Any])


def split_of(conversation_id: str) -> Literal["dev", "held-out"]:
    """The part a conversation belongs to."""
    digest = hashlib.sha256(f"{SPLIT_SEED}\x00{conversation_id}".encode()).digest()
    return "dev" if int.from_bytes(digest[:8], "big") < DEV_SHARE * 2**64 else "held-out"


def in_split(conversation_id: str, split: Split) -> bool:
    return split == "all" or split_of(conversation_id) == split


def select(items: Iterable[M], split: Split, key: str = "conversation_id") -> list[M]:
    """The items (mappings with a conversation id under `key`) of one part, in their order."""
    return [item for item in items if in_split(str(item[key]), split)]
