"""Stage 01's read in the worker pool: the buckets and counts a serial read gives, errors where they are."""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ingest_support import turn_row, write_jsonl

from uxbench.errors import DataError
from uxbench.mining.ingest import IngestReport, iter_log_rows
from uxbench.mining.pipeline import driver_stages
from uxbench.mining.pipeline.driver_stages import spill_inputs
from uxbench.mining.pipeline.engine import LocalEngine
from uxbench.mining.pipeline.store import StageDir
from uxbench.mining.sessions import (
    BucketWriter,
    MemoryBuckets,
    build_sessions,
    grouped_lines,
    private_spill_dir,
    session_of_lines,
)
from uxbench.mining.types import Session


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalEngine]:
    monkeypatch.setattr(driver_stages, "CHUNK_LINES", 3)  # many chunks, so the order of results matters
    monkeypatch.setattr(driver_stages, "CHUNK_BYTES", 64)
    engine = LocalEngine(2)
    yield engine
    engine.close()


def _spill(
    tmp_path: Path, inputs: Sequence[Path], pool: LocalEngine, skip: bool = False
) -> tuple[IngestReport, list[Session]]:
    spill = private_spill_dir(tmp_path / "work")
    writer = BucketWriter(spill, 3)
    try:
        report = spill_inputs(tuple(str(p) for p in inputs), "auto", skip, writer, pool)
    finally:
        writer.close()
    return report, [session_of_lines(cid, lines) for cid, lines in grouped_lines(spill, 3)]


def test_parallel_read_gives_the_serial_sessions_and_counts(tmp_path: Path, pool: LocalEngine) -> None:
    rows: list[object] = []
    for i in range(40):  # interleaved conversations, a duplicate row, an empty turn, a batch-wrapper line
        rows.append(turn_row(f"c{i % 7}", i // 7, "" if i == 11 else f"text {i}"))
    rows.insert(5, rows[3])
    rows.append([turn_row("w", 0), turn_row("w", 1)])
    jsonl = write_jsonl(tmp_path / "a.jsonl", rows)
    gz = tmp_path / "b.jsonl.gz"
    with gzip.open(gz, "wb") as handle:
        handle.write(b"".join(orjson.dumps(turn_row(f"g{i % 3}", i // 3)) + b"\n" for i in range(10)))
    parquet = tmp_path / "c.parquet"
    pq.write_table(pa.Table.from_pylist([turn_row(f"p{i % 2}", i // 2) for i in range(9)]), parquet, row_group_size=4)
    inputs = [jsonl, gz, parquet]

    report, sessions = _spill(tmp_path, inputs, pool)
    serial = IngestReport()
    expected = build_sessions([t for _, _, t in iter_log_rows(inputs, report=serial)])
    assert sorted(sessions, key=lambda s: s.conversation_id) == expected
    assert report.model_dump() == serial.model_dump()
    assert (report.files, report.rows, report.turns, report.empty_turns) == (3, 62, 62, 1)


def test_parallel_read_stops_at_the_first_bad_row_or_counts_it(tmp_path: Path, pool: LocalEngine) -> None:
    rows: list[object] = [turn_row("a", i) for i in range(10)]
    rows[6] = {**turn_row("a", 6), "role": "narrator"}
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with path.open("ab") as handle:
        handle.write(b"{broken\n")
    with pytest.raises(DataError) as info:
        _spill(tmp_path, [path], pool)
    assert (info.value.source, info.value.line, info.value.field) == (str(path), 7, "role")

    report, sessions = _spill(tmp_path, [path], pool, skip=True)
    assert (report.rows, report.turns, report.invalid_rows) == (11, 9, 2)
    assert [(e.line, e.field) for e in report.errors] == [(7, "role"), (11, None)]
    assert len(sessions) == 1 and len(sessions[0].turns) == 9


def test_a_parallel_read_of_nothing_says_why(tmp_path: Path, pool: LocalEngine) -> None:
    path = write_jsonl(tmp_path / "junk.jsonl", [{"text": "unknown shape"}] * 5)
    with pytest.raises(DataError, match="no turns were read: all 5 rows were invalid and skipped; the first: "):
        _spill(tmp_path, [path], pool, skip=True)


def test_memory_buckets_group_in_the_order_of_the_bucket_files(tmp_path: Path) -> None:
    lines = [(f"c{i % 11}", f"line {i}\n".encode()) for i in range(60)]
    on_disk, in_memory = BucketWriter(private_spill_dir(tmp_path / "work"), 3), MemoryBuckets(3)
    for conversation_id, line in lines:
        on_disk.write(conversation_id, orjson.dumps(conversation_id) + b"\t" + line)
        in_memory.write(conversation_id, orjson.dumps(conversation_id) + b"\t" + line)
    on_disk.close()
    expected = list(grouped_lines(on_disk.spill, 3))
    assert [cid for cid, _ in expected] != sorted(cid for cid, _ in expected)  # the buckets' order, not the ids'
    assert list(in_memory.grouped()) == expected
    assert list(in_memory.grouped()) == []  # handed out once


def test_a_large_input_is_grouped_on_disk_a_small_one_in_memory_with_the_same_batches(
        tmp_path: Path, pool: LocalEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [turn_row(f"c{i % 7}", i // 7) for i in range(42)])
    seen: list[str] = []
    real_grouped = driver_stages.grouped_lines

    def grouped(spill: Path, n_buckets: int) -> Iterator[tuple[str, list[bytes]]]:
        seen.append("disk")
        yield from real_grouped(spill, n_buckets)

    monkeypatch.setattr(driver_stages, "grouped_lines", grouped)
    shards: dict[str, list[bytes]] = {}
    for where, limit in (("memory", 3), ("disk", 2)):  # 3 buckets: up to the limit in memory
        monkeypatch.setattr(driver_stages, "MEMORY_BUCKETS", limit)
        stage = StageDir(tmp_path / where, "01-sessions", "key")
        stage.prepare()
        driver_stages.run_sessions_stage(
            stage, (str(path),), fmt="auto", skip_invalid=False, batch_size=2, n_buckets=3, salt=b"s",
            tmpdir=tmp_path / f"tmp-{where}", pool=pool, progress=lambda _: None)
        shards[where] = [stage.shard_path(b).read_bytes() for b in range(4)]
        assert not (tmp_path / f"tmp-{where}").exists()
    assert seen == ["disk"]
    assert shards["memory"] == shards["disk"]


def test_an_input_grouped_in_memory_hands_out_its_largest_batches_first_with_the_same_shards(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 8 conversations, batches of 2: conversation i has i + 1 turns of 40 * (i + 1) characters, so a batch's text
    # grows with its number and the input's own order would hand out the largest batch last
    rows = [turn_row(f"c{i}", t, "x" * 40 * (i + 1)) for i in range(8) for t in range(i + 1)]
    path = write_jsonl(tmp_path / "a.jsonl", rows)
    handed: list[int] = []
    real = driver_stages.deid_shard

    def recording(stage: StageDir, batch: int, *args: object) -> dict[str, int]:
        handed.append(batch)
        return real(stage, batch, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(driver_stages, "deid_shard", recording)
    shards: dict[str, list[bytes]] = {}
    for where, limit in (("memory", 4), ("disk", 0)):
        handed.clear()
        monkeypatch.setattr(driver_stages, "MEMORY_BUCKETS", limit)
        stage = StageDir(tmp_path / where, "01-sessions", "key")
        stage.prepare()
        engine = LocalEngine(1)  # in-line: jobs run in the order they are handed out
        try:
            marker = driver_stages.run_sessions_stage(
                stage, (str(path),), fmt="auto", skip_invalid=False, batch_size=2, n_buckets=1, salt=b"s",
                tmpdir=tmp_path / f"tmp-{where}", pool=engine, progress=lambda _: None)
        finally:
            engine.close()
        assert marker["batches"] == 4
        sizes = [sum(len(t) for t in pq.read_table(stage.shard_path(b)).column("session").to_pylist())
                 for b in range(4)]
        assert sizes == sorted(sizes)  # batch b holds conversations c2b and c2b+1
        assert handed == ([3, 2, 1, 0] if where == "memory" else [0, 1, 2, 3])
        shards[where] = [stage.shard_path(b).read_bytes() for b in range(4)]
    assert shards["memory"] == shards["disk"]


def test_a_bucket_line_holds_the_turns_json_as_model_dump_json_writes_it() -> None:
    import datetime

    from pydantic_core import PydanticSerializationError

    from uxbench.mining.sessions import spill_line
    from uxbench.mining.types import Turn

    text = 'h\u00e9llo\n"x" \U0001F600 \u2028'
    turn = Turn(conversation_id="c\u00e9\t1", turn_index=3, role="assistant", content=text,
                created_at=datetime.datetime(2024, 5, 1, 10, 0, 0, 123, tzinfo=datetime.timezone(
                    datetime.timedelta(hours=2))), feedback="dislike", meta={"a": [1, 2.5, None], "big": 2**70},
                counters={"copy": 2}, message_id="m1")
    line = spill_line(turn)
    assert line == orjson.dumps(turn.conversation_id) + b"\t" + turn.model_dump_json().encode("utf-8") + b"\n"
    assert session_of_lines(turn.conversation_id, [line]).turns == [turn]
    with pytest.raises(PydanticSerializationError):  # a lone surrogate: refused as model_dump_json refuses it
        spill_line(Turn(conversation_id="c", turn_index=0, role="user", content="\ud83d"))
