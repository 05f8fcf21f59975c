"""Engines that run a map stage over the pending batches of the previous stage's shards.

`LocalEngine` (the default): the batches in one process, or spread over a pool of worker processes
(``forkserver`` or ``spawn``, never ``fork``: the parent may hold threads, e.g. an HTTP client, that ``fork``
would copy half-way; `uxbench.mining.workers`). Each
worker reads its input shard, applies the stage function and commits the output shard itself. With the
local engine, the map stages that follow de-identification ride along in its job (`MapLink`): a batch goes
through all of them while the driver is still reading and grouping the logs, each stage's shard committed
as it is made, so a resumed run finds the same checkpoints as from separate passes.
`RayEngine` (``ray_engine``) runs the same stage functions in Ray Data. Both end in `commit_batch`, which
puts a batch's rows in canonical order and casts them to the stage schema, so their shards are
byte-identical.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

import pyarrow as pa

from uxbench.mining.pipeline.stages import StageFn, deid_batch_table, sessions_remembered, sum_count_column
from uxbench.mining.pipeline.store import StageDir
from uxbench.mining.sessions import session_of_lines
from uxbench.mining.types import Session
from uxbench.mining.workers import tune_gc, worker_context


class Engine(Protocol):
    name: str

    def run_map(self, fn: StageFn, src: StageDir, dst: StageDir, batches: Sequence[int],
                columns: Sequence[str], schema: pa.Schema) -> None: ...

    def close(self) -> None: ...


def canonical(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The stage's rows sorted by conversation_id, with exactly the stage's schema and no metadata."""
    table = table.select(schema.names).cast(schema).replace_schema_metadata(None)
    if table.num_rows > 1:
        ids = table.column("conversation_id").to_pylist()
        if any(a > b for a, b in pairwise(ids)):  # the stages keep their input's order: usually sorted already
            table = table.sort_by([("conversation_id", "ascending")])
    return table


def commit_batch(dst: StageDir, batch: int, table: pa.Table, schema: pa.Schema) -> dict[str, int]:
    """Write one output shard and its marker; returns the shard's counts."""
    table = canonical(table, schema)
    counts = sum_count_column(table)
    dst.commit_table(batch, table, counts)
    return counts


def map_shard(fn: StageFn, src: StageDir, dst: StageDir, batch: int, columns: Sequence[str],
              schema: pa.Schema) -> dict[str, int]:
    """One batch of a map stage: read, apply, commit (runs in a worker process or in-line)."""
    return commit_batch(dst, batch, fn(src.read_input(batch, columns)), schema)


@dataclass(frozen=True)
class MapLink:
    """A map stage run on a batch in the job that made its input (bound function, checkpoint, I/O)."""

    fn: StageFn
    dst: StageDir
    columns: tuple[str, ...]
    schema: pa.Schema


def _build_sessions(conversations: Sequence[tuple[str, Sequence[bytes]]]) -> list[Session]:
    return [session_of_lines(conversation_id, lines) for conversation_id, lines in conversations]


def deid_shard(dst: StageDir, batch: int, conversations: Sequence[tuple[str, Sequence[bytes]]], salt: bytes,
               chain: Sequence[MapLink] = ()) -> dict[str, int]:
    """One batch of the de-identification stage: each conversation's session built from its turns' bucket lines
    (raw text arrives through a pipe, never a file), de-identified, then each stage in ``chain`` run on the
    output; returns the de-identification shard's counts."""
    sessions = _build_sessions(conversations)
    with sessions_remembered():  # each stage of the chain gets the sessions that de-identification made
        table = deid_batch_table(batch, sessions, salt)
        counts = sum_count_column(table)
        dst.commit_table(batch, table, counts)
        for position, link in enumerate(chain):
            if not link.dst.shard_done(batch):
                table = canonical(link.fn(table.select(list(link.columns))), link.schema)
                link.dst.commit_table(batch, table, sum_count_column(table))
            elif all(later.dst.shard_done(batch) for later in chain[position + 1:]):
                break
            else:  # done by an earlier run under the same key: the next stage reads it
                table = link.dst.read_input(batch)
    return counts


class LocalEngine:
    """In-process engine: a pool of ``workers`` processes, or in-line work when ``workers`` is 1."""

    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: ProcessPoolExecutor | None = None
        self._inflight: deque[tuple[Future[dict[str, int]], Callable[[], None] | None]] = deque()

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=worker_context(), initializer=tune_gc)
        return self._pool

    def submit(self, parallel: bool, job: Callable[..., dict[str, int]], *args: Any,
               then: Callable[[], None] | None = None) -> None:
        """Run ``job(*args)`` now (in-line) or in the pool, with at most 2 x workers jobs queued; ``then`` is called
        on this (the driver's) thread once the job has finished, while later jobs may still run."""
        if not parallel or self.workers == 1:
            job(*args)
            if then is not None:
                then()
            return
        while len(self._inflight) >= 2 * self.workers:
            self._finish_oldest()
        self._inflight.append((self._executor().submit(job, *args), then))

    def _finish_oldest(self) -> None:
        future, then = self._inflight.popleft()
        future.result()
        if then is not None:
            then()

    def map_ordered(self, jobs: Iterable[tuple[Any, ...]]) -> Iterator[Any]:
        """``job(*args)`` for each ``(job, *args)``, results in order; at most 2 x workers jobs in flight
        (in-line when ``workers`` is 1). Jobs not yet taken are cancelled if the caller stops early."""
        if self.workers == 1:
            for job, *args in jobs:
                yield job(*args)
            return
        pending: deque[Future[Any]] = deque()
        try:
            for job, *args in jobs:
                pending.append(self._executor().submit(job, *args))
                if len(pending) >= 2 * self.workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()

    def drain(self) -> None:
        """Wait for every submitted job; the first failure is raised (after the others finished)."""
        error: BaseException | None = None
        while self._inflight:
            try:
                if error is None:
                    self._finish_oldest()
                else:  # after a failure: wait for the others, their follow-up work is not done
                    self._inflight.popleft()[0].result()
            except BaseException as exc:  # keep waiting, so no job writes after we return
                error = error or exc
        if error is not None:
            raise error

    def run_map(self, fn: StageFn, src: StageDir, dst: StageDir, batches: Sequence[int],
                columns: Sequence[str], schema: pa.Schema) -> None:
        parallel = len(batches) > 1
        for batch in batches:
            self.submit(parallel, map_shard, fn, src, dst, batch, columns, schema)
        self.drain()

    def close(self) -> None:
        self._inflight.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
