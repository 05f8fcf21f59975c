"""Requests sent per party: one line appended to a private file before each request goes out, folded into the
store's `sent` table when the store closes.

A run counts every request it sends so that the requests in flight when it is killed are known to have been spent
(their answers are lost, their cost may not be). The count must be durable before the request leaves. A SQLite
commit per request cost ~85 us of the event loop's thread (0.5 s per 6,000 simulated replies, ~8% of the loop;
bench/RESULTS.md, issue 29's fifth round); one `write(2)` of a line to a file opened with O_APPEND costs a few
microseconds and, once it returns, survives the process being killed (the kernel holds the page).

Each store's process writes its own ledger, ``sent-<random>.ledger`` in the run directory, and holds an exclusive
`flock` on it while it lives. `SentLedger.counts` adds every ledger's lines that the table does not yet hold to the
table's counts: what other processes (``--procs``) are sending and what a killed process sent are seen at once. On
close, a ledger's counts are added to the table, and its name recorded as folded, in one transaction; only then is
the file removed (a crash between the two leaves a file that is skipped by name). The next close also folds the
ledgers of processes that died (their lock is free).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no other process's ledger is ever folded, only read
    fcntl = None  # type: ignore[assignment]

PATTERN = "sent-*.ledger"
FOLDED_SCHEMA = "CREATE TABLE IF NOT EXISTS folded_ledgers (name TEXT PRIMARY KEY);"
"""The ledgers whose counts the `sent` table holds (part of each store's schema)."""


def remove_ledgers(directory: Path) -> None:
    """Every ledger of a run directory that `--fresh` discards (under its lock: no process of the run is left)."""
    for path in directory.glob(PATTERN):
        path.unlink(missing_ok=True)


def ledger_counts(path: Path) -> Counter[str]:
    """Requests per party in one ledger (a line each: the party as a JSON string); unreadable lines are skipped."""
    counts: Counter[str] = Counter()
    try:
        data = path.read_bytes()
    except FileNotFoundError:  # folded and removed since it was listed
        return counts
    for line in data.splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            party = orjson.loads(line)
            if isinstance(party, str):
                counts[party] += 1
    return counts


class SentLedger:
    """The sent-request counts of one store: `count` before each request, `counts` to read, `fold` at close. The
    store's `sent` table is keyed by its column `key` (party, role); `connect` gives the store's connection with
    its waiting writes committed."""

    def __init__(self, directory: Path, connect: Callable[[], sqlite3.Connection], key: str) -> None:
        self._directory = directory
        self._connect = connect
        self._add_sql = (f"INSERT INTO sent({key}, requests) VALUES (?, ?) "
                         f"ON CONFLICT({key}) DO UPDATE SET requests = requests + excluded.requests")
        self._table_sql = f"SELECT {key}, requests FROM sent"
        self._fd: int | None = None
        self._path: Path | None = None
        self._lines: dict[str, bytes] = {}

    def count(self, party: str) -> None:
        """One more request by `party`: on disk when this returns."""
        line = self._lines.get(party)
        if line is None:
            line = self._lines[party] = orjson.dumps(party) + b"\n"
        os.write(self._fd if self._fd is not None else self._open(), line)

    def _open(self) -> int:
        self._directory.mkdir(parents=True, exist_ok=True)
        path = self._directory / f"sent-{secrets.token_hex(8)}.ledger"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held while this process lives: its ledger is not folded by another
        self._fd, self._path = fd, path
        return fd

    def counts(self) -> dict[str, int]:
        """The `sent` table's counts plus the ledgers not yet folded into it. The ledgers are read first, then the
        table and the folded names in one read transaction: a ledger folded (and removed) meanwhile by another
        process is counted once, from the table or from its file."""
        ledgers = {path.name: ledger_counts(path) for path in sorted(self._directory.glob(PATTERN))}
        table, folded = self._snapshot()
        total = Counter(table)
        for name, counts in ledgers.items():
            if name not in folded:
                total.update(counts)
        return dict(total)

    def _snapshot(self) -> tuple[dict[str, int], set[str]]:
        db = self._connect()
        db.execute("BEGIN")
        try:
            table = {str(k): int(n) for k, n in db.execute(self._table_sql)}
            folded = {str(row[0]) for row in db.execute("SELECT name FROM folded_ledgers")}
        finally:
            db.execute("COMMIT")
        return table, folded

    def fold(self) -> None:
        """Add this process's ledger, and those of dead processes, to the table; remove them once committed. Only
        a process that sent requests folds (a command that only reads a run never writes to it)."""
        if self._fd is None:
            return
        mine: list[tuple[Path, int | None]] = []
        dead: list[tuple[Path, int]] = []
        for path in sorted(self._directory.glob(PATTERN)):
            if path == self._path:
                mine.append((path, self._fd))
            elif (lock := _dead_owner(path)) is not None:
                dead.append((path, lock))
        _, folded = self._snapshot()  # read once the dead ledgers are locked: another process may have just folded one
        for path, lock in dead:
            if path.name in folded:  # folded by a process killed before it removed the file
                path.unlink(missing_ok=True)
                os.close(lock)
            else:
                mine.append((path, lock))
        db = self._connect()  # the store's waiting rows committed; then the counts and the names, together
        db.execute("BEGIN IMMEDIATE")
        try:
            for path, _ in mine:
                for party, n in sorted(ledger_counts(path).items()):
                    db.execute(self._add_sql, (party, n))
                db.execute("INSERT OR IGNORE INTO folded_ledgers(name) VALUES (?)", (path.name,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        for path, fd in mine:
            path.unlink(missing_ok=True)
            if fd is not None:
                os.close(fd)
        self._fd = self._path = None


def _dead_owner(path: Path) -> int | None:
    """A descriptor holding the lock of a ledger whose process is gone (its lock was free), else None."""
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    if not still_linked(fd, path):  # folded and removed by another process between the listing and the lock
        os.close(fd)
        return None
    return fd


def still_linked(fd: int, path: Path) -> bool:
    """Whether the open file `fd` is still the file at `path` (not removed, nor replaced, since it was opened)."""
    try:
        return os.fstat(fd).st_ino == path.stat().st_ino and os.fstat(fd).st_nlink > 0
    except FileNotFoundError:
        return False
