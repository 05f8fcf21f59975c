"""The two stages that are not maps over independent batches, run by the driver.

01-sessions: read the logs as a stream, group turns into conversations through hash buckets on disk
(`sessions.BucketWriter`, in a private temporary directory next to the output directory, deleted as
soon as it is used; in memory for an input of up to `MEMORY_BUCKETS` buckets, in the same order), cut the
conversations into batches of ``batch_size`` in that deterministic order, sort each batch by conversation_id
and de-identify it (in the worker pool) before anything is written.
The worker pool does the per-row work on both sides of the buckets: JSON Lines are parsed into turns in
blocks of whole lines (`_parse_block`, results taken in input order, so the buckets are written as a serial read
writes them), and a batch's sessions are built from their bucket lines in the job that de-identifies them;
the driver only moves bytes and groups lines by conversation id. The raw text reaches the workers through
pipes, never through a file under the output directory. A rerun reads and groups the logs again (the
buckets are gone) but skips the batches already written.

05-dedup: one MinHash LSH index over all conversations in batch order (the index is state: it cannot be
split), one shard per batch. A rerun replays the finished batches into the index without rewriting them.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pyarrow as pa

from uxbench.data.readers import block_lines, decode_jsonl_line, iter_parquet, jsonl_blocks
from uxbench.errors import DataError
from uxbench.mining.dedup import DedupConfig, NearDuplicateIndex
from uxbench.mining.ingest import (
    IngestReport,
    RowTally,
    batched,
    expand_paths,
    is_parquet,
    lines_of_row,
    nothing_read,
    row_items,
)
from uxbench.mining.logformat import check_format
from uxbench.mining.pipeline.engine import LocalEngine, MapLink, commit_batch, deid_shard
from uxbench.mining.pipeline.stages import DEDUP_SCHEMA
from uxbench.mining.pipeline.store import StageDir, read_shard
from uxbench.mining.sessions import BucketWriter, MemoryBuckets, grouped_lines, private_spill_dir

Progress = Callable[[str], None]
BUCKET_BYTES = 32 << 20
"""Raw input bytes per grouping bucket (a bucket is held in memory while it is grouped)."""
MAX_BUCKETS = 4096
MEMORY_BUCKETS = 4
"""Inputs of up to this many buckets (128 MiB of raw text) are grouped in memory (`sessions.MemoryBuckets`, the
same order): no bucket file to write, read back and parse the ids of again."""
_FINGERPRINT_BYTES = 1 << 20


def input_fingerprints(paths: list[str] | tuple[str, ...]) -> list[dict[str, Any]]:
    """Per input file: resolved path, size and a hash of its first and last MiB (cheap on huge logs;
    a rewrite that keeps size, head and tail is not noticed)."""
    out = []
    for path in expand_paths(paths):
        size = path.stat().st_size
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            digest.update(handle.read(_FINGERPRINT_BYTES))
            if size > _FINGERPRINT_BYTES:
                handle.seek(max(_FINGERPRINT_BYTES, size - _FINGERPRINT_BYTES))
                digest.update(handle.read())
        out.append({"path": str(path.resolve()), "bytes": size, "sha256_head_tail": digest.hexdigest()})
    return out


def bucket_count(fingerprints: list[dict[str, Any]]) -> int:
    """Grouping buckets for an input: about `BUCKET_BYTES` of raw text each (gzip counted as 5x)."""
    total = sum(int(f["bytes"]) * (5 if str(f["path"]).endswith(".gz") else 1) for f in fingerprints)
    return max(1, min(MAX_BUCKETS, -(-total // BUCKET_BYTES)))


CHUNK_LINES = 1000
"""Rows of a Parquet file parsed at a time."""
CHUNK_BYTES = 1 << 20
"""Bytes of a JSON Lines file per job of the worker pool (whole lines; about a thousand turns of a chat log): the
driver reads blocks and the workers split them into lines, so no line is a Python object in the driver."""


class _Chunk(NamedTuple):
    lines: list[tuple[str, bytes]]
    """(conversation id, bucket line) per turn, in input order."""
    report: IngestReport
    error: DataError | None
    """The row that stops the read (without skip_invalid); the chunk ends there."""


def _spill_rows(source: str, items: Iterable[tuple[int, Any]], fmt: str, skip_invalid: bool) -> _Chunk:
    """Decoded lines or rows of a file (a value, or the DataError of one that could not be decoded) -> the
    bucket lines of their turns (`sessions.spill_line`) and their counts."""
    report, tally = IngestReport(), RowTally()
    out: list[tuple[str, bytes]] = []
    error: DataError | None = None
    try:
        for line, value in items:
            for row in row_items(value):
                out.extend(lines_of_row(source, line, row, fmt, skip_invalid, report, tally))
    except DataError as err:
        error = err
    report.count(tally)
    return _Chunk(out, report, error)


def _parse_block(source: str, first_line: int, block: bytes, fmt: str, skip_invalid: bool) -> _Chunk:
    """A block of a JSON Lines file (`readers.jsonl_blocks`, a job of the worker pool) -> `_spill_rows`."""
    lines = block_lines(first_line, block)
    return _spill_rows(source, ((line, decode_jsonl_line(raw)) for line, raw in lines), fmt, skip_invalid)


def _file_chunks(path: Path, fmt: str, skip_invalid: bool, pool: LocalEngine) -> Iterator[_Chunk]:
    source = str(path)
    if is_parquet(path):  # decoded by pyarrow here, on the driver
        for rows in batched(iter_parquet(path), CHUNK_LINES):
            yield _spill_rows(source, rows, fmt, skip_invalid)
        return
    jobs = ((_parse_block, source, first, block, fmt, skip_invalid) for first, block in jsonl_blocks(path, CHUNK_BYTES))
    yield from pool.map_ordered(jobs)


def spill_inputs(inputs: tuple[str, ...], fmt: str, skip_invalid: bool, writer: BucketWriter | MemoryBuckets,
                 pool: LocalEngine) -> IngestReport:
    """Every turn of the logs into the buckets, in input order; the read's counts. Raises `DataError` for the
    first bad row (unless ``skip_invalid``) and for a read that gives no turn."""
    check_format(fmt)
    files = expand_paths(inputs)
    report = IngestReport(files=len(files))
    for path in files:
        for chunk in _file_chunks(path, fmt, skip_invalid, pool):
            for conversation_id, line in chunk.lines:
                writer.write(conversation_id, line)
            report.add(chunk.report)
            if chunk.error is not None:
                raise chunk.error
    if report.turns == 0:
        raise nothing_read(files, report)
    return report


def _grouped_batches(groups: Iterator[tuple[str, list[bytes]]], batch_size: int
                     ) -> Iterator[tuple[int, list[tuple[str, list[bytes]]]]]:
    """(batch, its conversations' bucket lines sorted by conversation id), in the deterministic order."""
    for batch, chunk in enumerate(batched(groups, batch_size)):
        chunk.sort(key=lambda conversation: conversation[0])
        yield batch, chunk


def largest_first(batches: Iterable[tuple[int, list[tuple[str, list[bytes]]]]]
                  ) -> list[tuple[int, list[tuple[str, list[bytes]]]]]:
    """The batches in the order their work is likely to shrink: by bytes of bucket lines, largest first (equal
    sizes in batch order). A pool then ends on its smallest jobs: the last batch in batch order may be the
    largest, and in that order one worker would be left with it while the others wait (the work of a batch grows
    with its text). Only the order jobs are handed out changes: each batch keeps its number and its shards."""
    return sorted(batches, key=lambda item: -sum(sum(map(len, lines)) for _, lines in item[1]))


def _first_conversion() -> None:
    """pyarrow imports pandas (when it is installed) on a process's first conversion of Python values, about 0.3 s
    of CPU. The driver's first one would come in the dedup step, after every worker has finished, in the serial
    tail of the run; made here, while the driver only waits for the workers, it overlaps their work."""
    pa.array([0])


def run_sessions_stage(
    stage: StageDir, inputs: tuple[str, ...], *, fmt: str, skip_invalid: bool, batch_size: int,
    n_buckets: int, salt: bytes, tmpdir: Path, pool: LocalEngine, progress: Progress,
    chain: Sequence[MapLink] = (), then: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Stage 01; returns its marker (batches, counts, ingest report). The stages in ``chain`` run on each new
    batch in the same job (`engine.deid_shard`); ``then(batch)`` is called on the driver as each batch's job has
    finished (any order; not for a batch an earlier run finished, whose later stages may still be missing)."""
    shutil.rmtree(tmpdir, ignore_errors=True)  # buckets of a killed run: raw text, delete first
    tmpdir.mkdir(mode=0o700, parents=True)
    n_batches = skipped = 0
    try:
        writer: BucketWriter | MemoryBuckets
        if n_buckets <= MEMORY_BUCKETS:
            writer = MemoryBuckets(n_buckets)
        else:
            writer = BucketWriter(private_spill_dir(tmpdir), n_buckets)
        try:
            report = spill_inputs(inputs, fmt, skip_invalid, writer, pool)
        finally:
            writer.close()
        batches: Iterable[tuple[int, list[tuple[str, list[bytes]]]]]
        if isinstance(writer, MemoryBuckets):  # the whole input is in memory already: hand out the largest first
            batches = largest_first(_grouped_batches(writer.grouped(), batch_size))
        else:  # streamed bucket by bucket: in batch order
            batches = _grouped_batches(grouped_lines(writer.spill, n_buckets), batch_size)
        for batch, chunk in batches:
            n_batches = max(n_batches, batch + 1)
            if stage.shard_done(batch):
                skipped += 1
                continue
            pool.submit(True, deid_shard, stage, batch, chunk, salt, chain,
                        then=None if then is None else partial(then, batch))
        if pool.workers > 1:
            _first_conversion()
        pool.drain()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    progress(f"{stage.name}: {n_batches} batches ({skipped} already done), "
             f"{report.turns} turns from {report.rows} rows in {report.files} files")
    ingest = report.model_dump(mode="json")
    return stage.finish(n_batches, {"ingest": ingest})


class DedupRun:
    """Stage 05: one near-duplicate index over the signal stage's shards, fed in batch order (`add`). A batch
    whose shard an earlier run wrote is replayed into the index, not written again. With the local engine the
    driver feeds it each batch as the job that made its signal shard finishes (`follow`), while the workers go on
    with later batches, instead of all of them after the last one: the index is serial, the driver idle then."""

    def __init__(self, stage: StageDir, src: StageDir, config: DedupConfig,
                 after: Callable[[int], None] | None = None) -> None:
        self.stage, self.src = stage, src
        self.after = after
        """Called with each batch as it is indexed, in batch order (`outputs.OutputStream.add`)."""
        self.index = NearDuplicateIndex(config)
        self.next = 0
        self.written = 0
        self._ready: set[int] = set()

    def follow(self, batch: int) -> None:
        """Batch ``batch``'s signal shard is committed: index every batch from `next` on that is (any order)."""
        self._ready.add(batch)
        while self.next in self._ready:
            self._ready.discard(self.next)
            self.add(self.next)

    def add(self, batch: int) -> None:
        """Index batch ``next`` (which must be ``batch``) and write its shard unless an earlier run did."""
        assert batch == self.next, "batches are indexed in order"
        table = read_shard(self.src.shard_path(batch), ["conversation_id", "dedup_minhash"])
        done = self.stage.shard_done(batch)
        rows = []
        for cid, values in zip(table.column("conversation_id").to_pylist(),
                               table.column("dedup_minhash").to_pylist(), strict=True):
            rep = self.index.add_signature(cid, values)
            counts = {"checked": 1, "duplicates": int(rep is not None), "kept": int(rep is None)}
            rows.append({"batch": batch, "conversation_id": cid, "duplicate_of": rep,
                         "counts": orjson.dumps(counts, option=orjson.OPT_SORT_KEYS).decode()})
        if not done:
            commit_batch(self.stage, batch, pa.Table.from_pylist(rows, schema=DEDUP_SCHEMA), DEDUP_SCHEMA)
            self.written += 1
        self.next += 1
        if self.after is not None:
            self.after(batch)

    def finish(self, n_batches: int, progress: Progress) -> dict[str, Any]:
        """Index the batches not fed yet, then write the stage marker."""
        while self.next < n_batches:
            self.add(self.next)
        progress(f"{self.stage.name}: {n_batches} batches ({n_batches - self.written} already done)")
        return self.stage.finish(n_batches)


def run_dedup_stage(stage: StageDir, src: StageDir, n_batches: int, config: DedupConfig,
                    progress: Progress, run: DedupRun | None = None) -> dict[str, Any]:
    """Stage 05 over the signal stage's shards, in batch order (continuing ``run``, fed while stage 01 ran)."""
    return (run or DedupRun(stage, src, config)).finish(n_batches, progress)
