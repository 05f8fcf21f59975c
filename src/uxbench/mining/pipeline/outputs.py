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
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from uxbench.errors import DataError
from uxbench.fileio import atomic_write_lines, atomic_writer, temp_path
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


def _signal_batch(signals: StageDir, dedup: StageDir, llm: StageDir | None, batch: int) -> pa.Table:
    """A batch's turn rows, flattened from the signal shard in Arrow, with the near-duplicate link and the LLM
    label of their conversation and turn."""
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
    return pa.Table.from_arrays(columns, schema=SIGNAL_TABLE_SCHEMA)


def _signal_batches(signals: StageDir, dedup: StageDir, llm: StageDir | None,
                    n_batches: int) -> Iterator[pa.Table]:
    for batch in range(n_batches):
        yield _signal_batch(signals, dedup, llm, batch)


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


def _rows(stage: StageDir, batch: int, columns: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = read_shard(stage.shard_path(batch), columns).to_pylist()
    return rows


def _gated_lines(gate: StageDir, batch: int) -> Iterator[bytes]:
    for row in _rows(gate, batch, ["conversation_id", "gate"]):
        if row["gate"] is not None:
            yield _dumps({"conversation_id": row["conversation_id"], **orjson.loads(row["gate"])})


def _change_lines(sessions: StageDir, batch: int) -> Iterator[bytes]:
    for row in _rows(sessions, batch, ["conversation_id", "changes"]):
        if row["changes"] is not None:
            yield _dumps({"conversation_id": row["conversation_id"], "changes": orjson.loads(row["changes"])})


def _prefilter_lines(prefilter: StageDir, batch: int) -> Iterator[bytes]:
    for row in _rows(prefilter, batch, ["conversation_id", "dropped"]):
        if row["dropped"] is not None:
            yield _dumps({"conversation_id": row["conversation_id"], "stage": "prefilter", "reason": row["dropped"]})


def _near_duplicate_lines(dedup: StageDir, batch: int) -> Iterator[bytes]:
    for row in _rows(dedup, batch, ["conversation_id", "duplicate_of"]):
        if row["duplicate_of"] is not None:
            yield _dumps({"conversation_id": row["conversation_id"], "stage": "dedup",
                          "reason": "near_duplicate", "duplicate_of": row["duplicate_of"]})


def write_gated(out: Path, gate: StageDir, n_batches: int) -> Path:
    """gated.jsonl: conversation_id, categories, hits and where (role, turn): no text."""
    path = out / GATED
    atomic_write_lines(path, (line for batch in range(n_batches) for line in _gated_lines(gate, batch)))
    return path


def write_deid_changes(out: Path, sessions: StageDir, n_batches: int) -> Path:
    """deid_changes.jsonl: per conversation with personal data, each change's type, position,
    placeholder and salted hash."""
    path = out / DEID_CHANGES
    atomic_write_lines(path, (line for batch in range(n_batches) for line in _change_lines(sessions, batch)))
    return path


def write_dropped(out: Path, prefilter: StageDir, dedup: StageDir, n_batches: int) -> Path:
    """dropped.jsonl: conversations left out by the prefilter (with the reason) or as near-duplicates
    (with the conversation they repeat; these still count in the signal statistics)."""
    path = out / DROPPED

    def lines() -> Iterator[bytes]:
        for batch in range(n_batches):
            yield from _prefilter_lines(prefilter, batch)
        for batch in range(n_batches):
            yield from _near_duplicate_lines(dedup, batch)

    atomic_write_lines(path, lines())
    return path


class OutputStream:
    """signals.parquet, signals.csv, gated.jsonl, deid_changes.jsonl and dropped.jsonl written batch by batch as
    the near-duplicate index finishes each batch (`add`; `driver_stages.DedupRun`, fed on the driver while the
    workers go on), instead of from every shard after the last one: the same bytes, each file put in place by
    `finish`, or its temporary file removed by `abort`. For a run without a model, whose labels the signal tables
    would otherwise carry."""

    def __init__(self, out: Path, sessions: StageDir, gate: StageDir, prefilter: StageDir, signals: StageDir,
                 dedup: StageDir) -> None:
        self.out = out
        self.sessions, self.gate, self.prefilter, self.signals, self.dedup = sessions, gate, prefilter, signals, dedup
        self.next = 0
        self._near: list[bytes] = []  # dropped.jsonl's near-duplicate lines come after every prefilter line
        self._stack = ExitStack()
        self._tmp = {SIGNALS_PARQUET: temp_path(out / SIGNALS_PARQUET), SIGNALS_CSV: temp_path(out / SIGNALS_CSV)}
        try:
            self._lines = {name: self._stack.enter_context(atomic_writer(out / name))
                           for name in (GATED, DEID_CHANGES, DROPPED)}
            self._parquet = self._stack.enter_context(pq.ParquetWriter(
                self._tmp[SIGNALS_PARQUET], SIGNAL_TABLE_SCHEMA, compression=PARQUET_COMPRESSION))
            self._csv = self._stack.enter_context(pcsv.CSVWriter(self._tmp[SIGNALS_CSV], SIGNAL_TABLE_SCHEMA))
        except BaseException:
            self.abort()
            raise

    def add(self, batch: int) -> None:
        """Batch ``batch`` (the next one in order): its rows appended to every file."""
        if batch != self.next:
            raise ValueError(f"batch {batch} given where batch {self.next} was due: the files are in batch order")
        for name, lines in ((GATED, _gated_lines(self.gate, batch)),
                            (DEID_CHANGES, _change_lines(self.sessions, batch)),
                            (DROPPED, _prefilter_lines(self.prefilter, batch))):
            self._lines[name].writelines(line + b"\n" for line in lines)
        self._near.extend(_near_duplicate_lines(self.dedup, batch))
        table = _signal_batch(self.signals, self.dedup, None, batch)
        if table.num_rows:
            table = table.combine_chunks()
            self._parquet.write_table(table)
            self._csv.write_table(table)
        self.next += 1

    def finish(self, n_batches: int) -> dict[str, Path]:
        """Every file put in place, once all ``n_batches`` were added; returns them by output name."""
        if self.next != n_batches:
            raise ValueError(f"{self.next} of {n_batches} batches written")
        self._lines[DROPPED].writelines(line + b"\n" for line in self._near)
        self._stack.close()  # the writers closed, the JSON Lines files synced and put in place
        for name, tmp in self._tmp.items():
            os.replace(tmp, self.out / name)
        return {"gated": self.out / GATED, "deid_changes": self.out / DEID_CHANGES, "dropped": self.out / DROPPED,
                "signals_parquet": self.out / SIGNALS_PARQUET, "signals_csv": self.out / SIGNALS_CSV}

    def abort(self) -> None:
        """Close everything and remove the temporary files (the outputs of an earlier run stay as they were)."""
        failure = RuntimeError("the mining run stopped before its outputs were complete")
        try:
            self._stack.__exit__(type(failure), failure, None)  # atomic_writer removes its file on an error
        except RuntimeError as exc:
            if exc is not failure:
                raise
        for tmp in self._tmp.values():
            tmp.unlink(missing_ok=True)
