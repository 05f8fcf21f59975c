"""Reading nothing is an error that says why; exact duplicate rows and empty history messages are counted;
encoding errors name the byte offset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from uxbench.data.loaders import load_cases
from uxbench.errors import DataError


def write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def judge(cid: str, **extra: Any) -> dict[str, Any]:
    return {"cid": cid, "query": "q", "agent_response_full": "a", "ground_truth": 1, **extra}


@pytest.mark.parametrize(("name", "content"), [
    ("empty.jsonl", b""), ("blank.jsonl", b" \n\n"), ("list.json", b"[]"), ("wrapped.json", b'{"rows": []}'),
])
def test_an_empty_input_raises_when_iterated(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    source = load_cases(path)
    with pytest.raises(DataError, match="no cases were read: the input holds no rows") as info:
        list(source)
    assert str(path) in str(info.value)
    with pytest.raises(DataError, match="no cases were read"):
        source.require_nonempty()
    assert list(source.with_options(allow_empty=True)) == []  # asked for: an empty source is allowed


def test_every_row_invalid_with_skip_invalid(tmp_path: Path) -> None:
    path = write(tmp_path / "rows.jsonl", [{"cid": "a"}, {"cid": "b"}])
    source = load_cases(path, skip_invalid=True)
    with pytest.raises(DataError, match=r"all 2 rows were invalid and skipped; the first: .*line 1, field 'query'"):
        source.require_nonempty()
    with pytest.raises(DataError, match="line 1, field 'query'"):  # without skip_invalid: the row's own error
        load_cases(path).require_nonempty()


def test_inputs_that_hold_only_other_tasks(tmp_path: Path) -> None:
    write(tmp_path / "task3_recovery.jsonl", [{"cid": "r", "failed_response": "x", "user_complaint": "no"}])
    with pytest.raises(DataError, match="every file here is for another task than judge"):
        load_cases(tmp_path, task="judge").require_nonempty()
    mixed = write(tmp_path / "mixed.jsonl", [{**judge("a"), "task": "eval"}])
    with pytest.raises(DataError, match="all 1 rows are for other tasks than recovery"):
        load_cases(mixed, task="recovery").require_nonempty()


def test_require_nonempty_reads_only_up_to_the_first_case(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(judge("a")) + "\n{broken\n")
    load_cases(path).require_nonempty()  # the bad second line is not reached
    with pytest.raises(DataError, match="line 2"):
        list(load_cases(path))


def test_exact_duplicate_rows_are_left_out_and_counted(tmp_path: Path) -> None:
    rows = [judge("a"), judge("b"), judge("a"), judge("a", query="other"), judge("a")]
    path = write(tmp_path / "task1_judge.jsonl", rows)
    write(tmp_path / "task1_judge_copy.jsonl", [judge("a")])  # another file: another source, kept
    source = load_cases(tmp_path)
    cases = list(source)
    assert [c.id for c in cases] == ["a", "b", "a", "a"]
    report = source.read_report
    assert report.rows == 6 and report.cases == 4 and report.exact_duplicates == 2
    assert report.duplicate_examples == [f"{path}, line 3 repeats line 1", f"{path}, line 5 repeats line 1"]
    assert "2 exact duplicate rows were left out" in report.notes()[0]


def test_history_messages_without_text_are_counted(tmp_path: Path) -> None:
    history = [{"role": "user", "content": None}, {"role": "assistant", "message": ""}, {"role": "user",
                                                                                         "content": "hi"}]
    path = write(tmp_path / "rows.jsonl", [judge("a", history=history), judge("b")])
    source = load_cases(path)
    list(source)
    assert (source.read_report.empty_messages, source.read_report.cases_with_empty_messages) == (2, 1)
    assert "（空）" in source.read_report.notes()[0]


def test_encoding_errors_give_the_byte_offset(tmp_path: Path) -> None:
    lines = tmp_path / "rows.jsonl"
    lines.write_bytes(b'{"cid": "\xe4\xb8\xad\xff"}\n')
    with pytest.raises(DataError, match=r"line 1: not valid UTF-8: byte 0xff at offset 12 of the line"):
        list(load_cases(lines))
    whole = tmp_path / "rows.json"
    whole.write_bytes(b'[{"cid": "ab\xc3"}]')
    with pytest.raises(DataError, match=r"not valid UTF-8: byte 0xc3 at offset 12 \(counting from 0\)"):
        list(load_cases(whole))
