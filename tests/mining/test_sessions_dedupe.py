"""`sessions.dedupe_turns` settles a conversation without repeated keys at once; on random conversations (repeated
places, ids shared or reused, times or none, texts edited) it gives what the row-by-row rule gives."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from uxbench.mining.sessions import DedupeResult, _same_text, _ts, build_session, dedupe_key, dedupe_turns
from uxbench.mining.types import Turn


def _rule(turns: Sequence[Turn]) -> DedupeResult:
    """The rule written row by row: the latest row per key (a later row on a tie), in input order."""
    best: dict[tuple[Any, ...], int] = {}
    for position, turn in enumerate(turns):
        held = best.get(dedupe_key(turn))
        if held is None or _ts(turn.created_at) >= _ts(turns[held].created_at):
            best[dedupe_key(turn)] = position
    kept = [turns[i] for i in sorted(best.values())]
    other = sum(1 for i, turn in enumerate(turns)
                if best[dedupe_key(turn)] != i and not _same_text(turn.content, turns[best[dedupe_key(turn)]].content))
    places: dict[str, set[tuple[int, str]]] = {}
    for turn in kept:
        if turn.message_id:
            places.setdefault(turn.message_id, set()).add((turn.turn_index, turn.role))
    reused = sum(1 for turn in kept if turn.message_id and len(places[turn.message_id]) > 1)
    return DedupeResult(kept, len(turns) - len(kept), other, reused)


def _conversation(rng: random.Random) -> list[Turn]:
    start = datetime(2024, 5, 1, tzinfo=timezone.utc)
    turns = []
    for _ in range(rng.randint(0, 12)):
        index = rng.randint(0, 5)
        turns.append(Turn(
            conversation_id="c", turn_index=index, role="user" if index % 2 == 0 else "assistant",
            content=rng.choice(["a", "a ", "b", "a  b", "a b"]), regeneration_index=rng.choice([0, 0, 1]),
            message_id=rng.choice([None, None, "m1", "m2", ""]),
            created_at=rng.choice([None, start, start + timedelta(seconds=rng.randint(0, 3))]),
        ))
    return turns


def test_dedupe_gives_the_row_by_row_rule() -> None:
    for seed in range(300):  # 300 random conversations, one test (a failure names its seed)
        turns = _conversation(random.Random(seed))
        assert dedupe_turns(turns) == _rule(turns), f"seed {seed}"
        build_session("c", turns)  # and the session builds on it


def test_a_conversation_without_repeats_keeps_every_row_in_order() -> None:
    turns = [Turn(conversation_id="c", turn_index=i, role="user" if i % 2 == 0 else "assistant", content="x")
             for i in (3, 0, 2, 1)]
    result = dedupe_turns(turns)
    assert result == DedupeResult(turns, 0, 0, 0) and result.kept is not turns
