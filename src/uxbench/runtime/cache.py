"""A persistent response cache: SQLite, keyed on a content hash of the request.

Same request (provider identity + messages + generation settings) = same stored answer, so re-running a
benchmark, resuming it, or re-scoring with the same judge costs nothing. SQLite runs in WAL mode, which
lets several processes read and write one file at once. Calls run synchronously on the event-loop thread:
measured on the 2-core dev box, a lookup costs 8 us of CPU and an insert 25 us, against 58 us and 91 us when
handed to a one-thread executor (the hand-off costs more than the query). Inserts made in one turn of a running
event loop are committed together at its end (runtime/batched_writes.py); a lookup sees them before that.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from uxbench.errors import UxbenchError
from uxbench.fileio import connect_sqlite, sqlite_problem
from uxbench.runtime.batched_writes import BatchedWrites
from uxbench.runtime.wal_checkpoint import BackgroundCheckpoints

KEY_VERSION = 1
"""Bump when the key recipe changes, so old entries are simply never hit."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID
"""
_PUT = "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)"


class CacheError(UxbenchError):
    """The response cache file cannot be used."""


def request_key(identity: dict[str, Any], messages: list[dict[str, Any]], config: dict[str, Any]) -> str:
    """sha256 of canonical JSON (sorted keys) of everything that decides the output."""
    payload = orjson.dumps(
        (KEY_VERSION, identity, messages, config),
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )
    return hashlib.sha256(payload).hexdigest()


def default_cache_path() -> Path:
    """`$UXBENCH_CACHE_DIR/responses.sqlite`, else under `$XDG_CACHE_HOME/uxbench/` or `~/.cache/uxbench/`."""
    base = os.environ.get("UXBENCH_CACHE_DIR")
    if base:
        return Path(base).expanduser() / "responses.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return root / "uxbench" / "responses.sqlite"


def enable_wal(db: sqlite3.Connection, timeout_s: float) -> None:
    """Switch to WAL, waiting out another process that is creating or converting the same file.

    Changing the journal mode can answer "database is locked" at once, without SQLite's busy handler
    (two processes opening a new cache together), so retry it for up to `timeout_s`.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


class ResponseCache:
    """Key -> bytes store in one SQLite file. Use one instance per process; it is not thread-safe."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, busy_timeout_s: float = 30.0,
                 hold_s: float = 0.0) -> None:
        """`hold_s` > 0: inserts made while an event loop runs are committed together up to that many seconds
        later (runtime/batched_writes.py), not at the end of each turn; the owner then closes (or flushes) the
        cache before its loop ends. A kill loses the answers held, which only costs asking them again."""
        self.path = Path(path) if path is not None else default_cache_path()
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._waiting: dict[str, bytes] = {}
        """Values put in this turn of the event loop, not yet committed (a lookup finds them here)."""
        self._checkpoints = BackgroundCheckpoints(self.path)
        self._writes = BatchedWrites(self._conn, on_commit=self._waiting.clear, hold_s=hold_s,
                                     checkpoints=self._checkpoints)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"Cannot create the response cache directory {self.path.parent}: {exc}") from exc
        try:
            # isolation_level=None: autocommit, every INSERT is its own short transaction.
            if (problem := sqlite_problem(self.path)) is not None:
                raise sqlite3.DatabaseError(f"malformed: {problem}")
            self._db: sqlite3.Connection | None = connect_sqlite(self.path, timeout=busy_timeout_s)
            enable_wal(self._db, busy_timeout_s)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._checkpoints.adopt(self._db)  # not inside a commit on a run's event loop
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise self._wrap(exc, "open") from exc
        except OSError as exc:
            raise CacheError(f"Cannot open the response cache {self.path}: {exc}") from exc

    def _wrap(self, exc: sqlite3.Error, action: str) -> CacheError:
        text = str(exc)
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return CacheError(
                f"The response cache {self.path} is corrupt ({text}). It only holds copies of model "
                f"answers: delete the file (and any {self.path.name}-wal / -shm next to it) and run again, "
                f"or point UXBENCH_CACHE_DIR elsewhere."
            )
        if "locked" in text or "busy" in text:
            return CacheError(
                f"The response cache {self.path} stayed locked by another process ({text}) during {action}. "
                f"Retry, or give this run its own cache with UXBENCH_CACHE_DIR."
            )
        return CacheError(f"Response cache {self.path}: {action} failed: {text}")

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise CacheError(f"The response cache {self.path} is closed.")
        return self._db

    def get(self, key: str) -> bytes | None:
        try:
            self._writes.raise_failure()
            waiting = self._waiting.get(key)
            if waiting is not None:
                row: tuple[bytes] | None = (waiting,)
            else:
                row = self._conn().execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._wrap(exc, "read") from exc
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return bytes(row[0])

    def put(self, key: str, value: bytes | str) -> None:
        data = value.encode() if isinstance(value, str) else value
        try:
            self._writes.write(_PUT, (key, data, time.time()))
        except sqlite3.DatabaseError as exc:
            raise self._wrap(exc, "write") from exc
        if self._writes.pending:
            self._waiting[key] = data
        self.writes += 1

    def flush(self) -> None:
        """Commit the inserts that wait for the end of the event loop's turn."""
        try:
            self._writes.flush()
        except sqlite3.DatabaseError as exc:
            raise self._wrap(exc, "write") from exc

    def get_json(self, key: str) -> Any:
        raw = self.get(key)
        return None if raw is None else orjson.loads(raw)

    def put_json(self, key: str, value: Any) -> None:
        self.put(key, orjson.dumps(value))

    def __len__(self) -> int:
        self.flush()
        try:
            row = self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._wrap(exc, "count") from exc
        return int(row[0])

    def stats(self) -> dict[str, Any]:
        """Entries and file size, plus this instance's hits, misses and writes."""
        size = sum(
            p.stat().st_size
            for p in (self.path, self.path.with_name(self.path.name + "-wal"))
            if p.exists()
        )
        return {
            "path": str(self.path),
            "entries": len(self),
            "size_bytes": size,
            "hits": self.hits,
            "misses": self.misses,
            "writes": self.writes,
        }

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        self.flush()
        try:
            cur = self._conn().execute("DELETE FROM responses")
        except sqlite3.DatabaseError as exc:
            raise self._wrap(exc, "clear") from exc
        return cur.rowcount

    def close(self) -> None:
        """Commit what waits and close (a failed commit is raised, after closing)."""
        try:
            if self._db is not None:
                self.flush()
        finally:
            self._checkpoints.close()
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"
