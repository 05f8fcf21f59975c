"""File writes shared by run directories, the response cache and the mining pipeline.

Atomic: a file is written under a temporary name in its own directory, flushed to disk, then renamed over
the target: a crash or kill leaves either the old file or the new one, never half of one.

Private: every file a run or a mining run writes is created with FILE_MODE (0600, owner only), whatever
the umask: outputs hold conversations, model answers and error texts. Writers that take a path (Parquet,
CSV) get a temporary file created 0600 by `temp_path`; SQLite files are created 0600 by `connect_sqlite`
before SQLite opens them (SQLite gives its -wal and -shm files the mode of the database file).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from uxbench.errors import DataError

FILE_MODE = 0o600
"""Mode of every file uxbench writes: read and write for the owner only."""
TEMP_GLOB = ".*.tmp-*"
"""Names of in-progress temporary files; a killed writer can leave one behind (see remove_stale_temps)."""


def temp_path(path: Path) -> Path:
    """A temporary file next to `path` (matching TEMP_GLOB), created empty with FILE_MODE, for writers that
    need a path, not a file descriptor (Parquet and CSV writers, which keep the mode when they truncate
    it); rename it over `path` when done."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    create_private(tmp)
    return tmp


def make_private(path: Path) -> None:
    """Give an existing file FILE_MODE (left alone when it belongs to another user)."""
    try:
        if path.stat().st_mode & 0o777 != FILE_MODE:
            path.chmod(FILE_MODE)
    except PermissionError:
        pass


def create_private(path: Path) -> Path:
    """Create `path` (empty) with FILE_MODE unless it exists; an existing one is made private too."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    make_private(path)
    return path


_SQLITE_MAGIC = b"SQLite format 3\x00"


def sqlite_problem(path: Path) -> str | None:
    """Why an existing, non-empty file cannot be a whole SQLite database (None when its header is sound): not
    one at all, or cut short of the pages its header counts (a copy or a disk that stopped half way). Reads
    only the 100-byte header, so it costs nothing however large the database is."""
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    if not header:
        return None  # empty: SQLite makes it a new database
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        return "not a SQLite database" if not header.startswith(_SQLITE_MAGIC[: len(header)]) else "cut short"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid_for, changes = header[92:96], header[24:28]
    if pages and valid_for == changes and size < pages * page_size:
        return f"cut short: {size:,} bytes of the {pages * page_size:,} its header counts"
    return None


def sqlite_damaged(path: Path, reason: str, fix: str) -> DataError:
    """The error for a SQLite file that cannot be read: what it is, why, and what to do."""
    return DataError(f"{path} is damaged ({reason}). {fix}")


def is_damage(exc: sqlite3.Error) -> bool:
    """A SQLite error that says the file itself is broken (not a lock or a full disk)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and any(
        word in text for word in ("not a database", "malformed", "corrupt", "file is encrypted"))


def connect_sqlite(path: Path, *, timeout: float, fix: str | None = None) -> sqlite3.Connection:
    """An autocommit connection to the SQLite file `path`, which is created private (with its -wal and -shm
    files, which SQLite creates with the database file's mode; older ones are tightened). With `fix` (what
    the user can do about it), a file that is not a sound SQLite database is refused with a `DataError`."""
    if fix is not None and (problem := sqlite_problem(path)) is not None:
        raise sqlite_damaged(path, problem, fix)
    create_private(path)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            make_private(side)
    return sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)


def _temp_for(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")


def remove_stale_temps(directory: Path) -> int:
    """Delete temporary files left in `directory` by a writer that was killed mid-write. Call it only when
    no other process writes there (at the start of a run or stage). Returns how many were removed."""
    removed = 0
    for stale in directory.glob(TEMP_GLOB):
        if stale.is_file():
            stale.unlink(missing_ok=True)
            removed += 1
    return removed


def atomic_write_lines(path: Path, lines: Iterable[bytes]) -> None:
    """Write `lines` (each without its newline) to `path` atomically."""

    def write(fh: BinaryIO) -> None:
        for line in lines:
            fh.write(line)
            fh.write(b"\n")

    _atomic(path, write)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically."""
    _atomic(path, lambda fh: fh.write(data))


def _atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    with atomic_writer(path) as fh:
        write(fh)


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A file to write `path` through: a temporary file beside it, put in place (synced) when the block ends
    without an error, removed when it raises. For a writer that produces the lines while it does something else."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_for(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
