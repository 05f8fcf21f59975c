"""Writes to a SQLite file made while an event loop runs, committed together once per turn of the loop.

A run at concurrency 64 finishes several samples in each turn of its event loop, and each finished sample wrote
two or three rows (the response cache, the record, the count of requests sent), each its own transaction: a
commit is several system calls (the WAL frame, the shared-memory index, its locks), and together they were about a
third of the harness's own time per request (bench/throughput.py). Here the rows a turn writes are kept in order
and written in one transaction by a callback the loop runs next (`loop.call_soon`), before it waits for anything
new: a record is on disk a turn after its sample finished, and a kill in that gap loses only samples that are then
redone (records are keyed, so none is ever duplicated).

The rows are held in memory rather than in an open transaction, so the file's write lock is held only while they
are written: another connection to the same file (another run, another process, a second store in this one)
never waits on a transaction this thread would commit only later. Without a running loop (a command's
synchronous code) every write commits at once, as before.

A writer whose rows are copies that may be lost (the response cache) can hold them longer (`hold_s`): they are then
committed together at most that many seconds after the first of them, or as soon as `max_rows` wait. At a
concurrency of 64 a turn holds two or three rows, and every commit rewrites whole pages of the file (the B-tree
leaves of random keys, the WAL's header): one commit of a hundred rows costs far less than forty of three. The
owner must `flush` (or close) before its event loop ends, since a commit still held then never runs.

A failure of the deferred commit cannot be raised where the rows were added, so it is kept and raised by the next
write, read or `flush` of the same owner (the stores flush when they close); the rows it held are lost, as they
would have been had the commit failed at once.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

from uxbench.runtime.wal_checkpoint import BackgroundCheckpoints

Params = tuple[Any, ...]


class BatchedWrites:
    """Write statements for one SQLite connection, committed together at the end of the loop's turn."""

    def __init__(self, connect: Callable[[], sqlite3.Connection],
                 on_commit: Callable[[], None] | None = None, *, hold_s: float = 0.0, max_rows: int = 256,
                 checkpoints: BackgroundCheckpoints | None = None) -> None:
        """`connect` gives the connection; `on_commit` is called once the waiting rows are written (or lost to a
        failed commit), for an owner that keeps its own index of them. `hold_s` > 0: rows wait up to that many
        seconds (or until `max_rows` wait) instead of the end of the turn, for rows a kill may lose.
        `checkpoints`: the file's WAL checkpoints, told of every commit made here (`runtime/wal_checkpoint.py`)."""
        self._connect = connect
        self._checkpoints = checkpoints
        self._on_commit = on_commit
        self._hold_s = hold_s
        self._max_rows = max(1, max_rows)
        self._timer: asyncio.TimerHandle | None = None
        self._rows: list[tuple[str, Params]] = []
        self._counts: dict[tuple[str, Params], int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop whose next turn commits what is waiting (None: nothing is scheduled)."""
        self._failure: sqlite3.Error | None = None

    @property
    def pending(self) -> bool:
        return bool(self._rows or self._counts)

    def write(self, sql: str, params: Params) -> None:
        """Run `sql` now when no event loop runs in this thread, else with this turn's other writes."""
        self.raise_failure()
        if not self._defer():
            self._now(sql, params)
            return
        self._rows.append((sql, params))
        if self._hold_s and len(self._rows) >= self._max_rows:
            self._commit()  # enough held: now, in this turn (a failure is raised to the writer)

    def add(self, sql: str, params: Params, n: int = 1) -> None:
        """Run `sql` with `(*params, total)`, where total is the sum of the `n`s added with these params in this
        turn: a counter's increments become one statement (`... SET requests = requests + ?`)."""
        self.raise_failure()
        if not self._defer():
            self._now(sql, (*params, n))
            return
        key = (sql, params)
        self._counts[key] = self._counts.get(key, 0) + n

    def _now(self, sql: str, params: Params) -> None:
        db = self._connect()
        db.execute(sql, params)  # autocommit
        if self._checkpoints is not None:
            self._checkpoints.after_commit(db)

    def flush(self) -> None:
        """Write what is waiting now, in one transaction; raise a failure of an earlier deferred commit."""
        self.raise_failure()
        self._commit()

    def raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def _defer(self) -> bool:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None and loop is self._loop:
            return True
        if self.pending:  # rows of a loop that stopped before its next turn: written before anything newer
            self._commit()
        if loop is None:
            return False
        if self._hold_s:
            self._timer = loop.call_later(self._hold_s, self._deferred_commit)
        else:
            loop.call_soon(self._deferred_commit)
        self._loop = loop
        return True

    def _deferred_commit(self) -> None:
        try:
            self._commit()
        except sqlite3.Error as err:  # the loop would only log it: kept for the owner's next call
            self._failure = err

    def _commit(self) -> None:
        self._loop = None
        if self._timer is not None:
            self._timer.cancel()  # committed before the timer: it has nothing left to do
            self._timer = None
        if not self._rows and not self._counts:
            return
        rows, counts = self._rows, self._counts
        self._rows, self._counts = [], {}
        if self._on_commit is not None:
            self._on_commit()
        db = self._connect()
        db.execute("BEGIN")
        try:
            for sql, params in rows:
                db.execute(sql, params)
            for (sql, params), n in counts.items():
                db.execute(sql, (*params, n))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # a failed COMMIT (a lock held too long, a full disk) leaves it open
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
        if self._checkpoints is not None:
            self._checkpoints.after_commit(db)

