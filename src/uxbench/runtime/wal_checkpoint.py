"""A SQLite file's WAL checkpoints run in a background thread, not inside a commit on the event-loop thread.

In WAL mode SQLite copies the log back into the database file once it holds `wal_autocheckpoint` pages (1,000 by
default), inside whichever commit crosses that line, and it syncs both files while doing so. A run's store
commits every request (its count of requests sent, with the records that finished), so one commit in every
300 or so stopped the event loop for about 10 ms on this project's machines: 30-70 stops in a 5,000-sample Task 1
run, during which no answer was read and no request sent (bench/RESULTS.md, issue 29's fourth round).

`BackgroundCheckpoints` raises the automatic threshold well above what a run reaches between two of its own
checkpoints (the threshold stays as a bound, should the thread fall behind), and after every `every_changes`
changed rows starts a PASSIVE checkpoint on its own connection in one worker thread. Python's sqlite3 releases
the GIL while SQLite works, so the copy and its syncs run beside the loop. A PASSIVE checkpoint never waits for a
writer or a reader, and what it copies is already committed: a kill at any point loses nothing that a commit
made durable (the WAL keeps every frame until it has been copied).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

EVERY_CHANGES = 256
"""Rows changed between two background checkpoints: a run store's row writes 2-4 pages (the row's leaf and its
index entries), so about 500-1,000 pages of log, what SQLite's default checkpoints at."""

AUTO_PAGES = 8000
"""The automatic checkpoint's threshold while background ones run: only reached when the thread falls behind."""


class BackgroundCheckpoints:
    """Checkpoints of one SQLite file in WAL mode, run in a thread of their own (see the module's text). The thread
    keeps one connection open until `close`: a connection that closes while the writer's is idle takes the file's
    exclusive lock to make a last checkpoint, and a commit then waited on it (110-160 ms, once in a 3,000-call GRM
    step, where one checkpoint inside a commit had cost 10 ms)."""

    def __init__(self, path: Path, every_changes: int = EVERY_CHANGES) -> None:
        self.path = path
        self.every_changes = max(1, every_changes)
        self._seen = 0
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stopping = False
        self._busy = False
        """A checkpoint was asked for and has not finished."""

    def adopt(self, db: sqlite3.Connection) -> None:
        """Take over the checkpoints of the writing connection `db`."""
        db.execute(f"PRAGMA wal_autocheckpoint={AUTO_PAGES}")
        self._seen = db.total_changes

    def after_commit(self, db: sqlite3.Connection) -> None:
        """Call after a commit on `db`: starts a checkpoint when enough rows changed and none is running."""
        changes = db.total_changes
        if changes - self._seen < self.every_changes or self._busy:
            return  # a checkpoint still running: the next commit asks again
        self._seen = changes
        self._busy = True
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="uxbench-wal-checkpoint", daemon=True)
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        db: sqlite3.Connection | None = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._busy:  # asked for (also when stopping: the checkpoint asked for is made first)
                    try:
                        if db is None:
                            db = sqlite3.connect(self.path, timeout=0, isolation_level=None)
                        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    except sqlite3.Error:  # a busy or vanished file: the next one, or the automatic one, copies it
                        pass
                    finally:
                        self._busy = False
                if self._stopping:
                    return
        finally:
            if db is not None:
                db.close()

    def close(self) -> None:
        """Wait for a checkpoint still running and close the thread's connection (before the writer closes its
        own, which checkpoints the rest)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stopping = True
            self._wake.set()
            thread.join()
        self._busy = False
