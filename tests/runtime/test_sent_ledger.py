"""The sent-request ledger: each request on disk before it goes, no commit per request, exact after a kill."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from uxbench.runs.store import RunStore
from uxbench.sim.store import SimStore


def _table(path: Path) -> dict[str, int]:
    db = sqlite3.connect(path / "samples.sqlite")
    try:
        return {str(r): int(n) for r, n in db.execute("SELECT role, requests FROM sent")}
    finally:
        db.close()


def _child(run: Path, script: str) -> subprocess.Popen[str]:
    code = "from uxbench.runs.store import RunStore\nimport os, sys, time\n" + textwrap.dedent(script)
    return subprocess.Popen([sys.executable, "-c", code, str(run)], stdout=subprocess.PIPE, text=True)


def test_a_count_is_on_disk_when_it_returns_without_a_commit(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    commits: list[str] = []

    async def run() -> list[dict[str, int]]:
        store._conn().set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
        seen = []
        for _ in range(3):
            store.count_sent("model")
            with RunStore(tmp_path / "run") as reader:  # another store: what a rerun would read
                seen.append(reader.sent())
        store.count_sent("judge:a")
        return seen

    assert asyncio.run(run()) == [{"model": 1}, {"model": 2}, {"model": 3}]
    assert commits == []
    assert store.sent() == {"model": 3, "judge:a": 1}
    store.close()  # folds: the counts move into the table, the ledger goes
    assert _table(tmp_path / "run") == {"model": 3, "judge:a": 1}
    assert not list((tmp_path / "run").glob("sent-*.ledger"))
    with RunStore(tmp_path / "run") as again:
        again.count_sent("model")
        assert again.sent() == {"model": 4, "judge:a": 1}
    assert _table(tmp_path / "run") == {"model": 4, "judge:a": 1}


def test_a_killed_process_is_counted_exactly_and_folded_by_the_next_writer_not_while_it_lives(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as first:
        first.count_sent("model")  # a finished invocation: in the table
    killed = _child(run, """
        store = RunStore(sys.argv[1])
        for _ in range(5):
            store.count_sent("model")
        print("sent", flush=True)
        os._exit(0)  # no close: its ledger stays
    """)
    assert killed.stdout is not None and killed.stdout.readline() == "sent\n"
    killed.wait()
    live = _child(run, """
        store = RunStore(sys.argv[1])
        for _ in range(2):
            store.count_sent("model")
        print("sent", flush=True)
        time.sleep(60)
    """)
    try:
        assert live.stdout is not None and live.stdout.readline() == "sent\n"
        with RunStore(run) as reader:
            assert reader.sent() == {"model": 1 + 5 + 2}  # every ledger, read as it is
        with RunStore(run) as rerun:
            rerun.count_sent("model")
        assert _table(run) == {"model": 1 + 5 + 1}  # the dead process's ledger folded, the live one's not
        assert len(list(run.glob("sent-*.ledger"))) == 1
        with RunStore(run) as reader:
            assert reader.sent() == {"model": 1 + 5 + 1 + 2}
    finally:
        live.kill()
        live.wait()
    with RunStore(run) as last:
        last.count_sent("model")
    assert _table(run) == {"model": 1 + 5 + 1 + 2 + 1} and not list(run.glob("sent-*.ledger"))


def test_a_ledger_folded_before_a_crash_removed_it_is_not_counted_twice(tmp_path: Path) -> None:
    run = tmp_path / "run"
    store = RunStore(run)
    store.count_sent("model")
    store.count_sent("model")
    (ledger,) = run.glob("sent-*.ledger")
    kept = ledger.read_bytes()
    store.close()  # folded and removed ...
    ledger.write_bytes(kept)  # ... as if the process died between the commit and the removal
    with RunStore(run) as reader:
        assert reader.sent() == {"model": 2}
    with RunStore(run) as rerun:
        rerun.count_sent("model")
    assert _table(run) == {"model": 3} and not ledger.exists()


def test_a_command_that_only_reads_writes_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    child = _child(run, """
        store = RunStore(sys.argv[1])
        store.done_ids()  # a run opens its database before it sends
        store.count_sent("model")
        os._exit(0)
    """)
    child.wait()
    before = {p.name: p.read_bytes() for p in run.glob("sent-*.ledger")}
    with RunStore(run) as reader:
        assert reader.sent() == {"model": 1}
    assert {p.name: p.read_bytes() for p in run.glob("sent-*.ledger")} == before and len(before) == 1
    assert _table(run) == {}  # the dead process's ledger is left for the next run that sends to fold


def test_the_sim_store_counts_the_same_way(tmp_path: Path) -> None:
    with SimStore(tmp_path / "sim") as store:
        for _ in range(40):
            store.count_sent("assistant")
        store.count_sent("simulator")
        assert store.sent() == {"assistant": 40, "simulator": 1}
    with SimStore(tmp_path / "sim") as again:
        again.count_sent("assistant")
        assert again.sent() == {"assistant": 41, "simulator": 1}
    assert not list((tmp_path / "sim").glob("sent-*.ledger")) and os.listdir(tmp_path / "sim")


def test_a_ledger_removed_after_it_was_opened_is_not_taken_for_a_dead_ones(tmp_path: Path) -> None:
    """Two closing processes may both list a dead process's ledger; the second locks it only after the first folded
    and removed it, and must then leave it alone (`still_linked`)."""
    from uxbench.runtime.sent_ledger import still_linked

    ledger = tmp_path / "sent-0.ledger"
    ledger.write_bytes(b'"model"\n')
    fd = os.open(ledger, os.O_RDONLY)
    try:
        assert still_linked(fd, ledger)
        ledger.unlink()
        assert not still_linked(fd, ledger)
        ledger.write_bytes(b"")  # a new file under the same name is another file
        assert not still_linked(fd, ledger)
    finally:
        os.close(fd)


def test_a_fold_adds_the_counts_and_the_name_in_one_transaction(tmp_path: Path) -> None:
    """Outside an event loop too (a store closed after `asyncio.run`), where other writes commit one by one."""
    store = RunStore(tmp_path / "run")
    store.count_sent("model")
    store.count_sent("judge:a")
    statements: list[str] = []
    store._conn().set_trace_callback(statements.append)
    store.close()
    start = statements.index("BEGIN IMMEDIATE")
    folding = [s.split()[0] + (" folded" if "folded_ledgers" in s else "") for s in statements[start:]]
    assert folding == ["BEGIN", "INSERT", "INSERT", "INSERT folded", "COMMIT"], statements
    assert _table(tmp_path / "run") == {"model": 1, "judge:a": 1}


def test_a_fresh_start_discards_a_killed_runs_ledger(tmp_path: Path) -> None:
    run = tmp_path / "run"
    child = _child(run, """
        store = RunStore(sys.argv[1])
        store.done_ids()
        store.count_sent("model")
        os._exit(0)
    """)
    child.wait()
    assert list(run.glob("sent-*.ledger"))
    RunStore(run).discard()  # what --fresh does with the directory of another configuration's run
    assert not list(run.glob("sent-*.ledger")) and not (run / "samples.sqlite").exists()
    with RunStore(run) as fresh:
        assert fresh.sent() == {}
