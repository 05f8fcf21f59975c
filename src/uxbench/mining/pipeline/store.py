"""Checkpoints of the mining pipeline: one directory per stage, one shard per batch, atomic writes.

Layout under ``OUT/work/``::

    01-sessions/_KEY                 the stage key (hash of its settings and of the upstream stage's key)
    01-sessions/part-000003.parquet  batch 3 of the stage's output
    01-sessions/part-000003._DONE    JSON {"key", "counts"}: written after the shard, so a shard counts as
                                     finished only once its marker exists
    01-sessions/_DONE                JSON {"key", "batches", "counts"}: the whole stage is finished

A stage that passes conversations on unchanged (the gate, the prefilter, the signal stage) stores no session
text: a ``kept`` flag in its place (`StageDir.session_from`), the text being the same as in the stage it came
from, which each shard's marker names; readers join it back (`StageDir.read_input`, `read_with_sessions`). The
text is written once per batch instead of four times.

Every file is written to a temporary name in the same directory and renamed into place (``os.replace``
is atomic on POSIX), so a killed run leaves whole shards or none. A stage whose settings changed gets a
new key; `StageDir.prepare` then clears it, and since every key includes the upstream key, every later
stage is cleared as well.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from uxbench.data import user_files
from uxbench.errors import DataError
from uxbench.fileio import atomic_write_bytes, remove_stale_temps, temp_path

KEY_FILE = "_KEY"
DONE_FILE = "_DONE"
PARQUET_COMPRESSION = "zstd"
"""Compression of the output tables (signals.parquet): small files to keep and share."""
WORK_COMPRESSION = "lz4"
"""Compression of the checkpoint shards under OUT/work: written once per stage and batch (the session text in
four of them), read back by the driver. LZ4, without dictionary pages (the columns are mostly unique text),
writes and reads them in about half zstd's CPU time, for files about 1.4x larger."""


def stage_key(name: str, settings: Any, upstream: str | None = None) -> str:
    """Stable hash of a stage's name, settings (JSON-able) and the key of the stage it reads."""
    payload = orjson.dumps([name, settings, upstream], option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(payload).hexdigest()[:24]


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_bytes(path, orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n")


def write_table(path: Path, table: pa.Table) -> None:
    """Parquet, atomically. One chunk per column first, so equal tables give byte-identical files
    whatever chunking the engine that built them used."""
    tmp = temp_path(path)
    pq.write_table(table.combine_chunks(), tmp, compression=WORK_COMPRESSION, use_dictionary=False)
    os.replace(tmp, path)


def read_shard(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """A shard (or the named columns of it). ``pq.read_table`` would go through pyarrow.dataset, whose first
    import costs about 0.3 s of CPU on the driver, in the serial part of a run; one file needs none of it."""
    with pq.ParquetFile(path) as shard:
        return shard.read(columns=None if columns is None else list(columns))


def read_json(path: Path) -> Any:
    return user_files.parse_json(user_files.read_bytes(path), str(path))


def sum_counts(items: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Key-wise sum of count dicts, keys sorted."""
    total: dict[str, int] = {}
    for counts in items:
        for key, value in counts.items():
            total[key] = total.get(key, 0) + int(value)
    return dict(sorted(total.items()))


def without_session(table: pa.Table) -> pa.Table:
    """The ``session`` column replaced, in its place, by ``kept``: whether the row had a session."""
    position = table.schema.get_field_index("session")
    return table.set_column(position, pa.field("kept", pa.bool_(), nullable=False), pc.is_valid(table["session"]))


def with_session(table: pa.Table, sessions: pa.Table, where: str) -> pa.Table:
    """`without_session` undone: ``kept`` replaced, in its place, by the session text of the same conversation in
    ``sessions`` (columns conversation_id, session), null where not kept. ``where`` names the shards in an error."""
    found = pc.index_in(table["conversation_id"], value_set=sessions["conversation_id"])
    kept = table["kept"]
    if pc.any(pc.and_(kept, pc.is_null(found))).as_py():
        raise DataError(f"{where}: a kept conversation has no session in the stage it came from; the work "
                        "directory is damaged: rerun with --fresh")
    text = pc.if_else(kept, sessions["session"].take(found), pa.scalar(None, pa.string()))
    return table.set_column(table.schema.get_field_index("kept"), pa.field("session", pa.string()), text)


def read_with_sessions(shard: Path, columns: Sequence[str]) -> pa.Table:
    """``columns`` of one shard of a mining output, with the session text also for a stage that stores ``kept``
    in its place: joined from the shard of the same batch of the stage its marker names (``session_from``). For
    readers of a finished output (training a judge, simulated users, the audit), which have no `StageDir`."""
    if "session" not in columns or "session" in pq.read_schema(shard).names:
        return read_shard(shard, columns)
    work, batch = shard.parent.parent, int(shard.name.split(".", 1)[0].removeprefix("part-"))
    marker = StageDir(work, shard.parent.name, "").marker_path(batch)
    source = read_json(marker).get("session_from") if marker.is_file() else None
    if not isinstance(source, str) or "/" in source or source.startswith("."):
        raise DataError(f"{shard} holds no session text and its marker ({marker.name}) names no stage that does: "
                        "the work directory is incomplete or damaged; rerun `uxbench mine run` with --fresh")
    stage = StageDir(work, shard.parent.name, "", session_from=StageDir(work, source, ""))
    return stage.read_input(batch, columns)


class StageDir:
    """The checkpoint directory of one stage."""

    def __init__(self, work: Path, name: str, key: str, ext: str = "parquet",
                 session_from: StageDir | None = None) -> None:
        self.name = name
        self.key = key
        self.ext = ext
        self.path = work / name
        self.session_from = session_from
        """When set, this stage's shards hold ``kept`` instead of the session text, which that stage holds."""

    def prepare(self) -> bool:
        """Create the directory, clearing it first when it holds another key's output or leftovers of an
        interrupted write. True when earlier work was kept (the run resumes this stage)."""
        key_path = self.path / KEY_FILE
        kept = key_path.exists() and key_path.read_text("utf-8").strip() == self.key
        if not kept and self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(self.path)
        if not kept:
            atomic_write_bytes(key_path, self.key.encode("utf-8") + b"\n")
        return kept and any(self.path.glob(f"part-*.{DONE_FILE}"))

    def shard_path(self, batch: int) -> Path:
        return self.path / f"part-{batch:06d}.{self.ext}"

    def marker_path(self, batch: int) -> Path:
        return self.path / f"part-{batch:06d}.{DONE_FILE}"

    def shard_done(self, batch: int) -> bool:
        marker = self.marker_path(batch)
        return marker.exists() and read_json(marker).get("key") == self.key

    def pending(self, n_batches: int) -> list[int]:
        return [b for b in range(n_batches) if not self.shard_done(b)]

    def mark_shard(self, batch: int, counts: Mapping[str, int]) -> None:
        marker: dict[str, Any] = {"key": self.key, "counts": dict(counts)}
        if self.session_from is not None:  # where a reader of the finished output finds the text
            marker["session_from"] = self.session_from.path.name
        atomic_write_json(self.marker_path(batch), marker)

    def shard_counts(self, batch: int) -> dict[str, int]:
        counts: dict[str, int] = read_json(self.marker_path(batch))["counts"]
        return counts

    def commit_table(self, batch: int, table: pa.Table, counts: Mapping[str, int]) -> None:
        if self.session_from is not None and "session" in table.column_names:
            table = without_session(table)
        write_table(self.shard_path(batch), table)
        self.mark_shard(batch, counts)

    def read_input(self, batch: int, columns: Sequence[str] | None = None) -> pa.Table:
        """A shard as the next stage reads it (all columns, or ``columns`` in that order): with the session text,
        joined from `session_from` for a stage that stores ``kept`` in its place."""
        if self.session_from is None or (columns is not None and "session" not in columns):
            return read_shard(self.shard_path(batch), columns)
        wanted = None if columns is None else ["kept" if c == "session" else c for c in columns]
        if wanted is not None and "conversation_id" not in wanted:
            wanted.append("conversation_id")
        table = read_shard(self.shard_path(batch), wanted)
        sessions = self.session_from.read_input(batch, ["conversation_id", "session"])
        table = with_session(table, sessions, f"{self.path.name} batch {batch}")
        return table if columns is None else table.select(list(columns))

    def done(self) -> dict[str, Any] | None:
        """The stage marker when the stage finished under the current key."""
        marker = self.path / DONE_FILE
        if not marker.exists():
            return None
        info: dict[str, Any] = read_json(marker)
        return info if info.get("key") == self.key else None

    def finish(self, n_batches: int, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Write the stage marker: the batch count and the sum of the shards' counts (plus ``extra``)."""
        counts = sum_counts(self.shard_counts(b) for b in range(n_batches))
        info = {"key": self.key, "batches": n_batches, "counts": counts, **(extra or {})}
        atomic_write_json(self.path / DONE_FILE, info)
        return info

    def shards(self, n_batches: int) -> list[Path]:
        return [self.shard_path(b) for b in range(n_batches)]
