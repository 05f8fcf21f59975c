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
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from uxbench.errors import DataError
from uxbench.fileio import atomic_write_lines, temp_path
from uxbench.mining.pipeline.stages import TURN_ROW
from uxbench.mining.pipeline.store import PARQUET_COMPRESSION, StageDir, read_shard

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

SIGNAL_TABLE_SCHEMA = pa.schema([*TURN_ROW, ("duplicate_of", pa.string()), ("llm_followup_label", pa.string())])
"""One row per assistant turn: ids, time, each signal (null: not computable), its evidence and its score in
[0, 1], the numbers behind them, the dissatisfied score and the verdicts, the recovery chain, the
near-duplicate link and the LLM label."""


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _signal_batches(signals: StageDir, dedup: StageDir, llm: StageDir | None,
                    n_batches: int) -> Iterator[pa.Table]:
    """Each batch's turn rows, flattened from the signal shard in Arrow, with the near-duplicate link and
    the LLM label of their conversation and turn."""
    for batch in range(n_batches):
        shard = read_shard(signals.shard_path(batch), columns=["conversation_id", "turn_rows"])
        dups = read_shard(dedup.shard_path(batch), columns=["conversation_id", "duplicate_of"])
        nested = shard.column("turn_rows").combine_chunks()
        rows = pc.list_flatten(nested)
        owner = pc.list_parent_indices(nested)  # each turn row's conversation (row of the shard)
        cids = shard.column("conversation_id").combine_chunks()
        if not cids.equals(dups.column("conversation_id").combine_chunks()):  # both sorted: same rows
            raise DataError(f"batch {batch}: the near-duplicate shard does not match the signal shard",
                            hint="rerun with --fresh")
        columns = [*rows.flatten(), dups.column("duplicate_of").combine_chunks().take(owner)]
        labels: list[str | None] = [None] * len(rows)
        if llm is not None:
            got = read_shard(llm.shard_path(batch), columns=["conversation_id", "turn_index", "llm_label"])
            found = {(c, t): lab for c, t, lab in zip(*(got.column(i).to_pylist() for i in range(3)),
                                                      strict=True)}
            keys = zip(cids.take(owner).to_pylist(), rows.field("turn_index").to_pylist(), strict=True)
            labels = [found.get(key) for key in keys]
        columns.append(pa.array(labels, type=pa.string()))
        yield pa.Table.from_arrays(columns, schema=SIGNAL_TABLE_SCHEMA)


def write_signal_tables(out: Path, signals: StageDir, dedup: StageDir, llm: StageDir | None,
                        n_batches: int) -> dict[str, Path]:
    """signals.parquet and signals.csv (the same rows), streamed batch by batch. The CSV is written in a thread
    beside the Parquet file (Arrow's writers release the GIL): the two take about as long, in the serial tail of a
    run, when the workers are done and their cores are free."""
    parquet_path, csv_path = out / SIGNALS_PARQUET, out / SIGNALS_CSV
    parquet_tmp, csv_tmp = temp_path(parquet_path), temp_path(csv_path)
    with pq.ParquetWriter(parquet_tmp, SIGNAL_TABLE_SCHEMA, compression=PARQUET_COMPRESSION) as pw, \
            pcsv.CSVWriter(csv_tmp, SIGNAL_TABLE_SCHEMA) as cw, ThreadPoolExecutor(1) as csv_thread:
        written: list[Future[None]] = []
        for table in _signal_batches(signals, dedup, llm, n_batches):
            if table.num_rows:
                table = table.combine_chunks()
                written.append(csv_thread.submit(cw.write_table, table))  # in batch order: one thread
                pw.write_table(table)
        for done in written:
            done.result()  # a failed write raises here, before either file is put in place
    os.replace(parquet_tmp, parquet_path)
    os.replace(csv_tmp, csv_path)
    return {"signals_parquet": parquet_path, "signals_csv": csv_path}


def _column_rows(stage: StageDir, n_batches: int, columns: list[str]) -> Iterator[dict[str, Any]]:
    for batch in range(n_batches):
        yield from read_shard(stage.shard_path(batch), columns).to_pylist()


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
