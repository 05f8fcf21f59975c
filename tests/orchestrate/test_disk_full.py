"""A disk that fills up during `uxbench run`: one clear `error:` line that says so (no traceback), nothing
finished is lost, and the same command resumes once there is space. Two ways: a real small file system (a
tmpfs with a size limit, where the test may mount one: root in CI) and an injected `OSError(ENOSPC)` /
SQLite "disk is full" (always)."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from uxbench.cli.main import app


def rows(n: int, size: int = 0) -> list[dict[str, object]]:
    return [{"cid": f"c{i:04d}", "ground_truth": 1 if i % 2 else -1, "query": f"question {i} " + "q" * size,
             "agent_response_full": f"answer {i} [[SAY:{'good' if i % 3 else 'bad'}]] " + "r" * size}
            for i in range(n)]


def write(path: Path, data: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def run(data: Path, out: Path) -> Result:
    return CliRunner().invoke(app, ["run", "--model", "scripted:always-good", "--data", str(data), "--out",
                                    str(out), "--concurrency", "2", "--quiet"])


def said(result: Result) -> str:
    """stderr with the terminal's line wrapping undone."""
    return " ".join(result.stderr.split())


def records(out: Path) -> int:
    with sqlite3.connect(out / "samples.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM records WHERE status = 'ok'").fetchone()[0])


def assert_disk_full(result: Result) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit))
    assert "error: the disk is full" in said(result) and "rerun the same command" in said(result), result.stderr


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))


def test_injected_full_disk_in_the_record_store_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from uxbench.runs.store import RunStore

    data = write(tmp_path / "judge.jsonl", rows(40))
    put = RunStore.put
    written = {"n": 0}

    def fills_up(self: RunStore, record: object, case_json: bytes | None = None) -> None:
        if written["n"] >= 15:
            raise sqlite3.OperationalError("database or disk is full")
        written["n"] += 1
        put(self, record, case_json)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "put", fills_up)
    assert_disk_full(run(data, tmp_path / "run"))
    monkeypatch.setattr(RunStore, "put", put)
    assert records(tmp_path / "run") == 15  # what was finished is kept
    again = run(data, tmp_path / "run")
    assert again.exit_code == 0, again.output
    assert "resuming: 15 already done" in said(again) and records(tmp_path / "run") == 40


def test_injected_enospc_writing_the_summary_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uxbench.runs.store as store

    data = write(tmp_path / "judge.jsonl", rows(12))
    real = store._write_json_atomic

    def no_space(path: Path, data: object) -> None:
        if path.name == "summary.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data)

    monkeypatch.setattr(store, "_write_json_atomic", no_space)
    result = run(data, tmp_path / "run")
    assert_disk_full(result)
    assert "summary.json" in said(result)
    monkeypatch.setattr(store, "_write_json_atomic", real)
    again = run(data, tmp_path / "run")
    assert again.exit_code == 0 and "resuming: 12 already done" in said(again), again.output
    assert json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))["n_samples"] == 12


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 384 KiB tmpfs, mounted for the test (skipped where mounting is refused)."""
    point = tmp_path / "small"
    point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k", "tmpfs", str(point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip() or 'mount failed'}): needs root")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_a_real_full_file_system_then_resume_after_it_grows(tmp_path: Path, small_fs: Path) -> None:
    data = write(tmp_path / "judge.jsonl", rows(120, size=1500))
    out = small_fs / "run"
    assert_disk_full(run(data, out))
    kept = records(out)
    assert 0 < kept < 120
    grown = subprocess.run(["mount", "-o", "remount,size=16m", str(small_fs)], capture_output=True, text=True)
    assert grown.returncode == 0, grown.stderr
    again = run(data, out)
    assert again.exit_code == 0, again.output
    assert f"resuming: {kept} already done" in said(again) and records(out) == 120
    with sqlite3.connect(out / "samples.sqlite") as db:  # each case once
        assert db.execute("SELECT count(DISTINCT sample_id), count(*) FROM records").fetchone() == (120, 120)
