"""Session building: duplicates, order, regenerations, alternation, external grouping."""

from __future__ import annotations

import random
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from uxbench.errors import DataError
from uxbench.mining.logformat import parse_row
from uxbench.mining.sessions import (
    BUCKET_DIR,
    build_session,
    build_sessions,
    group_to_sessions,
    summarize_sessions,
)
from uxbench.mining.types import Turn

T0 = datetime(2024, 5, 1, 10, tzinfo=timezone.utc)


def turn(index: int, text: str = "", *, cid: str = "c", regen: int = 0, secs: float | None = None,
         mid: str | None = None, **meta: object) -> Turn:
    return Turn(
        conversation_id=cid, turn_index=index, role="user" if index % 2 == 0 else "assistant",
        content=text or f"t{index}", regeneration_index=regen, message_id=mid,
        created_at=None if secs is None else T0 + timedelta(seconds=secs), meta=dict(meta),
    )


def shape(turns: list[Turn]) -> list[tuple[int, str, str]]:
    return [(t.turn_index, t.role, t.content) for t in turns]


def test_order_and_timestamps_from_shuffled_rows() -> None:
    rows = [turn(i, secs=i * 10) for i in range(6)]
    random.Random(3).shuffle(rows)
    session = build_session("c", rows)
    assert [t.turn_index for t in session.turns] == list(range(6))
    assert session.has_timestamps and session.regenerated == []
    assert session.meta == {"duplicates_dropped": 0, "duplicates_with_other_text": 0, "reused_message_ids": 0,
                            "repeated_prompt_rows": 0, "edited_prompts": 0, "alternation_issues": []}
    assert not build_session("c", [turn(0, secs=0), turn(1)]).has_timestamps


def test_duplicates_by_message_id_keep_the_latest() -> None:
    old = turn(1, "old", mid="m1", secs=5)
    new = turn(1, "new", mid="m1", secs=9)
    session = build_session("c", [turn(0, mid="m0"), new, old, turn(0, mid="m0")])
    assert shape(session.turns) == [(0, "user", "t0"), (1, "assistant", "new")]
    assert session.meta["duplicates_dropped"] == 2
    assert session.meta["duplicates_with_other_text"] == 1  # "old" was replaced by "new": counted, not silent


def test_a_message_id_reused_by_another_turn_keeps_both_turns() -> None:
    # A source that reuses an id for a different turn: ids are unique per conversation and turn, so the
    # second turn is a message of its own and its text must not be dropped.
    rows = [turn(0, "first question", mid="m"), turn(1, "answer", mid="a1"),
            turn(2, "second question", mid="m"), turn(3, "second answer", mid="a2")]
    session = build_session("c", rows)
    assert shape(session.turns) == [(0, "user", "first question"), (1, "assistant", "answer"),
                                    (2, "user", "second question"), (3, "assistant", "second answer")]
    assert session.meta["duplicates_dropped"] == 0 and session.meta["reused_message_ids"] == 2
    assert summarize_sessions([session])["reused_message_ids"] == 2


def test_duplicates_without_id_fall_back_to_position() -> None:
    session = build_session("c", [turn(0), turn(1, "first"), turn(1, "second")])
    assert shape(session.turns)[1] == (1, "assistant", "second")  # equal (missing) times: the later row wins
    assert session.meta["duplicates_dropped"] == 1 and session.regenerated == []


def test_product_regeneration_is_not_a_repeat() -> None:
    base = {"cid": "p", "promptcreatetime": "2024-05-01 10:00:00", "modelprompt": "写一首诗"}
    rows = [
        {**base, "convidx": 0, "regenerateidx": 1, "answer": "第二版",
         "answercreatetime": "2024-05-01 10:01:00", "messageid": "r2"},
        {**base, "convidx": 0, "regenerateidx": 0, "answer": "第一版",
         "answercreatetime": "2024-05-01 10:00:09", "messageid": "r1", "unlike_cnt": 1},
        {**base, "convidx": 1, "modelprompt": "谢谢", "answer": "不客气", "messageid": "r3",
         "promptcreatetime": "2024-05-01 10:02:00", "answercreatetime": "2024-05-01 10:02:03"},
    ]
    turns = [t for row in rows for t in parse_row(row)]
    session = build_session("p", turns)
    assert shape(session.turns) == [(0, "user", "写一首诗"), (1, "assistant", "第二版"), (2, "user", "谢谢"),
                                    (3, "assistant", "不客气")]
    assert shape(session.regenerated) == [(1, "assistant", "第一版")]
    assert session.regenerated[0].feedback == "dislike"
    assert session.meta["repeated_prompt_rows"] == 1 and session.meta["alternation_issues"] == []


def test_canonical_regeneration_indices() -> None:
    session = build_session("c", [turn(0), turn(1, "r2", regen=2), turn(1, "r0"), turn(1, "r1", regen=1)])
    assert shape(session.turns) == [(0, "user", "t0"), (1, "assistant", "r2")]
    assert [t.content for t in session.regenerated] == ["r0", "r1"]


def test_regeneration_with_its_own_turn_index() -> None:
    flagged = build_session("c", [turn(0, "q"), turn(1, "a1"), turn(3, "a2", regenerated=True)])
    assert shape(flagged.turns) == [(0, "user", "q"), (3, "assistant", "a2")]
    assert [t.content for t in flagged.regenerated] == ["a1"]
    with_copy = build_session("c", [turn(0, "q"), turn(1, "a1"), turn(2, " q "), turn(3, "a2", regen=1)])
    assert shape(with_copy.turns) == [(0, "user", "q"), (3, "assistant", "a2")]
    assert with_copy.meta["repeated_prompt_rows"] == 1


def test_a_real_repeat_stays_a_repeat() -> None:
    session = build_session("c", [turn(0, "q"), turn(1, "a1"), turn(2, "q"), turn(3, "a2")])
    assert len(session.turns) == 4 and session.regenerated == []


def test_edited_prompt_keeps_the_edit() -> None:
    rows = [turn(0, "draft"), turn(0, "edited", regen=1), turn(1, "a", regen=1)]
    session = build_session("c", rows)
    assert shape(session.turns) == [(0, "user", "edited"), (1, "assistant", "a")]
    assert session.meta["edited_prompts"] == 1


def test_alternation_issues_are_recorded() -> None:
    rows = [turn(1, "hello"), turn(2, "q1"), turn(4, "q2"), turn(5), turn(7)]
    session = build_session("c", rows)
    assert session.meta["alternation_issues"] == [
        {"turn_index": 1, "issue": "starts_with_assistant"},
        {"turn_index": 4, "issue": "consecutive_user"},
        {"turn_index": 7, "issue": "consecutive_assistant"},
    ]
    assert len(session.turns) == 5


def test_foreign_turn_is_rejected() -> None:
    with pytest.raises(DataError):
        build_session("c", [turn(0, cid="other")])


def many_turns(n_conv: int, seed: int) -> list[Turn]:
    rows = [turn(i, f"{c}-{i}", cid=f"conv{c:03d}", secs=i) for c in range(n_conv) for i in range(4)]
    rows += [turn(1, "dup", cid="conv001", secs=0)]  # an older duplicate of conv001's reply
    random.Random(seed).shuffle(rows)
    return rows


def test_build_sessions_groups_and_sorts() -> None:
    sessions = build_sessions(many_turns(5, seed=1))
    assert [s.conversation_id for s in sessions] == [f"conv{c:03d}" for c in range(5)]
    assert build_sessions(many_turns(5, seed=2)) == sessions


def test_external_grouping_matches_in_memory(tmp_path: Path) -> None:
    rows = many_turns(40, seed=5)
    expected = {s.conversation_id: s for s in build_sessions(rows)}
    grouped = list(group_to_sessions(iter(rows), tmp_path, n_buckets=7))
    assert len(grouped) == 40 and {s.conversation_id: s for s in grouped} == expected
    assert grouped == list(group_to_sessions(iter(many_turns(40, seed=9)), tmp_path, n_buckets=7))
    assert not (tmp_path / BUCKET_DIR).exists()
    assert grouped[0].meta is not None and summarize_sessions(grouped)["duplicates_dropped"] == 1


def test_spill_files_are_private_and_removed_when_abandoned(tmp_path: Path) -> None:
    stale = tmp_path / BUCKET_DIR
    stale.mkdir()
    (stale / "bucket-00000.jsonl").write_text('{"junk": 1}\n')  # a killed run's leftovers
    sessions = group_to_sessions(many_turns(10, seed=1), tmp_path, n_buckets=4)
    first = next(sessions)
    spill = tmp_path / BUCKET_DIR
    assert stat.S_IMODE(spill.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in spill.iterdir())
    assert first.conversation_id.startswith("conv")
    sessions.close()
    assert not spill.exists()
    with pytest.raises(ValueError):
        group_to_sessions([], tmp_path, n_buckets=0)


def test_summary() -> None:
    sessions = build_sessions([turn(0, secs=0), turn(1, secs=1), turn(1, "r", regen=1, secs=2),
                               turn(0, cid="d"), turn(2, cid="d")])
    assert summarize_sessions(sessions) == {
        "sessions": 2, "turns": 4, "regenerated_replies": 1, "duplicates_dropped": 0,
        "duplicates_with_other_text": 0, "reused_message_ids": 0, "repeated_prompt_rows": 0, "edited_prompts": 0,
        "sessions_with_alternation_issues": 1,
        "sessions_with_timestamps": 1,
    }
