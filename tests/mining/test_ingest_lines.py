"""`ingest.lines_of_row`: a canonical row's bucket line written from its checked fields, without a Turn, is the line
`turns_of_row` + `sessions.spill_line` give (the same bytes, counts and errors), for every kind of value."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from uxbench.data.readers import decode_jsonl_line
from uxbench.errors import DataError
from uxbench.mining.ingest import IngestReport, RowTally, lines_of_row, turns_of_row
from uxbench.mining.logformat import canonical_fields
from uxbench.mining.sessions import fields_line, session_of_lines, spill_line

_ROW = {"conversation_id": "c1", "turn_index": 2, "role": "user", "content": "hello"}
GOOD_ROWS: list[Any] = [
    _ROW,
    {**_ROW, "created_at": "2024-05-01T10:00:00+08:00", "feedback": "thumbs_up", "message_id": 77},
    {**_ROW, "created_at": "2024-05-01T10:00:00.123456Z", "role": "Assistant", "feedback": -1},
    {**_ROW, "created_at": "2024-05-01 10:00:00", "regenerated": True, "metadata": {"a": [1, {"b": None}]}},
    {**_ROW, "created_at": 1714557600123, "regeneration_index": "2", "counters": {"copy": 2, "share": "1"}},
    {**_ROW, "created_at": 1714557600.5, "conversation_id": 12, "turn_index": 3.0},
    {**_ROW, "content": [{"type": "text", "text": "a"}, {"type": "image"}, "b"], "meta": {"x": 1.5e-7, "y": -0.0}},
    {**_ROW, "content": None, "metadata": {"emoji": "\U0001f600 \u2028 \x00 \"q\" \\", "big": 2**64 - 1}},
    {**_ROW, "content": "x" * 130_000, "metadata": {"f": 1e300, "neg": -(2**63)}},
    {**_ROW, "role": "system"},
    {**_ROW, "role": " User ", "conversation_id": " padded ", "feedback": 0, "counters": {}, "metadata": None},
    {**_ROW, "role": "gpt", "turn_index": "7", "message_id": " m1 ", "regeneration_index": None, "regenerated": False},
    {"conversation_id": "p", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
    {"cid": "p1", "convidx": 0, "modelprompt": "q", "answer": "a", "like_cnt": 1},
]
BAD_ROWS: list[Any] = [
    {**_ROW, "content": 5},
    {k: v for k, v in _ROW.items() if k != "content"},
    {**_ROW, "turn_index": -1},
    {**_ROW, "turn_index": "two"},
    {**_ROW, "regenerated": "yes"},
    {**_ROW, "counters": [1]},
    {**_ROW, "counters": {"copy": True}},
    {**_ROW, "feedback": "meh"},
    {**_ROW, "created_at": "not a time"},
    {**_ROW, "conversation_id": 1.5},
    {**_ROW, "role": "narrator"},
    {**_ROW, "role": ["user"]},
    {**_ROW, "turn_index": True},
    {**_ROW, "conversation_id": "  "},
    {**_ROW, "metadata": "note"},
    {**_ROW, "conversation_id": None, "turn_index": -2},
    {"unknown": 1},
    [_ROW],
    DataError("invalid JSON (test)"),
]


def _both(row: Any, fmt: str = "auto", skip: bool = False) -> tuple[Any, Any]:
    """(lines_of_row's result, the lines of turns_of_row's turns), each with its counts, or the error raised."""
    results = []
    for fast in (True, False):
        report, tally = IngestReport(), RowTally()
        try:
            if fast:
                out: Any = lines_of_row("f.jsonl", 3, row, fmt, skip, report, tally)
            else:
                out = [(t.conversation_id, spill_line(t)) for t in turns_of_row("f.jsonl", 3, row, fmt, skip, report,
                                                                                  tally)]
        except DataError as err:
            out = ("raised", str(err), err.field, err.line, err.source)
        report.count(tally)
        results.append((out, report.model_dump()))
    return results[0], results[1]


@pytest.mark.parametrize("row", GOOD_ROWS)
def test_a_good_row_gives_the_lines_of_its_turns(row: Any) -> None:
    fast, slow = _both(row)
    assert fast == slow
    for cid, line in fast[0]:  # and they read back as the same turn
        assert session_of_lines(cid, [line]).turns[0].conversation_id == cid


@pytest.mark.parametrize("row", [r for r in GOOD_ROWS if isinstance(r, dict) and "role" in r])
def test_the_canonical_format_named(row: dict[str, Any]) -> None:
    assert _both(row, "canonical") == _both(row, "auto")


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("row", BAD_ROWS)
def test_a_bad_row_gives_the_same_error(row: Any, skip: bool) -> None:
    fast, slow = _both(row, skip=skip)
    assert fast == slow
    assert fast[0] == [] if skip else fast[0][0] == "raised"


def test_a_value_orjson_cannot_write_falls_back_to_the_turn() -> None:
    row = {**_ROW, "metadata": {"huge": 2**70}}  # past 64 bits: the standard library's JSON reads such a line
    fields = canonical_fields(row)
    assert fields is not None and fields_line(fields) is None
    fast, slow = _both(row)
    assert fast == slow and fast[0][0][1].count(b"1180591620717411303424") == 1


def test_values_of_a_line_with_nan_read_by_the_fallback_decoder() -> None:
    row = decode_jsonl_line(b'{"conversation_id": "c", "turn_index": 0, "role": "user", "content": "x", '
                            b'"metadata": {"n": NaN, "i": -Infinity}}\n')
    fast, slow = _both(row)
    assert fast == slow and b'"meta":{"n":null,"i":null}' in fast[0][0][1]


def test_parquet_values_are_written_as_pydantic_writes_them() -> None:
    """A Parquet row's metadata may hold dates, times, decimals and bytes: pydantic's conversion writes them."""
    zone = dt.timezone(dt.timedelta(hours=-3, minutes=-30))
    meta = {"at": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=zone), "naive": dt.datetime(2024, 1, 2),
            "day": dt.date(2024, 1, 2), "clock": dt.time(1, 2, 3), "span": dt.timedelta(seconds=90),
            "price": Decimal("1.50"), "raw": b"bytes", "tags": {"a"}}
    row = {**_ROW, "created_at": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=zone), "metadata": meta}
    fields = canonical_fields(row)
    assert fields is not None and fields_line(fields) is not None
    fast, slow = _both(row)
    assert fast == slow
