"""`signal_outputs`, the signal stage's one pass over a conversation's replies: the same JSON and rows as
`TurnSignals.json_dict` and `TurnSignals.row`, and the stage's table as the per-reply dicts made it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
import pyarrow as pa

from uxbench.mining.dedup import DedupConfig
from uxbench.mining.pipeline.stages import SIGNALS_SCHEMA, TURN_ROW, signals_map
from uxbench.mining.signals import SignalConfig, TurnSignals, compute_signals
from uxbench.mining.signals.results import ROW_NAMES, RecoveryChain, SignalValue, signal_outputs
from uxbench.mining.types import Session, Turn

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def _chat(cid: str, *texts: str, times: bool = True) -> Session:
    turns = [Turn(conversation_id=cid, role="user" if i % 2 == 0 else "assistant", content=text, turn_index=i,
                  created_at=T0 + timedelta(seconds=7 * i) if times else None) for i, text in enumerate(texts)]
    return Session(conversation_id=cid, turns=turns)


def _replies() -> list[TurnSignals]:
    chat = _chat("c1", "23乘以47", "1071", "错了，不对", "1081", "thanks, that fixed it. what about 24 x 47?", "1128",
                 "no, that's wrong again", "ok")
    found = compute_signals(chat)
    found.append(TurnSignals(
        conversation_id="x", turn_index=3, gap_s=float("inf"), similarity=float("nan"), seconds_per_unit=-0.0,
        praise=SignalValue(fired=None, evidence='é "quoted"', score=None), satisfied_by=["praise"],
        complaint=SignalValue.model_construct(fired=True), dissatisfied_by=["complaint", "repeat"],
        recovery=RecoveryChain(outcome="unknown", turns=[3, 4], actions=["failure", "retry"], recovered_at=None),
    ))
    return found


def test_json_and_rows_equal_json_dict_and_row() -> None:
    replies = _replies()
    times: dict[int, str | None] = {1: "2024-05-01T09:00:07+00:00", 3: None}
    for _ in range(2):  # the second time every signal value is known
        text, rows = signal_outputs(replies, times)
        assert text == orjson.dumps([ts.json_dict() for ts in replies], option=orjson.OPT_SORT_KEYS).decode()
        expected = [{**ts.row(), "created_at": times.get(ts.turn_index)} for ts in replies]
        assert [dict(zip(ROW_NAMES, row, strict=True)) for row in rows] == [
            {name: row[name] for name in ROW_NAMES} for row in expected]
    assert signal_outputs([], {}) == ("[]", [])
    assert tuple(TURN_ROW.names) == ROW_NAMES


def _old_signals_table(sessions: list[Session]) -> pa.Table:
    """The stage's table as it was made before `signal_outputs`: one dict per reply, nested in the rows."""
    from uxbench.mining.dedup import session_text, signature
    from uxbench.mining.pipeline.stages import _dumps, _signal_counts

    rows: list[dict[str, Any]] = []
    for session in sessions:
        signals = compute_signals(session, SignalConfig())
        times = {t.turn_index: t.created_at.isoformat() if t.created_at else None
                 for t in session.turns if t.role == "assistant"}
        rows.append({
            "batch": 0, "conversation_id": session.conversation_id, "session": session.model_dump_json(),
            "signals": _dumps([ts.json_dict() for ts in signals]),
            "turn_rows": [{**ts.row(), "created_at": times.get(ts.turn_index)} for ts in signals],
            "dedup_minhash": signature(session_text(session), DedupConfig()),
            "counts": _dumps(_signal_counts(session, signals)),
        })
    return pa.Table.from_pylist(rows, schema=SIGNALS_SCHEMA)


def test_the_stage_table_is_unchanged() -> None:
    sessions = [
        _chat("a", "how do I sort a list in python?", "use sorted()", "that's wrong", "use list.sort()", "thanks!",
              "ok"),
        _chat("b", "hello", "hi", times=False),
        _chat("c", "你好", "你好！有什么可以帮你？", "写一首诗", "床前明月光", "不对，重写", "好的"),
        _chat("d", "only a question"),
    ]
    table = pa.Table.from_pylist(
        [{"batch": 0, "conversation_id": s.conversation_id, "session": s.model_dump_json()} for s in sessions],
        schema=pa.schema([("batch", pa.int32()), ("conversation_id", pa.string()), ("session", pa.string())]))
    out = signals_map(table, SignalConfig(), DedupConfig())
    assert out.schema == SIGNALS_SCHEMA
    assert out.equals(_old_signals_table(sessions))
    empty = signals_map(table.slice(0, 0), SignalConfig(), DedupConfig())
    assert empty.schema == SIGNALS_SCHEMA and empty.num_rows == 0


def test_batch_counts_equal_per_session_counts() -> None:
    from uxbench.mining.pipeline.stages import _batch_signal_counts, _signal_counts

    sessions = [
        _chat("a", "how do I sort a list in python?", "use sorted()", "that's wrong", "use list.sort()", "thanks!",
              "ok"),
        _chat("d", "only a question"),
        _chat("b", "hello", "hi", "no, that's wrong", "sorry", "still wrong", "sorry again", times=False),
    ]
    found = [compute_signals(s) for s in sessions]
    assert any(ts.recovery is not None for f in found for ts in f)
    rows: list[tuple[Any, ...]] = []
    offsets = [0]
    for replies in found:
        rows += signal_outputs(replies, {})[1]
        offsets.append(len(rows))
    flat = pa.array(rows, type=TURN_ROW)
    assert _batch_signal_counts(sessions, offsets, flat) == [
        _signal_counts(s, f) for s, f in zip(sessions, found, strict=True)]
    assert _batch_signal_counts([], [0], pa.array([], type=TURN_ROW)) == []
