"""The files a mining run leaves in its output directory, assembled from the stage shards.

Every file is streamed shard by shard (memory stays flat) and renamed into place when complete. Rows
come in batch order and, within a batch, by conversation_id and turn: the same order on every engine.
None of these files holds an original personal value: the texts were de-identified before the first
shard was written, gate reasons are reduced to category and position, and the de-identification record
holds types, positions and salted hashes only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from uxbench.fileio import atomic_write_lines, temp_path
from uxbench.mining.pipeline.store import PARQUET_COMPRESSION, StageDir
from uxbench.mining.signals import SIGNAL_NAMES

SIGNALS_PARQUET = "signals.parquet"
SIGNALS_CSV = "signals.csv"
GATED = "gated.jsonl"
DEID_CHANGES = "deid_changes.jsonl"
DROPPED = "dropped.jsonl"
STAGE_COUNTS = "stage_counts.json"
MANIFEST = "manifest.json"
CANDIDATES = "candidates.jsonl"
CASES_DIR = "cases"
DATA_CARD = "DATA_CARD.md"
DATA_CARD_JSON = "data_card.json"
OUTPUT_NAMES = (SIGNALS_PARQUET, SIGNALS_CSV, GATED, DEID_CHANGES, DROPPED, STAGE_COUNTS, MANIFEST,
                CANDIDATES, CASES_DIR, DATA_CARD, DATA_CARD_JSON)

_INT, _STR, _BOOL, _FLOAT = pa.int64(), pa.string(), pa.bool_(), pa.float64()
SIGNAL_TABLE_SCHEMA = pa.schema([
    ("conversation_id", _STR), ("turn_index", _INT), ("created_at", _STR),
    ("prev_user_turn", _INT), ("next_user_turn", _INT),
    *[field for name in SIGNAL_NAMES
      for field in ((name, _BOOL), (f"{name}_evidence", _STR), (f"{name}_score", _FLOAT))],
    ("similarity", _FLOAT), ("gap_s", _FLOAT), ("seconds_per_unit", _FLOAT), ("followup_label", _STR),
    ("dissatisfied_score", _FLOAT), ("dissatisfied", _BOOL), ("dissatisfied_by", _STR),
    ("satisfied", _BOOL), ("satisfied_by", _STR),
    ("recovery_outcome", _STR), ("recovery_turns", _STR), ("recovery_actions", _STR),
    ("duplicate_of", _STR), ("llm_followup_label", _STR),
])
"""One row per assistant turn: ids, time, each signal (null: not computable), its evidence and its score in
[0, 1], the numbers behind them, the dissatisfied score and the verdicts, the recovery chain, the
near-duplicate link and the LLM label."""


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _signal_batches(signals: StageDir, dedup: StageDir, llm: StageDir | None,
                    n_batches: int) -> Iterator[pa.Table]:
    for batch in range(n_batches):
        shard = pq.read_table(signals.shard_path(batch), columns=["conversation_id", "turn_rows"])
        dups = pq.read_table(dedup.shard_path(batch), columns=["conversation_id", "duplicate_of"])
        duplicate_of = dict(zip(dups.column(0).to_pylist(), dups.column(1).to_pylist(), strict=True))
        labels: dict[tuple[str, int], str | None] = {}
        if llm is not None:
            got = pq.read_table(llm.shard_path(batch), columns=["conversation_id", "turn_index", "llm_label"])
            labels = {(c, t): lab for c, t, lab in zip(*(got.column(i).to_pylist() for i in range(3)),
                                                       strict=True)}
        rows: list[dict[str, Any]] = []
        for cid, raw in zip(shard.column(0).to_pylist(), shard.column(1).to_pylist(), strict=True):
            for row in orjson.loads(raw):
                row["duplicate_of"] = duplicate_of.get(cid)
                row["llm_followup_label"] = labels.get((cid, row["turn_index"]))
                rows.append(row)
        yield pa.Table.from_pylist(rows, schema=SIGNAL_TABLE_SCHEMA)


def write_signal_tables(out: Path, signals: StageDir, dedup: StageDir, llm: StageDir | None,
                        n_batches: int) -> dict[str, Path]:
    """signals.parquet and signals.csv (the same rows), streamed batch by batch."""
    parquet_path, csv_path = out / SIGNALS_PARQUET, out / SIGNALS_CSV
    parquet_tmp, csv_tmp = temp_path(parquet_path), temp_path(csv_path)
    with pq.ParquetWriter(parquet_tmp, SIGNAL_TABLE_SCHEMA, compression=PARQUET_COMPRESSION) as pw, \
            pcsv.CSVWriter(csv_tmp, SIGNAL_TABLE_SCHEMA) as cw:
        for table in _signal_batches(signals, dedup, llm, n_batches):
            if table.num_rows:
                table = table.combine_chunks()
                pw.write_table(table)
                cw.write_table(table)
    os.replace(parquet_tmp, parquet_path)
    os.replace(csv_tmp, csv_path)
    return {"signals_parquet": parquet_path, "signals_csv": csv_path}


def _column_rows(stage: StageDir, n_batches: int, columns: list[str]) -> Iterator[dict[str, Any]]:
    for batch in range(n_batches):
        yield from pq.read_table(stage.shard_path(batch), columns=columns).to_pylist()


def write_gated(out: Path, gate: StageDir, n_batches: int) -> Path:
    """gated.jsonl: conversation_id, categories, hits and where (role, turn): no text."""
    path = out / GATED
    atomic_write_lines(path, (
        _dumps({"conversation_id": row["conversation_id"], **orjson.loads(row["gate"])})
        for row in _column_rows(gate, n_batches, ["conversation_id", "gate"]) if row["gate"] is not None
    ))
    return path


def write_deid_changes(out: Path, sessions: StageDir, n_batches: int) -> Path:
    """deid_changes.jsonl: per conversation with personal data, each change's type, position,
    placeholder and salted hash."""
    path = out / DEID_CHANGES
    atomic_write_lines(path, (
        _dumps({"conversation_id": row["conversation_id"], "changes": orjson.loads(row["changes"])})
        for row in _column_rows(sessions, n_batches, ["conversation_id", "changes"])
        if row["changes"] is not None
    ))
    return path


def write_dropped(out: Path, prefilter: StageDir, dedup: StageDir, n_batches: int) -> Path:
    """dropped.jsonl: conversations left out by the prefilter (with the reason) or as near-duplicates
    (with the conversation they repeat; these still count in the signal statistics)."""
    path = out / DROPPED

    def lines() -> Iterator[bytes]:
        for row in _column_rows(prefilter, n_batches, ["conversation_id", "dropped"]):
            if row["dropped"] is not None:
                yield _dumps({"conversation_id": row["conversation_id"], "stage": "prefilter",
                              "reason": row["dropped"]})
        for row in _column_rows(dedup, n_batches, ["conversation_id", "duplicate_of"]):
            if row["duplicate_of"] is not None:
                yield _dumps({"conversation_id": row["conversation_id"], "stage": "dedup",
                              "reason": "near_duplicate", "duplicate_of": row["duplicate_of"]})

    atomic_write_lines(path, lines())
    return path
