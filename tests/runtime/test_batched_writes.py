"""Writes made in one turn of an event loop share one commit (runtime/batched_writes.py), on real SQLite files: what
another connection sees and when, the counter's merged increments, a failed commit raised by the next call, and the
stores and the response cache that use it."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from uxbench.fileio import connect_sqlite
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.runtime.batched_writes import BatchedWrites
from uxbench.runtime.cache import CacheError, ResponseCache

PUT = "INSERT INTO t(k, v) VALUES (?, ?)"
COUNT = "INSERT INTO c(k, n) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET n = n + excluded.n"


def _db(path: Path) -> sqlite3.Connection:
    db = connect_sqlite(path, timeout=5)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS t(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS c(k TEXT PRIMARY KEY, n INTEGER NOT NULL)")
    return db


def _rows(path: Path) -> list[tuple[str, str]]:
    other = sqlite3.connect(path)  # another connection: sees committed rows only
    try:
        return sorted(other.execute("SELECT k, v FROM t").fetchall())
    finally:
        other.close()


def test_without_a_loop_every_write_commits_at_once(tmp_path: Path) -> None:
    db = _db(tmp_path / "a.sqlite")
    writes = BatchedWrites(lambda: db)
    writes.write(PUT, ("a", "1"))
    assert _rows(tmp_path / "a.sqlite") == [("a", "1")] and not writes.pending


def test_a_turns_writes_are_committed_together_at_its_end(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    db = _db(path)
    writes = BatchedWrites(lambda: db)
    commits: list[int] = []
    db.set_trace_callback(lambda sql: commits.append(1) if sql == "COMMIT" else None)

    async def main() -> list[list[tuple[str, str]]]:
        seen = []
        for i in range(3):
            writes.write(PUT, (f"k{i}", str(i)))
        seen.append(_rows(path))  # same turn: nothing committed yet
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        seen.append(_rows(path))
        return seen

    before, after = asyncio.run(main())
    assert before == [] and after == [("k0", "0"), ("k1", "1"), ("k2", "2")]
    assert len(commits) == 1


def test_counter_increments_of_a_turn_become_one_statement(tmp_path: Path) -> None:
    db = _db(tmp_path / "a.sqlite")
    writes = BatchedWrites(lambda: db)
    statements: list[str] = []
    db.set_trace_callback(statements.append)

    async def main() -> None:
        for role in ("model", "model", "judge", "model"):
            writes.add(COUNT, (role,))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        writes.add(COUNT, ("model",), 2)
        writes.flush()

    asyncio.run(main())
    assert dict(db.execute("SELECT k, n FROM c").fetchall()) == {"model": 5, "judge": 1}
    assert sum(s.startswith("INSERT INTO c") for s in statements) == 3


def test_a_failed_commit_is_raised_by_the_next_call_and_loses_only_its_turn(tmp_path: Path) -> None:
    db = _db(tmp_path / "a.sqlite")
    writes = BatchedWrites(lambda: db)

    async def main() -> None:
        writes.write(PUT, ("ok", "1"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        writes.write(PUT, ("dup", "1"))
        writes.write(PUT, ("dup", "2"))  # the primary key: this turn's commit fails
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        with pytest.raises(sqlite3.IntegrityError):
            writes.write(PUT, ("next", "1"))
        writes.write(PUT, ("later", "1"))
        writes.flush()

    asyncio.run(main())
    assert _rows(tmp_path / "a.sqlite") == [("later", "1"), ("ok", "1")]
    assert not db.in_transaction


def test_rows_of_a_loop_that_stopped_first_are_written_by_the_next_call(tmp_path: Path) -> None:
    db = _db(tmp_path / "a.sqlite")
    writes = BatchedWrites(lambda: db)
    loop = asyncio.new_event_loop()

    def write() -> None:
        writes.write(PUT, ("from-loop", "1"))
        loop.stop()  # the loop stops before the turn that commits

    loop.call_soon(write)
    loop.run_forever()
    loop.close()
    assert writes.pending and _rows(tmp_path / "a.sqlite") == []
    writes.write(PUT, ("after", "1"))
    assert _rows(tmp_path / "a.sqlite") == [("after", "1"), ("from-loop", "1")]


def test_two_writers_on_one_file_in_one_turn_do_not_wait_on_each_other(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    first, second = _db(path), connect_sqlite(path, timeout=1)
    a, b = BatchedWrites(lambda: first), BatchedWrites(lambda: second)

    async def main() -> None:
        a.write(PUT, ("a", "1"))
        b.write(PUT, ("b", "1"))  # no lock is held between turns: neither waits out the busy timeout
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert _rows(path) == [("a", "1"), ("b", "1")]


def _record(i: int) -> SampleRecord:
    return SampleRecord(sample_id=f"s{i}", case_id=f"c{i}", index=i, status="ok", prediction="good", gold="good")


def test_run_store_reads_and_close_see_the_turns_writes(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")

    async def main() -> tuple[set[str], dict[str, int]]:
        store.put(_record(0))
        store.count_sent("model")
        store.count_sent("model")
        done, sent = store.done_ids(), store.sent()  # its own reads commit first
        store.put(_record(1))
        store.count_sent("model")
        store.close()  # in the same turn: close commits what waits
        return done, sent

    done, sent = asyncio.run(main())
    assert done == {"s0"} and sent == {"model": 2}
    again = RunStore(tmp_path / "run")
    assert again.done_ids() == {"s0", "s1"} and again.sent() == {"model": 3}
    again.close()


def test_response_cache_finds_a_value_put_in_the_same_turn(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)

    async def main() -> tuple[bytes | None, bytes | None, int]:
        cache.put("k", b"first")
        cache.put("k", b"second")
        return cache.get("k"), cache.get("absent"), len(cache)

    assert asyncio.run(main()) == (b"second", None, 1)
    cache.close()
    with ResponseCache(path) as again:
        assert again.get("k") == b"second"


def test_response_cache_raises_a_failed_deferred_write_as_a_cache_error(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")

    async def main() -> None:
        cache.put("k", b"v")
        blocker = sqlite3.connect(tmp_path / "responses.sqlite", timeout=0)
        blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the busy timeout
        cache._conn().execute("PRAGMA busy_timeout = 50")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        blocker.rollback()
        blocker.close()
        with pytest.raises(CacheError, match="locked"):
            cache.put("k2", b"v")

    asyncio.run(main())
    cache.close()


def test_a_request_counted_as_sent_goes_out_only_once_the_count_is_on_disk(tmp_path: Path) -> None:
    """`RunStore.count_sent` has the request counted on disk before it returns (its ledger,
    `runtime/sent_ledger.py`), and the model calls it before it sends: a kill after the send cannot leave a request
    the server saw uncounted. Each request sees its own count on disk, read by another store."""
    from uxbench.models.model import create_model

    seen: list[dict[str, int]] = []

    class Probe:
        """What another process sees in the store's file at the moment the request goes out."""

        def __init__(self, path: Path) -> None:
            self.path = path

        def now(self) -> dict[str, int]:
            with RunStore(self.path) as other:
                return other.sent()

    async def go() -> None:
        with RunStore(tmp_path / "run") as store:
            store.path.mkdir(exist_ok=True)
            probe = Probe(store.path)
            model = create_model("scripted:always-good", {})
            inner = model.api.generate

            async def generate(*args: object, **kwargs: object) -> object:
                seen.append(probe.now())
                return await inner(*args, **kwargs)  # type: ignore[arg-type]

            model.api.generate = generate  # type: ignore[method-assign]
            model.on_send = lambda: store.count_sent("model")
            from uxbench.data.schema import Message
            from uxbench.models.api import GenerateConfig

            await asyncio.gather(*[model.generate([Message(role="user", content=f"q{i}")], GenerateConfig())
                                   for i in range(3)])

    asyncio.run(go())
    assert seen == [{"model": 1}, {"model": 2}, {"model": 3}], seen
    with RunStore(tmp_path / "run") as again:
        assert again.sent() == {"model": 3}
    assert not list((tmp_path / "run").glob("sent-*.ledger"))  # folded into the table at close


def test_held_rows_wait_for_their_time_then_commit_together(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    db = _db(path)
    writes = BatchedWrites(lambda: db, hold_s=0.05, max_rows=100)
    commits: list[int] = []
    db.set_trace_callback(lambda sql: commits.append(1) if sql == "COMMIT" else None)

    async def main() -> list[list[tuple[str, str]]]:
        seen = []
        for i in range(3):
            writes.write(PUT, (f"k{i}", str(i)))
            await asyncio.sleep(0)  # turns end: held rows are not committed at their end
        seen.append(_rows(path))
        while writes.pending:  # the hold ends (no wall-clock figure asserted: only that it does)
            await asyncio.sleep(0.01)
        seen.append(_rows(path))
        return seen

    before, after = asyncio.run(main())
    assert before == [] and after == [("k0", "0"), ("k1", "1"), ("k2", "2")]
    assert len(commits) == 1


def test_held_rows_are_committed_once_max_rows_wait(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    db = _db(path)
    writes = BatchedWrites(lambda: db, hold_s=3600.0, max_rows=4)

    async def main() -> tuple[list[tuple[str, str]], bool]:
        for i in range(5):
            writes.write(PUT, (f"k{i}", str(i)))
        seen = _rows(path)
        pending = writes.pending
        writes.flush()  # what the owner does before its loop ends
        return seen, pending

    seen, pending = asyncio.run(main())
    assert [k for k, _ in seen] == ["k0", "k1", "k2", "k3"] and pending
    assert len(_rows(path)) == 5 and not writes.pending


def test_the_cache_holds_a_runs_answers_and_finds_them_before_the_commit(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path, hold_s=3600.0)

    async def main() -> tuple[bytes | None, int]:
        cache.put("k", b"answer")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        other = ResponseCache(path)  # another process's view: not committed yet
        try:
            return cache.get("k"), len(other)
        finally:
            other.close()

    found, others = asyncio.run(main())
    assert found == b"answer" and others == 0
    cache.close()  # commits what it held
    with ResponseCache(path) as again:
        assert again.get("k") == b"answer"
