"""`uxbench mine run|report|audit` through typer's runner: good input, and bad input refused clearly."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import assert_clean_error, invoke, log_rows, turn, unprivileged, write_jsonl

from uxbench.dirlock import LOCK_FILE


def mine(log: Path | str, out: Path, *extra: str) -> tuple[int, str, str]:
    result = invoke("mine", "run", log, "--out", out, "--no-llm", "--workers", "1", "--quiet", *extra)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("mined")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_DEID_SALT", "cli-tests-012345")
        code, out, _ = mine(write_jsonl(root / "log.jsonl", log_rows()), root / "out")
    assert code == 0, out
    assert "8 turns, 2 conversations" in out
    yield root / "out"


def test_report_and_audit_of_a_mining_run(mined: Path) -> None:
    report = invoke("mine", "report", mined, "--format", "json")
    assert report.exit_code == 0, report.output
    assert json.loads(report.output)["conversations"] == 2
    assert invoke("mine", "report", mined).exit_code == 0
    audit = invoke("mine", "audit", mined)
    assert audit.exit_code == 0 and "complaints" in audit.output


@pytest.mark.parametrize(("content", "reason"), [
    (b"", "the file holds no rows"),
    (b"\n  \n", "the file holds no rows"),
    (b'{"x": 1}\n{"y": 2}\n', "all 2 rows were invalid and skipped; the first: "),
    (b'{"conversation_id": "a", "turn_index": 0, "role": "system", "content": "be nice"}\n',
     "hold only system or tool messages"),
])
def test_nothing_read_is_an_error_and_writes_nothing(tmp_path: Path, content: bytes, reason: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(content)
    result = invoke("mine", "run", log, "--out", tmp_path / "out", "--no-llm", "--skip-invalid")
    assert_clean_error(result, "no turns were read", reason)
    assert not (tmp_path / "out").exists()


def test_a_directory_without_logs(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    result = invoke("mine", "run", tmp_path / "logs", "--out", tmp_path / "out", "--no-llm")
    assert_clean_error(result, "no log files here")


def test_out_that_is_a_file_or_under_a_file(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", log_rows())
    (tmp_path / "taken").write_text("x")
    assert_clean_error(invoke("mine", "run", log, "--out", tmp_path / "taken", "--no-llm"), "is a file")
    assert_clean_error(invoke("mine", "run", log, "--out", tmp_path / "taken" / "sub", "--no-llm"),
                       "which is a file")


def test_out_without_write_permission_and_an_unreadable_log(shared_tmp: Path) -> None:
    log = write_jsonl(shared_tmp / "log.jsonl", log_rows())
    log.chmod(0o644)
    locked = shared_tmp / "locked"
    locked.mkdir(mode=0o555)
    locked.chmod(0o555)
    secret = write_jsonl(shared_tmp / "secret.jsonl", log_rows())
    secret.chmod(0o000)
    writable = shared_tmp / "open"
    writable.mkdir()
    writable.chmod(0o777)
    with unprivileged():
        unwritable = invoke("mine", "run", log, "--out", locked / "out", "--no-llm")
        writable_dir_itself = invoke("mine", "run", log, "--out", locked, "--no-llm")
        unreadable = invoke("mine", "run", secret, "--out", writable / "out", "--no-llm")
    assert_clean_error(unwritable, "no permission to write in", str(locked))
    assert_clean_error(writable_dir_itself, "Cannot write in the --out directory", "permission denied")
    assert_clean_error(unreadable, str(secret), "cannot read the file", "Permission denied")


def test_misleading_messages_are_fixed(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text('{"conversation_id": 10000000000000000000000, "turn_index": 0, "role": "user", "content": "x"}\n')
    result = invoke("mine", "run", big, "--out", tmp_path / "o1", "--no-llm")
    assert_clean_error(result, "line 1, field 'conversation_id'", "not an exact integer", "write ids as strings")
    assert "is required" not in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"conversation_id": "a", "turn_index": 0, "role": "user", "content": "h\xffi"}\n')
    result = invoke("mine", "run", bad, "--out", tmp_path / "o2", "--no-llm")
    assert_clean_error(result, "line 1: not valid UTF-8: byte 0xff at offset 71 of the line")
    assert "character 0" not in result.output


def test_dropped_merged_and_empty_turns_are_reported(tmp_path: Path) -> None:
    rows = [
        turn("a", 0, "question one", message_id="m1"), turn("a", 1, "answer one", message_id="m2"),
        turn("a", 2, "question two", message_id="m1"),  # the id again, on another turn: kept
        turn("a", 3, None, message_id="m3"),  # null content: kept, counted
        turn("a", 1, "answer one", message_id="m2"),  # an exact duplicate row: dropped, counted
    ]
    code, out, err = mine(write_jsonl(tmp_path / "log.jsonl", rows), tmp_path / "out")
    assert code == 0, out + err
    assert "5 turns, 1 conversations" in out  # turns read; the notes say what became of them
    assert "1 duplicate rows of the same message dropped" in out
    assert "2 turns share a message id with another turn; all were kept" in out
    assert "1 turns have no text (null or empty content)" in out
    counts = json.loads((tmp_path / "out" / "stage_counts.json").read_text())
    assert counts["sessions"]["turns"] == 4 and counts["ingest"]["empty_turns"] == 1


def test_a_second_process_on_the_same_out_is_refused(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "log.jsonl", log_rows())
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from uxbench.dirlock import hold_dir_lock\n"
         f"with hold_dir_lock({str(out)!r}, command='uxbench mine run --out {out}'):\n"
         "    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        result = invoke("mine", "run", log, "--out", out, "--no-llm")
        assert_clean_error(result, f"{out} is in use by another uxbench process (pid {holder.pid}",
                           f"uxbench mine run --out {out}")
        assert not (out / "manifest.json").exists()
    finally:
        holder.kill()  # a killed holder leaves no stale lock behind
        holder.wait()
    assert (out / LOCK_FILE).exists()
    code, stdout, err = mine(log, out)
    assert code == 0, stdout + err


def test_report_and_audit_of_something_else(tmp_path: Path) -> None:
    assert_clean_error(invoke("mine", "report", tmp_path / "nope"), "no signals.parquet here")
    assert_clean_error(invoke("mine", "audit", tmp_path / "nope"), "run `uxbench mine run` first")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.json").write_text("{}")
    assert_clean_error(invoke("mine", "report", run_dir), "is a run directory of `uxbench run`",
                       f"uxbench report {run_dir}")
    assert invoke("mine", "report", run_dir, "--format", "xml").exit_code == 2
