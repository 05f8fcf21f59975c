"""Reading a run's cases in a forked process (`data.read_ahead.ReadAhead`): the same cases, bytes, order and
reports as reading them in the run's own process; an invalid row stops it with its line named; closing it early
stops the worker."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from uxbench.data.loaders import CaseSource, load_cases
from uxbench.data.read_ahead import BATCH, ReadAhead, usable
from uxbench.errors import DataError


def _row(i: int, **extra: Any) -> dict[str, Any]:
    return {"cid": f"c{i}", "ground_truth": 1 if i % 2 else -1, "query": f"问题 {i}", "response": f"回答 {i}",
            "history": [{"role": "user", "content": "你好"}, {"role": "assistant", "content": "你好！"}],
            "scenario": "信息与知识查询", **extra}


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def _rows(n: int) -> list[Any]:
    rows: list[Any] = [_row(i) for i in range(n)]
    rows[5] = rows[3]  # an exact duplicate: left out, and reported
    rows[9] = {"cid": "bad", "ground_truth": 0, "query": "q", "response": "r"}  # invalid (0 is ambiguous)
    rows[11] = "{not json"
    return rows


async def _ahead(source: CaseSource) -> list[tuple[str, bytes]]:
    return [(case.id, case_json) async for case, case_json in ReadAhead(source)]


def _here(source: CaseSource) -> list[tuple[str, bytes]]:
    return [(case.id, case.__pydantic_serializer__.to_json(case)) for case in source]


def _usable(tmp_path: Path) -> None:
    if not usable(load_cases(str(_write(tmp_path / "probe.jsonl", [_row(0)])), task="judge")):
        pytest.skip("reading ahead needs a platform that forks (Linux)")


def test_the_same_cases_bytes_order_and_reports(tmp_path: Path) -> None:
    _usable(tmp_path)
    data = _write(tmp_path / "cases.jsonl", _rows(3 * BATCH + 7))
    source = load_cases(str(data), task="judge", skip_invalid=True)
    here = _here(source)
    skipped, read, curated_out = source.iteration_state()
    other = load_cases(str(data), task="judge", skip_invalid=True)
    ahead = asyncio.run(_ahead(other))
    assert ahead == here and len(here) == 3 * BATCH + 7 - 3
    assert other.skipped.model_dump() == skipped.model_dump() and skipped.count == 2
    assert other.read_report.model_dump() == read.model_dump() and read.exact_duplicates == 1
    assert other.curated_out == curated_out


def test_curated_cases_are_left_out_there_too(tmp_path: Path) -> None:
    _usable(tmp_path)
    data = _write(tmp_path / "cases.jsonl", [_row(i) for i in range(40)])
    source = load_cases(str(data), task="judge").excluding(["c2", "c30"])
    ahead = asyncio.run(_ahead(source))
    assert [cid for cid, _ in ahead] == [f"c{i}" for i in range(40) if i not in (2, 30)]
    assert source.curated_out == 2


def test_an_invalid_row_stops_the_reading_with_its_line_named(tmp_path: Path) -> None:
    _usable(tmp_path)
    rows: list[Any] = [_row(i) for i in range(2 * BATCH)]
    rows[BATCH + 3] = {"cid": "bad", "ground_truth": 0, "query": "q", "response": "r"}
    data = _write(tmp_path / "cases.jsonl", rows)
    got: list[str] = []

    async def main() -> None:
        async for case, _ in ReadAhead(load_cases(str(data), task="judge")):
            got.append(case.id)

    with pytest.raises(DataError) as caught:
        asyncio.run(main())
    assert caught.value.line == BATCH + 4 and caught.value.field == "ground_truth"
    with pytest.raises(DataError) as here:
        list(load_cases(str(data), task="judge"))
    assert str(caught.value) == str(here.value)
    assert got == [f"c{i}" for i in range(BATCH + 3)]  # every case before it, as reading here gives them


def test_stopping_early_stops_the_worker(tmp_path: Path) -> None:
    _usable(tmp_path)
    data = _write(tmp_path / "cases.jsonl", [_row(i) for i in range(20 * BATCH)])
    reader = ReadAhead(load_cases(str(data), task="judge"))

    async def main() -> Any:
        async for _ in reader:
            break
        proc = reader._proc
        await reader.aclose()
        return proc

    proc = asyncio.run(main())
    assert proc is not None and not proc.is_alive() and reader._proc is None
