"""Train/test splits by conversation, the temporal split, and removal of near-duplicates of named test sets.

- By conversation (default): conversations are ordered by SHA-256 of (seed, conversation id) and taken in that
  order into the test side until it holds `test_fraction` of the rows; no conversation is on both sides.
- Temporal (`split_date`): rows before the date train, rows at or after it test (the paper's split). A
  conversation with rows on both sides of the date tests: its rows before the date are left out (counted), so
  neither side holds a conversation of the other and the date holds for every row.
- `exclude`: rows whose judged exchange (query + reply) is a near-duplicate of one in the named sets are left
  out of both sides: MinHash (datasketch, character 3-grams, 128 permutations) finds candidates, and a pair is a
  duplicate when the estimated Jaccard similarity is at least `threshold` (default 0.8).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from uxbench.errors import DataError
from uxbench.judge_train.data import TrainRow, class_counts

MIN_TRAIN_PER_CLASS = 4
"""Fewer than this of either class on the training side cannot fit and calibrate a classifier."""
MIN_TEST_PER_CLASS = 1


@dataclass
class Split:
    train: list[TrainRow]
    test: list[TrainRow]
    info: dict[str, Any]


def _order(conversation: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}\0{conversation}".encode()).hexdigest()


def _counts(rows: Sequence[TrainRow]) -> str:
    c = class_counts(rows)
    n_conv = len({r.conversation for r in rows})
    return f"{len(rows)} rows ({c['good']} good, {c['bad']} bad) in {n_conv} conversations"


def check_classes(rows: Sequence[TrainRow], what: str = "the training data") -> None:
    """Both classes present, or a DataError naming the counts."""
    c = class_counts(rows)
    if not rows:
        raise DataError(f"{what} holds no labelled rows", hint="check the files and the left-out reasons")
    if c["good"] == 0 or c["bad"] == 0:
        raise DataError(
            f"{what} has one class only: {c['good']} good, {c['bad']} bad; a judge learns from both",
            hint="add rows of the missing class (liked replies, or disliked ones)",
        )


def split_rows(rows: Sequence[TrainRow], *, test_fraction: float = 0.2, seed: int = 0,
               split_date: datetime | None = None) -> Split:
    """Split by conversation (or by date); raise DataError naming the counts when a side is too small."""
    check_classes(rows)
    if split_date is not None:
        split = _by_date(rows, split_date)
    else:
        if not 0.0 < test_fraction < 1.0:
            raise DataError(f"test fraction must be between 0 and 1, got {test_fraction}")
        split = _by_conversation(rows, test_fraction, seed)
    tr, te = class_counts(split.train), class_counts(split.test)
    if min(tr.values()) < MIN_TRAIN_PER_CLASS or min(te.values()) < MIN_TEST_PER_CLASS:
        raise DataError(
            f"too few rows for the split: training side {_counts(split.train)}, test side {_counts(split.test)}; "
            f"training needs at least {MIN_TRAIN_PER_CLASS} of each class and the test side "
            f"{MIN_TEST_PER_CLASS} (all data: {_counts(rows)})",
            hint="add data, or change --test-fraction / --split-date",
        )
    split.info.update(train=class_counts(split.train), test=class_counts(split.test),
                      train_conversations=len({r.conversation for r in split.train}),
                      test_conversations=len({r.conversation for r in split.test}))
    return split


def _by_conversation(rows: Sequence[TrainRow], fraction: float, seed: int) -> Split:
    by_conv: dict[str, list[TrainRow]] = defaultdict(list)
    for row in rows:
        by_conv[row.conversation].append(row)
    target = fraction * len(rows)
    test_ids: set[str] = set()
    taken = 0
    for conv in sorted(by_conv, key=lambda c: _order(c, seed)):
        if taken >= target:
            break
        test_ids.add(conv)
        taken += len(by_conv[conv])
    train = [r for r in rows if r.conversation not in test_ids]
    test = [r for r in rows if r.conversation in test_ids]
    return Split(train, test, {"kind": "by conversation", "test_fraction": fraction, "seed": seed})


def _by_date(rows: Sequence[TrainRow], date: datetime) -> Split:
    undated = [r for r in rows if r.timestamp is None]
    if undated:
        raise DataError(
            f"--split-date needs a time on every row; {len(undated)} of {len(rows)} rows have none "
            f"(first: {undated[0].id!r})",
            hint="give the rows a created_at (or the history's times), or split by conversation",
        )
    late = {r.conversation for r in rows if r.timestamp is not None and r.timestamp >= date}
    train = [r for r in rows if r.conversation not in late]
    test = [r for r in rows if r.timestamp is not None and r.timestamp >= date]
    dropped = len(rows) - len(train) - len(test)
    return Split(train, test, {"kind": "temporal", "split_date": date.isoformat(),
                               "left_out_straddling_rows": dropped})


def _shingles(text: str, k: int = 3) -> set[bytes]:
    text = " ".join(text.split()).lower()
    if len(text) <= k:
        return {text.encode()}
    return {text[i : i + k].encode() for i in range(len(text) - k + 1)}


def exclude_near_duplicates(rows: Sequence[TrainRow], excluded: Sequence[TrainRow], *,
                            threshold: float = 0.8) -> tuple[list[TrainRow], int]:
    """`rows` without those whose query + reply is a near-duplicate of one in `excluded`; and how many left."""
    from datasketch import MinHash, MinHashLSH

    if not excluded:
        return list(rows), 0

    def signature(row: TrainRow) -> MinHash:
        m = MinHash(num_perm=128, seed=1)
        m.update_batch(list(_shingles(f"{row.query}\n{row.response}")))
        return m

    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    sigs: dict[str, MinHash] = {}
    for i, row in enumerate(excluded):
        key = str(i)
        sigs[key] = signature(row)
        lsh.insert(key, sigs[key])
    kept: list[TrainRow] = []
    for row in rows:
        sig = signature(row)
        if any(sig.jaccard(sigs[key]) >= threshold for key in lsh.query(sig)):
            continue
        kept.append(row)
    return kept, len(rows) - len(kept)
