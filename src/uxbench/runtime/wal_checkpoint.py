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
    """Checkpoints of one SQLite file in WAL mode, run in a thread of their own (see the module's text)."""

    def __init__(self, path: Path, every_changes: int = EVERY_CHANGES) -> None:
        self.path = path
        self.every_changes = max(1, every_changes)
        self._seen = 0
        self._thread: threading.Thread | None = None

    def adopt(self, db: sqlite3.Connection) -> None:
        """Take over the checkpoints of the writing connection `db`."""
        db.execute(f"PRAGMA wal_autocheckpoint={AUTO_PAGES}")
        self._seen = db.total_changes

    def after_commit(self, db: sqlite3.Connection) -> None:
        """Call after a commit on `db`: starts a checkpoint when enough rows changed and none is running."""
        changes = db.total_changes
        if changes - self._seen < self.every_changes:
            return
        thread = self._thread
        if thread is not None and thread.is_alive():
            return  # the next commit asks again
        self._seen = changes
        self._thread = threading.Thread(target=self._checkpoint, name="uxbench-wal-checkpoint", daemon=True)
        self._thread.start()

    def _checkpoint(self) -> None:
        try:
            db = sqlite3.connect(self.path, timeout=0, isolation_level=None)
            try:
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            finally:
                db.close()
        except sqlite3.Error:  # a busy or vanished file: the next one, or the automatic checkpoint, copies it
            pass

    def close(self) -> None:
        """Wait for a checkpoint still running (the writer checkpoints the rest as it closes)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
