"""One permission policy: every file a run or a mining run writes (run directory, response cache, mining
output and checkpoints, SQLite -wal/-shm included) is private to its owner (0600), whatever the umask."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.fileio import FILE_MODE, connect_sqlite, temp_path

sys.path.insert(0, str(Path(__file__).parent / "mining"))
from pipeline_support import write_log


@pytest.fixture(autouse=True)
def _open_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the usual default: files would come out 0644
    try:
        yield
    finally:
        os.umask(old)


def modes(*roots: Path) -> dict[str, str]:
    return {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for root in roots for p in root.rglob("*") if p.is_file()}


def not_private(*roots: Path) -> dict[str, str]:
    return {path: mode for path, mode in modes(*roots).items() if int(mode, 8) != FILE_MODE}


def test_sqlite_files_and_their_wal_are_private(tmp_path: Path) -> None:
    db = connect_sqlite(tmp_path / "x.sqlite", timeout=5)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t(a)")
    db.execute("INSERT INTO t VALUES (1)")
    names = {p.name for p in tmp_path.iterdir()}
    assert {"x.sqlite", "x.sqlite-wal", "x.sqlite-shm"} <= names
    assert not_private(tmp_path) == {}
    db.close()


def test_an_old_world_readable_database_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    sqlite3.connect(path).close()
    path.chmod(0o644)
    connect_sqlite(path, timeout=5).close()
    assert stat.S_IMODE(path.stat().st_mode) == FILE_MODE


def test_temp_path_for_path_writers_is_private(tmp_path: Path) -> None:
    tmp = temp_path(tmp_path / "table.parquet")
    assert tmp.exists() and stat.S_IMODE(tmp.stat().st_mode) == FILE_MODE


def test_every_file_of_a_run_and_its_cache_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression: samples.sqlite (and -wal/-shm) came out 0644 while the other run files were 0600.
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["run", "--model", "scripted:always-good", "--limit", "4", "--quiet",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert {p.name for p in (tmp_path / "run").iterdir()} >= {"manifest.json", "samples.sqlite", "summary.json"}
    assert any((tmp_path / "cache").iterdir())
    assert not_private(tmp_path / "run", tmp_path / "cache") == {}


def test_every_file_of_a_mining_run_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_DEID_SALT", "permissions-test")
    log = write_log(tmp_path / "log.jsonl")
    result = CliRunner().invoke(app, ["mine", "run", str(log), "--out", str(tmp_path / "out"), "--no-llm",
                                      "--workers", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    written = modes(tmp_path / "out")
    assert any(p.endswith(".parquet") for p in written) and any(p.endswith(".csv") for p in written)
    assert not_private(tmp_path / "out") == {}, json.dumps(not_private(tmp_path / "out"), indent=1)
