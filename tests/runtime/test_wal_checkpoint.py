"""WAL checkpoints in a background thread (`runtime/wal_checkpoint.py`): the log is copied into the database file
off the writing thread, nothing committed is lost, and the stores use it."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.runtime.batched_writes import BatchedWrites
from uxbench.runtime.wal_checkpoint import AUTO_PAGES, BackgroundCheckpoints


def _writer(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS kv(k TEXT PRIMARY KEY, v TEXT)")
    return db


def _rows_in_main_file(path: Path, tmp: Path) -> int:
    """Rows readable from the database file alone (its WAL left behind): what checkpoints have copied."""
    alone = tmp / "alone.sqlite"
    shutil.copyfile(path, alone)
    db = sqlite3.connect(alone)
    try:
        return int(db.execute("SELECT COUNT(*) FROM kv").fetchone()[0])
    except sqlite3.OperationalError:  # not even the table reached it
        return 0
    finally:
        db.close()


def test_checkpoints_copy_the_log_in_another_thread(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    db = _writer(path)
    checkpoints = BackgroundCheckpoints(path, every_changes=50)
    checkpoints.adopt(db)
    assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == AUTO_PAGES  # none inside a commit here
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    writes = BatchedWrites(lambda: db, checkpoints=checkpoints)
    threading.Thread.start = start  # type: ignore[method-assign]
    try:
        for i in range(49):
            writes.write("INSERT INTO kv VALUES (?, ?)", (f"k{i}", "v"))  # no loop: each commits at once
        assert started == []  # fewer changes than `every_changes`: no checkpoint yet
        for i in range(49, 120):
            writes.write("INSERT INTO kv VALUES (?, ?)", (f"k{i}", "v"))
            writes.flush()
            checkpoints.close()  # waits for a running one, so each crossing of the line starts one
    finally:
        threading.Thread.start = real_start  # type: ignore[method-assign]
    assert started and set(started) == {"uxbench-wal-checkpoint"}
    assert _rows_in_main_file(path, tmp_path) >= 100  # copied into the file by the thread, not by the writer
    db.close()
    again = sqlite3.connect(path)
    assert again.execute("SELECT COUNT(*) FROM kv").fetchone()[0] == 120  # nothing committed was lost
    again.close()


def test_a_checkpoint_that_cannot_run_is_left_to_the_next(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    db = _writer(path)
    checkpoints = BackgroundCheckpoints(path, every_changes=1)
    checkpoints.adopt(db)
    path.rename(tmp_path / "moved.sqlite")
    path.mkdir()  # the thread's connection cannot open it: the error stays in the thread, the writer goes on
    db.execute("INSERT INTO kv VALUES ('a', 'b')")
    checkpoints.after_commit(db)
    checkpoints.close()
    db.close()


def test_a_run_stores_records_with_background_checkpoints(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    for i in range(600):  # past EVERY_CHANGES twice
        store.put(SampleRecord(sample_id=f"s{i}", case_id=f"c{i}", index=i, status="ok"))
        store.count_sent("model")
    assert store._conn().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == AUTO_PAGES
    store.close()
    again = RunStore(tmp_path / "run")
    assert len(again.done_ids()) == 600 and again.sent() == {"model": 600}
    again.close()
