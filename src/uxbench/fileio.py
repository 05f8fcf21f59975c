"""Atomic file writes shared by run directories and the mining pipeline.

A file is written under a temporary name in its own directory, flushed to disk, then renamed over the
target: a crash or kill leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

TEMP_GLOB = ".*.tmp-*"
"""Names of in-progress temporary files; a killed writer can leave one behind (see remove_stale_temps)."""


def temp_path(path: Path) -> Path:
    """A temporary name next to `path` (matching TEMP_GLOB) for writers that need a path, not a file
    descriptor (Parquet and CSV writers); rename it over `path` when done."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_for(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
