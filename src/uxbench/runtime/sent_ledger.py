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
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson

from uxbench.runtime.batched_writes import BatchedWrites

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no other process's ledger is ever folded, only read
    fcntl = None  # type: ignore[assignment]

PATTERN = "sent-*.ledger"
FOLDED_SCHEMA = "CREATE TABLE IF NOT EXISTS folded_ledgers (name TEXT PRIMARY KEY);"
"""The ledgers whose counts the `sent` table holds (part of each store's schema)."""


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
    """The sent-request counts of one store: `count` before each request, `counts` to read, `fold` at close.
    `add_sql` adds its last parameter to a party's count in the `sent` table; `folded` returns the names in
    `folded_ledgers` (read through the store's connection, its writes committed)."""

    def __init__(self, directory: Path, writes: BatchedWrites, add_sql: str,
                 folded: Callable[[], set[str]]) -> None:
        self._directory = directory
        self._writes = writes
        self._add_sql = add_sql
        self._folded = folded
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

    def counts(self, table: dict[str, int]) -> dict[str, int]:
        """`table` (the `sent` table's counts) plus the ledgers not yet folded into it."""
        total = Counter(table)
        folded = self._folded()
        for path in sorted(self._directory.glob(PATTERN)):
            if path.name not in folded:
                total.update(ledger_counts(path))
        return dict(total)

    def fold(self) -> None:
        """Add this process's ledger, and those of dead processes, to the table; remove them once committed. Only
        a process that sent requests folds (a command that only reads a run never writes to it)."""
        if self._fd is None:
            return
        folded = self._folded()
        mine: list[tuple[Path, int | None]] = []
        for path in sorted(self._directory.glob(PATTERN)):
            if path == self._path:
                mine.append((path, self._fd))
            elif (lock := _dead_owner(path)) is not None:
                if path.name in folded:  # folded by a process killed before it removed the file
                    path.unlink(missing_ok=True)
                    os.close(lock)
                else:
                    mine.append((path, lock))
        for path, _ in mine:
            for party, n in sorted(ledger_counts(path).items()):
                self._writes.add(self._add_sql, (party,), n)
            self._writes.write("INSERT OR IGNORE INTO folded_ledgers(name) VALUES (?)", (path.name,))
        self._writes.flush()
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
    return fd
