"""`uxbench data validate|stats` through typer's runner: good input, and bad input refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import assert_clean_error, invoke, judge_rows, unprivileged, write_jsonl

EMPTY_INPUTS = {
    "empty.jsonl": b"",
    "blank.jsonl": b"  \n\n\t\n",
    "list.json": b"[]",
    "wrapped.json": b'{"data": []}',
}


def test_validate_a_good_file_and_the_demo_set(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "judge.jsonl", judge_rows(6))
    result = invoke("data", "validate", path)
    assert result.exit_code == 0, result.output
    assert "6 valid rows, 0 invalid" in result.output and "Task 1 (judge) 6" in result.output
    demo = invoke("data", "validate", Path(__file__).parents[2] / "src/uxbench/data/demo")
    assert demo.exit_code == 0, demo.output
    assert "Task 1 (judge) 24" in demo.output and "demo_task3_recovery.jsonl: recovery 8" in demo.output


@pytest.mark.parametrize("name", sorted(EMPTY_INPUTS))
def test_validate_and_stats_refuse_an_input_with_nothing_in_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(EMPTY_INPUTS[name])
    result = invoke("data", "validate", path)
    assert_clean_error(result, "no cases were read", "no rows", code=1)
    stats = invoke("data", "stats", path)
    assert_clean_error(stats, "no cases were read", str(path))


def test_a_directory_without_data_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not data")
    assert_clean_error(invoke("data", "validate", tmp_path), "no .jsonl, .json or .parquet files")


def test_every_row_invalid_is_not_a_success(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rows.jsonl", [{"cid": "a"}, {"cid": "b", "query": 5}])
    result = invoke("data", "validate", path)
    assert_clean_error(result, "0 valid rows, 2 invalid", "line 1, field 'query'", "no cases were read", code=1)
    stats = invoke("data", "stats", path, "--skip-invalid")
    assert_clean_error(stats, "no cases were read: all 2 rows were invalid", "line 1, field 'query'")


def test_a_task1_row_without_its_reply_is_not_passed_as_a_task2_row(tmp_path: Path) -> None:
    row = {"cid": "t1", "query": "how do I...", "ground_truth": -1, "failure_dimension": "事实性错误"}
    path = write_jsonl(tmp_path / "rows.jsonl", [row])
    inferred = invoke("data", "validate", path)
    assert_clean_error(inferred, "Task 2 (eval) 1", "carry a Task 1 label (ground_truth) but no reply", "--task judge",
                       code=1)
    as_judge = invoke("data", "validate", path, "--task", "judge")  # the way `uxbench run` reads it
    assert_clean_error(as_judge, "read as Task 1 (judge)", "line 1, field 'agent_response_full': is missing", code=1)
    as_eval = invoke("data", "validate", path, "--task", "eval")  # said to be Task 2 rows: fine
    assert as_eval.exit_code == 0, as_eval.output
    assert_clean_error(invoke("data", "validate", path, "--task", "judg"), "unknown task 'judg'")


def test_validate_reports_duplicates_empty_messages_and_the_task_of_each_file(tmp_path: Path) -> None:
    rows = judge_rows(4)
    rows[1]["history"] = [{"role": "user", "content": None}, {"role": "assistant", "content": "hi"}]
    write_jsonl(tmp_path / "task1_judge.jsonl", [*rows, rows[0]])
    write_jsonl(tmp_path / "task2_eval.jsonl", [{"cid": "e1", "query": "q"}])
    result = invoke("data", "validate", tmp_path)
    assert result.exit_code == 0, result.output
    assert f"{tmp_path / 'task1_judge.jsonl'}: judge 4" in result.output
    assert f"{tmp_path / 'task2_eval.jsonl'}: eval 1" in result.output
    assert "1 exact duplicate rows were left out" in result.output and "line 5 repeats line 1" in result.output
    assert "1 history messages in 1 cases have no text" in result.output
    stats = invoke("data", "stats", tmp_path)
    assert stats.exit_code == 0 and "Note: 1 exact duplicate rows were left out" in stats.output
    assert "shown to the judge as （空）" in stats.output


def test_encoding_errors_name_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(json.dumps(judge_rows(1)[0]).encode() + b"\n" + b'{"cid": "x\xff"}\n')
    result = invoke("data", "validate", path)
    assert_clean_error(result, "line 2: not valid UTF-8: byte 0xff at offset 10 of the line", code=1)


def test_stats_table_and_json(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "judge.jsonl", judge_rows(6))
    table = invoke("data", "stats", path)
    assert table.exit_code == 0 and "Per task" in table.output
    data = json.loads(invoke("data", "stats", path, "--format", "json").output)
    assert data["n_cases"] == 6 and data["by_label"] == {"good": 3, "bad": 3}
    assert invoke("data", "stats", "demo").exit_code == 0


def test_stats_of_an_unreadable_file(shared_tmp: Path) -> None:
    path = write_jsonl(shared_tmp / "judge.jsonl", judge_rows(2))
    path.chmod(0o000)
    with unprivileged():
        result = invoke("data", "stats", path)
    assert_clean_error(result, str(path), "Permission denied")


def test_unknown_options_and_missing_paths(tmp_path: Path) -> None:
    assert_clean_error(invoke("data", "stats", tmp_path / "nope.jsonl"), "no such file or directory")
    result = invoke("data", "validate", tmp_path, "--taks", "judge")
    assert result.exit_code == 2 and "No such option: --taks" in result.output and "--task" in result.output
