"""Reading logs: nothing read is an error that says why; empty turns are counted; encoding errors and
oversized integer ids get messages that say what is wrong."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from uxbench.errors import DataError
from uxbench.mining.ingest import IngestReport, iter_log_rows, require_turns


def turn_row(cid: str, index: int, text: object = "hello") -> dict[str, object]:
    return {"conversation_id": cid, "turn_index": index, "role": "user" if index % 2 == 0 else "assistant",
            "content": text}


def write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(("content", "reason"), [
    (b"", "the file holds no rows"),
    (b"\n \n", "the file holds no rows"),
    (b'{"x": 1}\n[]\n{"y": 2}\n', "all 2 rows were invalid and skipped; the first: "),
    (orjson.dumps({**turn_row("a", 0), "role": "system"}) + b"\n", "hold only system or tool messages"),
])
def test_a_read_that_gives_no_turn_raises(tmp_path: Path, content: bytes, reason: str) -> None:
    path = write(tmp_path / "log.jsonl", content)
    with pytest.raises(DataError, match="no turns were read") as info:
        list(iter_log_rows(path, skip_invalid=True))
    assert reason in str(info.value) and str(path) in str(info.value)
    with pytest.raises(DataError, match=reason.split(";")[0]):
        require_turns(path, skip_invalid=True)
    assert list(iter_log_rows(path, skip_invalid=True, allow_empty=True)) == []


def test_no_log_files_under_the_paths(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "notes.txt").write_text("x")
    with pytest.raises(DataError, match="no log files here"):
        iter_log_rows(tmp_path / "logs")


def test_require_turns_stops_at_the_first_turn(tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", orjson.dumps(turn_row("a", 0)) + b"\n{broken\n")
    require_turns(path)  # the broken second line is not reached
    with pytest.raises(DataError, match="line 2"):
        list(iter_log_rows(path))


def test_turns_without_text_are_kept_and_counted(tmp_path: Path) -> None:
    rows = [turn_row("a", 0), turn_row("a", 1, None), turn_row("a", 2, ""), turn_row("a", 3)]
    path = write(tmp_path / "log.jsonl", b"".join(orjson.dumps(r) + b"\n" for r in rows))
    report = IngestReport()
    turns = [t for _, _, t in iter_log_rows(path, report=report)]
    assert len(turns) == 4 and report.empty_turns == 2


def test_invalid_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    line = orjson.dumps(turn_row("a", 0, "ok")) + b"\n" + b'{"conversation_id": "\xc3\x28"}\n'
    path = write(tmp_path / "log.jsonl", line)
    with pytest.raises(DataError, match=r"line 2: not valid UTF-8: byte 0xc3 at offset 21 of the line") as info:
        list(iter_log_rows(path))
    assert "character" not in str(info.value)


def test_an_integer_id_beyond_64_bits_is_not_reported_as_missing(tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl",
                 b'{"conversation_id": 10000000000000000000000, "turn_index": 0, "role": "user", "content": "x"}\n')
    with pytest.raises(DataError, match="field 'conversation_id': is a number but not an exact integer") as info:
        list(iter_log_rows(path))
    assert "is required" not in str(info.value)
    missing = write(tmp_path / "missing.jsonl", b'{"conversation_id": null, "turn_index": 0, "role": "user", '
                                                b'"content": "x"}\n')
    with pytest.raises(DataError, match="field 'conversation_id': is required"):
        list(iter_log_rows(missing, format="canonical"))
