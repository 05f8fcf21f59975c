"""An exclusive lock on a working directory (a run directory, a mining output directory).

Two processes writing one directory would double the model calls and interleave their records, so the
second one must stop with a message naming the first. The lock is an advisory `flock` on
``DIR/.uxbench.lock``: the kernel drops it when the holding process exits, however it exits (a kill -9
included), so a killed run never leaves a stale lock behind. The file itself stays (removing it would let
a third process lock a new file while a second still waits on the old one); it holds the holder's pid,
host, start time and command as JSON, for the message a second process prints.

Within one process the lock is re-entrant: a command that holds it can call library code that takes it
again on the same directory.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError

LOCK_FILE = ".uxbench.lock"
"""The lock file's name inside the locked directory (hidden, so data scans and listings skip it)."""


class DirectoryBusyError(ConfigError):
    """Another process holds the directory's lock."""

    def __init__(self, directory: Path, holder: dict[str, Any]) -> None:
        self.directory = directory
        self.holder = holder
        super().__init__(f"{directory} is in use by {describe_holder(holder)}. Wait for it to finish or stop it, "
                         "or choose another output directory.")


def describe_holder(holder: dict[str, Any]) -> str:
    """'another uxbench process (pid 12, host h, since 2024-05-01T10:00:00+00:00: uxbench mine run)'."""
    if not holder.get("pid"):
        return "another uxbench process (it has not written its details yet)"
    parts = [f"pid {holder['pid']}"]
    if holder.get("host"):
        parts.append(f"host {holder['host']}")
    if holder.get("started"):
        parts.append(f"since {holder['started']}")
    text = ", ".join(parts)
    if holder.get("command"):
        text += f": {holder['command']}"
    return f"another uxbench process ({text})"


def check_output_dir(directory: str | Path, what: str = "output directory") -> None:
    """Clear errors for a path that cannot become a writable directory: an existing file, a path under a
    file, or a place this user may not write in. Creates nothing."""
    path = Path(directory)
    existing = next((p for p in (path, *path.absolute().parents) if p.exists()), None)
    if existing is None:
        return
    if not existing.is_dir():
        where = "is a file" if existing == path else f"is under {existing}, which is a file"
        raise ConfigError(f"The {what} {path} {where}, not a directory; choose another one.")
    effective = os.access in os.supports_effective_ids  # what decides is the effective user (setuid, sudo -u)
    if not os.access(existing, os.W_OK | os.X_OK, effective_ids=effective):
        if existing == path:
            raise ConfigError(f"Cannot write in the {what} {path}: permission denied; choose another one.")
        raise ConfigError(f"Cannot create the {what} {path}: no permission to write in {existing}; "
                          "choose another one.")


_held: dict[str, tuple[int, int]] = {}  # resolved path -> (fd, depth), for re-entry within this process
_guard = threading.Lock()


@contextmanager
def hold_dir_lock(directory: str | Path, *, command: str | None = None,
                  what: str = "output directory") -> Iterator[Path]:
    """Hold the exclusive lock on ``directory`` (created if missing) for the duration of the block.

    Raises `DirectoryBusyError` when another process holds it, `ConfigError` when the directory cannot
    be created or written. ``command`` is recorded for the message a second process prints.
    """
    path = Path(directory)
    check_output_dir(path, what)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"Cannot create the {what} {path}: {exc.strerror or exc}.") from None
    key = str(path.resolve())
    with _guard:
        if key in _held:
            fd, depth = _held[key]
            _held[key] = (fd, depth + 1)
        else:
            _held[key] = (_acquire(path, command, what), 1)
    try:
        yield path
    finally:
        with _guard:
            fd, depth = _held[key]
            if depth > 1:
                _held[key] = (fd, depth - 1)
            else:
                del _held[key]
                _release(fd)


def _acquire(path: Path, command: str | None, what: str) -> int:
    try:
        fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ConfigError(f"Cannot write in the {what} {path}: {exc.strerror or exc}.") from None
    try:
        _flock(fd)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        raise DirectoryBusyError(path, holder) from None
    except BaseException:
        os.close(fd)
        raise
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command or " ".join(["uxbench", *sys.argv[1:3]]),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
    return fd


def _release(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)  # no stale details for the next reader
    finally:
        os.close(fd)  # closing the descriptor drops the flock


def _flock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX (Windows): no advisory locks, the directory is not guarded
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (OSError, ValueError, RecursionError):  # a damaged or hostile lock file holds nobody
        return {}
    return data if isinstance(data, dict) else {}


def read_lock_holder(directory: str | Path) -> dict[str, Any] | None:
    """The details of the process holding ``directory``'s lock, or None when nobody holds it."""
    lock_path = Path(directory) / LOCK_FILE
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except ImportError:
            return None
        except BlockingIOError:
            return _read_holder(fd)
        return None
    finally:
        os.close(fd)
