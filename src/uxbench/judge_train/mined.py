"""Training rows from a `uxbench mine run` output: labels from `signals.parquet`, texts from the signal stage.

`signals.parquet` holds no text (it is meant to be shared); the de-identified turns are in the signal stage's
shards (`OUT/work/04-signals/part-*.parquet`, the session text joined from the stage that stores it,
`store.read_with_sessions`). Keep `work/` to train from a mining run.
Label rules and what is left out: `uxbench.judge_train.data`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq

from uxbench.data.schema import Message
from uxbench.data.timestamps import parse_timestamp
from uxbench.errors import DataError
from uxbench.judge_train.rows import Label, LoadReport, TrainRow

SIGNALS_FILE = "signals.parquet"
_ROW_COLUMNS = ("conversation_id", "turn_index", "created_at", "prev_user_turn", "thumbs_down", "thumbs_up",
                "dissatisfied", "dissatisfied_by", "satisfied", "satisfied_by", "duplicate_of")


def label_of(row: dict[str, Any]) -> tuple[Label, str] | str:
    """(label, its source) of one signals row, or the reason it has none."""
    down, up = row.get("thumbs_down") is True, row.get("thumbs_up") is True
    if down and up:
        return "thumbs up and down on one reply"
    if down:
        return "bad", "thumbs_down"
    if up:
        return "good", "thumbs_up"
    bad, good = row.get("dissatisfied") is True, row.get("satisfied") is True
    if bad and good:
        return "both dissatisfied and satisfied"
    if bad:
        return "bad", f"signals:{row.get('dissatisfied_by') or 'dissatisfied'}"
    if good:
        return "good", f"signals:{row.get('satisfied_by') or 'satisfied'}"
    return "no signal either way"


def _signal_shards(out: Path) -> list[Path]:
    from uxbench.mining.pipeline import registry

    shards = sorted((out / "work" / registry.dirname(registry.get("signals"))).glob("part-*.parquet"))
    if not shards:
        raise DataError(
            "a mining output without the texts: signals.parquet holds labels only, the de-identified turns are "
            "in work/04-signals", source=str(out),
            hint="train from a mining output whose work/ directory was kept, or pass its cases/ files",
        )
    return shards


def _texts(out: Path, wanted: set[str]) -> dict[str, list[dict[str, Any]]]:
    """conversation_id -> its de-identified turns (dicts with turn_index, role, content, created_at)."""
    from uxbench.mining.pipeline.store import read_with_sessions

    found: dict[str, list[dict[str, Any]]] = {}
    for shard in _signal_shards(out):
        part = read_with_sessions(shard, ["conversation_id", "session"])
        for cid, session in zip(part.column(0).to_pylist(), part.column(1).to_pylist(), strict=True):
            if cid in wanted:
                found[cid] = sorted(orjson.loads(session)["turns"], key=lambda t: int(t["turn_index"]))
    return found


def _message(turn: dict[str, Any]) -> Message:
    return Message(role=turn["role"], content=turn["content"],
                   created_at=parse_timestamp(turn.get("created_at"), lenient=True),
                   turn_index=int(turn["turn_index"]))


def read_mining_output(out: Path, report: LoadReport) -> Iterator[TrainRow]:
    """One row per labelled assistant turn of the mining output `out`."""
    table = pq.read_table(out / SIGNALS_FILE)
    missing = [c for c in _ROW_COLUMNS if c not in table.column_names]
    if missing:
        raise DataError(f"missing columns {', '.join(missing)} (not a `uxbench mine run` output?)",
                        source=str(out / SIGNALS_FILE))
    labelled: list[tuple[dict[str, Any], Label, str]] = []
    for row in table.select(list(_ROW_COLUMNS)).to_pylist():
        if row.get("duplicate_of"):
            report.left_out["near-duplicate conversation (duplicate_of)"] += 1
            continue
        got = label_of(row)
        if isinstance(got, str):
            report.left_out[got] += 1
            continue
        labelled.append((row, *got))
    texts = _texts(out, {r["conversation_id"] for r, _, _ in labelled})
    for row, label, source in labelled:
        cid, turn = str(row["conversation_id"]), int(row["turn_index"])
        turns = {int(t["turn_index"]): t for t in texts.get(cid, [])}
        prev = row.get("prev_user_turn")
        if prev is None or turn not in turns or int(prev) not in turns:
            report.left_out["reply without its text or a user message before it"] += 1
            continue
        query, response = str(turns[int(prev)]["content"] or ""), str(turns[turn]["content"] or "")
        if not query.strip() or not response.strip():
            # a Task 1 file refuses such a row (`uxbench judge eval` reads the test side as one)
            report.left_out["empty user message" if not query.strip() else "empty reply"] += 1
            continue
        history = tuple(_message(t) for i, t in sorted(turns.items()) if i < int(prev))
        when: datetime | None = parse_timestamp(row.get("created_at"), lenient=True)
        report.rows_by_source[source] += 1
        yield TrainRow(
            id=f"{cid}#{turn}", conversation=cid, history=history, query=query,
            response=response, label=label, label_source=source, timestamp=when,
        )
