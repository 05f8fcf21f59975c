"""The pure stage functions: a batch of records in, a batch out (pyarrow tables, so Ray Data's
``map_batches(fn, batch_format="pyarrow")`` and the in-process engine run the very same code).

Between stages a conversation travels as one row: ``batch`` (the shard it belongs to), ``conversation_id``
and ``session`` (the `Session` as a JSON string). A stage that drops a conversation writes its row with a
null ``session`` and the reason, and the next stage skips such rows. Every output row carries ``counts``
(a small JSON object); a shard's counts are their sum, so they follow from the table alone and do not
depend on the engine. Output rows keep the input order (sorted by conversation_id within a batch).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import TypeAdapter

from uxbench.mining.dedup import DedupConfig, Permutations, session_text, signatures
from uxbench.mining.deid import deidentify_session
from uxbench.mining.gate import gate_session
from uxbench.mining.prefilter import PrefilterConfig, drop_reason
from uxbench.mining.sessions import summarize_sessions
from uxbench.mining.signals import SIGNAL_NAMES, SignalConfig, TurnSignals
from uxbench.mining.signals.results import ROW_NAMES, signal_outputs
from uxbench.mining.types import Session

StageFn = Callable[[pa.Table], pa.Table]

_ID = [("batch", pa.int32()), ("conversation_id", pa.string())]
SESSIONS_SCHEMA = pa.schema([*_ID, ("session", pa.string()), ("changes", pa.string()), ("counts", pa.string())])
GATE_SCHEMA = pa.schema([*_ID, ("session", pa.string()), ("gate", pa.string()), ("counts", pa.string())])
PREFILTER_SCHEMA = pa.schema([*_ID, ("session", pa.string()), ("dropped", pa.string()), ("counts", pa.string())])
_INT, _STR, _BOOL, _FLOAT = pa.int64(), pa.string(), pa.bool_(), pa.float64()
TURN_ROW = pa.struct([
    ("conversation_id", _STR), ("turn_index", _INT), ("created_at", _STR),
    ("prev_user_turn", _INT), ("next_user_turn", _INT),
    *[field for name in SIGNAL_NAMES
      for field in ((name, _BOOL), (f"{name}_evidence", _STR), (f"{name}_score", _FLOAT))],
    ("similarity", _FLOAT), ("gap_s", _FLOAT), ("seconds_per_unit", _FLOAT), ("followup_label", _STR),
    ("dissatisfied_score", _FLOAT), ("dissatisfied", _BOOL), ("dissatisfied_by", _STR),
    ("satisfied", _BOOL), ("satisfied_by", _STR),
    ("recovery_outcome", _STR), ("recovery_turns", _STR), ("recovery_actions", _STR),
])
"""One assistant turn's row of the signal table (`TurnSignals.row` and its time), as the signal stage stores
it: typed Arrow values, built in the parallel stage, so the output step only flattens them."""
SIGNALS_SCHEMA = pa.schema([
    *_ID, ("session", pa.string()), ("signals", pa.string()), ("turn_rows", pa.list_(TURN_ROW)),
    ("dedup_minhash", pa.binary()), ("counts", pa.string()),
])
_TURN_ROWS_AT = SIGNALS_SCHEMA.get_field_index("turn_rows")
_SIGNALS_BUT_ROWS = SIGNALS_SCHEMA.remove(_TURN_ROWS_AT)
assert tuple(TURN_ROW.names) == ROW_NAMES  # `signal_outputs`' tuples fill the struct's fields by position
DEDUP_SCHEMA = pa.schema([*_ID, ("duplicate_of", pa.string()), ("counts", pa.string())])
LLM_SIGNALS_SCHEMA = pa.schema([
    *_ID, ("turn_index", pa.int64()), ("llm_label", pa.string()), ("counts", pa.string()),
])

SIGNALS_ADAPTER = TypeAdapter(list[TurnSignals])
_REASON = re.compile(r'^(?P<category>[a-z_]+): ".*" \((?P<role>user|assistant) turn (?P<turn>\d+)\)$', re.S)


def _dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _table(schema: pa.Schema, rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


_PARSED: dict[str, Session] | None = None
"""While a chain job runs (`sessions_remembered`): the sessions of its batch, by conversation id."""


@contextmanager
def sessions_remembered() -> Iterator[None]:
    """Within, each session of the job's one batch is parsed at most once, and found by its conversation id: the
    stages that ride along in one job (gate, prefilter, signals) pass the same session on and no stage changes it,
    so its JSON text need not be read out of the table, hashed or parsed again."""
    global _PARSED
    _PARSED = {}
    try:
        yield
    finally:
        _PARSED = None


def load_session(text: str, conversation_id: str | None = None) -> Session:
    """The session of a row: remembered in a chain job (by ``conversation_id``), else parsed from ``text``."""
    if _PARSED is None or conversation_id is None:
        return Session.model_validate_json(text)
    session = _PARSED.get(conversation_id)
    if session is None:
        session = _PARSED[conversation_id] = Session.model_validate_json(text)
    return session


def remember_session(session: Session) -> None:
    """While a chain job runs: the session de-identification made, for the stages after it."""
    if _PARSED is not None:
        _PARSED[session.conversation_id] = session


def _live(table: pa.Table, *columns: str) -> tuple[pa.Table, list[dict[str, Any]], list[Session]]:
    """The rows whose ``session`` is set (conversations that an earlier stage did not drop): as a table (the
    session text stays in Arrow, for the output), their ids and ``columns`` as dicts, and their sessions."""
    live = table.filter(pc.is_valid(table["session"])) if table["session"].null_count else table
    rows = live.select(["batch", "conversation_id", *columns]).to_pylist()
    sessions: list[Session] = []
    texts: list[str] | None = None
    for position, row in enumerate(rows):
        session = None if _PARSED is None else _PARSED.get(row["conversation_id"])
        if session is None:  # not remembered (outside a chain job): the text is read out once for the batch
            texts = texts if texts is not None else live["session"].to_pylist()
            session = load_session(texts[position], row["conversation_id"])
        sessions.append(session)
    return live, rows, sessions


def _with_text(out: pa.Table, live: pa.Table, kept: Sequence[bool] | None = None) -> pa.Table:
    """``out`` (one row per live row, ``session`` null) with the live rows' session text, null where not kept."""
    text = live["session"].combine_chunks() if live.num_rows else pa.array([], pa.string())
    if kept is not None and not all(kept):
        text = pc.if_else(pa.array(kept, pa.bool_()), text, pa.scalar(None, pa.string()))
    return out.set_column(out.schema.get_field_index("session"), out.schema.field("session"), text)


def load_signals(text: str) -> list[TurnSignals]:
    return SIGNALS_ADAPTER.validate_json(text)


def sum_count_column(table: pa.Table) -> dict[str, int]:
    """The shard's counts: the sum of its rows' ``counts`` objects, keys sorted."""
    total: dict[str, int] = {}
    for raw in table.column("counts").to_pylist():
        for key, value in orjson.loads(raw).items():
            total[key] = total.get(key, 0) + int(value)
    return dict(sorted(total.items()))


# -- 01: de-identification (the first stage that writes; it runs on the driver's machine) -------------

def deid_batch_table(batch: int, sessions: Sequence[Session], salt: bytes) -> pa.Table:
    """Raw sessions (one batch) -> de-identified rows, with the change records (no values)."""
    rows: list[dict[str, Any]] = []
    for session in sessions:
        clean, record = deidentify_session(session, salt)
        counts: dict[str, int] = dict(summarize_sessions([session]))
        for pii_type, n in record.counts().items():
            if n:
                counts[f"pii_{pii_type}"] = n
        counts["sessions_with_pii"] = int(bool(record.changes))
        changes = _dumps([c.model_dump() for c in record.changes]) if record.changes else None
        text = clean.model_dump_json()
        remember_session(clean)
        rows.append({
            "batch": batch, "conversation_id": clean.conversation_id, "session": text,
            "changes": changes, "counts": _dumps(counts),
        })
    rows.sort(key=lambda r: r["conversation_id"])
    return _table(SESSIONS_SCHEMA, rows)


# -- 02: safety gate -----------------------------------------------------------------------------------

def gate_locations(reasons: Sequence[str]) -> list[dict[str, Any]]:
    """Category, role and turn of each gate reason, without the quoted snippet (no conversation text
    leaves the work directory through gated.jsonl)."""
    out: list[dict[str, Any]] = []
    for reason in reasons:
        match = _REASON.match(reason)
        if match:
            out.append({"category": match["category"], "role": match["role"], "turn_index": int(match["turn"])})
        else:
            out.append({"category": reason.split(":", 1)[0], "role": None, "turn_index": None})
    return out


def gate_map(table: pa.Table) -> pa.Table:
    live, ids, sessions = _live(table)
    rows, kept = [], []
    for row, session in zip(ids, sessions, strict=True):
        result = gate_session(session)
        counts = {"checked": 1, "gated": int(not result.allowed)}
        counts.update({f"gated_{name}": 1 for name in result.categories})
        gate = None if result.allowed else _dumps({
            "categories": result.categories, "hits": result.hits, "where": gate_locations(result.reasons),
        })
        rows.append({"batch": row["batch"], "conversation_id": row["conversation_id"], "gate": gate,
                     "counts": _dumps(counts)})
        kept.append(result.allowed)
    return _with_text(_table(GATE_SCHEMA, rows), live, kept)


# -- 03: prefilter -------------------------------------------------------------------------------------

def prefilter_map(table: pa.Table, config: PrefilterConfig) -> pa.Table:
    live, ids, sessions = _live(table)
    rows, kept = [], []
    for row, session in zip(ids, sessions, strict=True):
        reason = drop_reason(session, config)
        rows.append({
            "batch": row["batch"], "conversation_id": row["conversation_id"], "dropped": reason,
            "counts": _dumps({"kept": 1} if reason is None else {f"dropped_{reason}": 1}),
        })
        kept.append(reason is None)
    return _with_text(_table(PREFILTER_SCHEMA, rows), live, kept)


# -- 04: behavioural signals ---------------------------------------------------------------------------

_COUNT_KEYS = tuple((name, f"fired_{name}", f"not_computed_{name}") for name in SIGNAL_NAMES)


def _signal_counts(session: Session, signals: list[TurnSignals]) -> dict[str, int]:
    counts = {
        "sessions": 1, "sessions_with_timestamps": int(session.has_timestamps),
        "assistant_turns": len(signals), "dissatisfied_turns": sum(s.dissatisfied for s in signals),
        "satisfied_turns": sum(s.satisfied for s in signals),
        "sessions_with_dissatisfied": int(any(s.dissatisfied for s in signals)),
    }
    for ts in signals:
        for name, fired_key, missing_key in _COUNT_KEYS:
            fired = getattr(ts, name).fired
            key = fired_key if fired else missing_key if fired is None else None
            if key:
                counts[key] = counts.get(key, 0) + 1
        if ts.recovery is not None:
            key = f"recovery_{ts.recovery.outcome}"
            counts[key] = counts.get(key, 0) + 1
    return counts


def _batch_signal_counts(sessions: Sequence[Session], offsets: Sequence[int], flat: pa.StructArray,
                         ) -> list[dict[str, int]]:
    """`_signal_counts` of each session (same keys and values; tested) from the batch's turn rows (``flat``, the
    session's rows from ``offsets[i]`` to ``offsets[i + 1]``): a column's count per session is a difference of its
    running sum, not 14 look-ups a reply in Python."""
    bounds = np.asarray(offsets, dtype=np.intp)

    def per_session(mask: Any) -> list[int]:
        sums = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))
        return list((sums[bounds[1:]] - sums[bounds[:-1]]).tolist())

    def true(name: str) -> list[int]:
        return per_session(pc.fill_null(flat.field(name), False).to_numpy(zero_copy_only=False))

    replies = (bounds[1:] - bounds[:-1]).tolist()
    dissatisfied, satisfied = true("dissatisfied"), true("satisfied")
    out = [{"sessions": 1, "sessions_with_timestamps": int(session.has_timestamps), "assistant_turns": turns,
            "dissatisfied_turns": bad, "satisfied_turns": good, "sessions_with_dissatisfied": int(bad > 0)}
           for session, turns, bad, good in zip(sessions, replies, dissatisfied, satisfied, strict=True)]
    for name, fired_key, missing_key in _COUNT_KEYS:
        fired = flat.field(name)
        for key, found in ((fired_key, true(name)), (missing_key, per_session(fired.is_null().to_numpy(
                zero_copy_only=False)))):
            for counts, number in zip(out, found, strict=True):
                if number:
                    counts[key] = number
    outcomes = flat.field("recovery_outcome")
    if outcomes.null_count < len(outcomes):
        positions = np.flatnonzero(outcomes.is_valid().to_numpy(zero_copy_only=False))
        owners = np.searchsorted(bounds, positions, side="right") - 1
        for owner, outcome in zip(owners.tolist(), outcomes.take(pa.array(positions)).to_pylist(), strict=True):
            key = f"recovery_{outcome}"
            out[owner][key] = out[owner].get(key, 0) + 1
    return out


def signals_map(table: pa.Table, config: SignalConfig, dedup: DedupConfig,
                perms: Permutations | None = None) -> pa.Table:
    """Signals, flat turn rows, counts and the MinHash signature of each live conversation (``perms``: the
    dedup permutations, passed in so that a worker process need not import datasketch)."""
    from uxbench.mining.signals.detect import compute_signals  # here: the driver, which imports this module, never
    # runs it and would build the detectors' patterns for nothing (~0.15 s of CPU before the first batch)

    live, ids, sessions = _live(table)
    rows = []
    turn_rows: list[tuple[Any, ...]] = []  # every conversation's, one after the other
    offsets = [0]
    for row, session in zip(ids, sessions, strict=True):
        signals = compute_signals(session, config)
        times = {t.turn_index: t.created_at.isoformat() if t.created_at else None
                 for t in session.turns if t.role == "assistant"}
        text, own_rows = signal_outputs(signals, times)
        turn_rows += own_rows
        offsets.append(len(turn_rows))
        rows.append({"batch": row["batch"], "conversation_id": row["conversation_id"], "signals": text})
    # for 05-dedup: the batch's MinHash signatures at once
    minhashes = signatures([session_text(session, dedup.text) for session in sessions], dedup, perms)
    # the turn rows go to Arrow as one array of tuples cut into lists, not as dicts nested in the rows: half the CPU
    flat = pa.array(turn_rows, type=TURN_ROW)
    nested = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), flat)
    counts = _batch_signal_counts(sessions, offsets, flat)
    for row, minhash, own in zip(rows, minhashes, counts, strict=True):
        row["dedup_minhash"] = minhash
        row["counts"] = _dumps(own)
    out = _table(_SIGNALS_BUT_ROWS, rows)
    out = out.add_column(_TURN_ROWS_AT, SIGNALS_SCHEMA.field(_TURN_ROWS_AT), nested)
    return _with_text(out, live)
