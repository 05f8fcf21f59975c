"""Streaming readers over JSONL, gzip and Parquet files."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ingest_support import turn_row, write_jsonl

from uxbench.data.readers import iter_jsonl
from uxbench.errors import ConfigError, DataError
from uxbench.mining.ingest import IngestReport, batched, iter_log_rows


def test_jsonl_gz_and_parquet_read_alike(tmp_path: Path) -> None:
    rows = [turn_row("a", i) for i in range(4)]
    write_jsonl(tmp_path / "a.jsonl", rows)
    with gzip.open(tmp_path / "b.jsonl.gz", "wb") as handle:
        handle.write(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, tmp_path / "c.parquet", row_group_size=2)
    results = {name: [(line, t) for _, line, t in iter_log_rows(tmp_path / name)]
               for name in ("a.jsonl", "b.jsonl.gz", "c.parquet")}
    assert results["a.jsonl"] == results["b.jsonl.gz"] == results["c.parquet"]
    assert [line for line, _ in results["a.jsonl"]] == [1, 2, 3, 4]


def test_directory_order_blank_lines_and_wrapper_lines(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    write_jsonl(tmp_path / "sub" / "2.jsonl", [turn_row("b", 0)])
    write_jsonl(tmp_path / ".hidden" / "x.jsonl", [turn_row("hidden", 0)])
    (tmp_path / "notes.txt").write_text("ignored")
    path = tmp_path / "1.jsonl"
    path.write_bytes(b"\n" + orjson.dumps([turn_row("a", 0), turn_row("a", 1)]) + b"\n   \n")
    got = [(Path(src).name, line, t.conversation_id) for src, line, t in iter_log_rows([tmp_path])]
    assert got == [("1.jsonl", 2, "a"), ("1.jsonl", 2, "a"), ("2.jsonl", 1, "b")]


def test_product_rows_expand_to_two_turns(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [{"cid": "p", "convidx": 0, "modelprompt": "q", "answer": "a"}])
    report = IngestReport()
    turns = [t for _, _, t in iter_log_rows(path, report=report)]
    assert [t.role for t in turns] == ["user", "assistant"]
    assert (report.files, report.rows, report.turns, report.invalid_rows) == (1, 1, 2, 0)


def test_invalid_rows_raise_with_location(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(orjson.dumps(turn_row("a", 0)) + b"\n{broken\n")
    with pytest.raises(DataError) as info:
        list(iter_log_rows(path))
    assert info.value.source == str(path) and info.value.line == 2
    write_jsonl(path, [turn_row("a", 0), {**turn_row("a", 1), "role": "secret-13812345678"}])
    with pytest.raises(DataError) as info:
        list(iter_log_rows(path))
    assert (info.value.line, info.value.field) == (2, "role")
    assert "13812345678" not in str(info.value)


def test_skip_invalid_counts_and_keeps_first_reasons(tmp_path: Path) -> None:
    bad_index = {**turn_row("a", 1), "turn_index": -2}
    rows: list[object] = [turn_row("a", 0), {"text": "unknown shape"}, 7, bad_index]
    path = write_jsonl(tmp_path / "mixed.jsonl", rows)
    with path.open("ab") as handle:
        handle.write(b"not json at all\n")
    report = IngestReport()
    turns = list(iter_log_rows(path, skip_invalid=True, report=report))
    assert len(turns) == 1
    assert report.rows == 5 and report.invalid_rows == 4
    assert [(e.line, e.field) for e in report.errors] == [(2, None), (3, None), (4, "turn_index"), (5, None)]
    assert all(e.source == str(path) for e in report.errors)


def test_reading_is_lazy(tmp_path: Path) -> None:
    """The first turn arrives before a broken line further down is ever parsed: nothing reads ahead."""
    path = tmp_path / "lazy.jsonl.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(orjson.dumps(turn_row("a", 0)) + b"\n" + b"{broken\n")
    rows = iter_log_rows(path)
    assert next(rows)[2].conversation_id == "a"
    with pytest.raises(DataError):
        next(rows)


def test_memory_stays_flat(tmp_path: Path) -> None:
    n = 8_000
    path = write_jsonl(tmp_path / "big.jsonl", [turn_row(f"c{i // 10}", i % 10, "x" * 600) for i in range(n)])
    assert path.stat().st_size > 4_000_000
    tracemalloc.start()
    count = sum(1 for _ in iter_log_rows(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == n
    assert peak < 1_000_000  # a few rows at a time, not the 4+ MB file


def test_errors_for_paths_and_format(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        iter_log_rows(tmp_path / "missing.jsonl")
    (tmp_path / "x.csv").write_text("a,b")
    with pytest.raises(DataError):
        iter_log_rows(tmp_path / "x.csv")
    with pytest.raises(ConfigError):
        iter_log_rows(tmp_path, format="xml")
    (tmp_path / "bad.parquet").write_bytes(b"nope")
    with pytest.raises(DataError):
        list(iter_log_rows(tmp_path / "bad.parquet"))


def test_batched() -> None:
    assert list(batched(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(batched([], 3)) == []
    with pytest.raises(ValueError):
        list(batched([1], 0))


def test_lines_are_decoded_as_the_dataset_reader_decodes_them(tmp_path: Path) -> None:
    # A UTF-8 BOM (a file saved by Excel or Notepad): the dataset reader read it, the miner refused the first
    # line ("not valid JSON (at character 0)").
    body = orjson.dumps(turn_row("a", 0)) + b"\n\n" + orjson.dumps(turn_row("a", 1)) + b"\n"
    for name, raw in (("bom.jsonl", b"\xef\xbb\xbf" + body), ("bom.jsonl.gz", gzip.compress(b"\xef\xbb\xbf" + body))):
        path = tmp_path / name
        path.write_bytes(raw)
        turns = [(line, t.conversation_id, t.turn_index) for _, line, t in iter_log_rows(path)]
        assert turns == [(1, "a", 0), (3, "a", 1)]
        assert [line for line, _ in iter_jsonl(path)] == [1, 3]  # the same lines from the same reader
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(orjson.dumps(turn_row("a", 0)) + b"\n" + b'{"content": "caf\xe9"}\n')
    with pytest.raises(DataError, match=r"bad.jsonl, line 2: not valid UTF-8: byte 0xe9 at offset 16 of the line"):
        list(iter_log_rows(bad))
