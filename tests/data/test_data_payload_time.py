"""Product payloads and timestamps: one reading, shared by the dataset loader and the log miner.

Before, the loader joined a payload's text blocks with blank lines and the miner glued them together
("北京今天" + "晴。" vs "Boil for 9 minutes." / "Then cool ..."); the loader read times without a zone as
naive datetimes, the miner as UTC (and the two could not be subtracted from each other).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import orjson
import pytest

from uxbench.data.messages import parse_message
from uxbench.data.payload import PayloadText, read_payload_field, unwrap_payload
from uxbench.data.timestamps import parse_timestamp
from uxbench.errors import DataError
from uxbench.mining.logformat import parse_row

UTC = timezone.utc

PAYLOAD = {"content": [
    {"type": "think", "msg": "plan the answer"},
    {"type": "deepSearch", "msg": {"steps": [{"title": "searched egg times"}, {"text": "reading"}]}},
    {"type": "text", "msg": "Boil the eggs "},
    {"type": "text", "msg": "for 9 minutes.", "marks": []},
    {"type": "image", "msg": "", "url": "https://example.com/egg.png"},
    {"type": "searchGuid", "msg": "", "docs": [{"title": "Eggs"}]},
    {"type": "text", "msg": "  Then cool in ice water.  "},
]}
TEXT = "Boil the eggs for 9 minutes.\n\nThen cool in ice water."
REASONING = "plan the answer\n\nsearched egg times\n\nreading"


def test_text_blocks_join_into_runs_and_paragraphs() -> None:
    # Consecutive text blocks are one run (joined as they are); a card or image between them starts a new
    # paragraph (a blank line); paragraphs are stripped.
    for value in (PAYLOAD, json.dumps(PAYLOAD), PAYLOAD["content"]):
        assert read_payload_field(value) == PayloadText(
            TEXT, REASONING, ("think", "deepSearch", "text", "text", "image", "searchGuid", "text"))
    assert unwrap_payload(json.dumps(PAYLOAD)) == (TEXT, REASONING)


def test_the_loader_and_the_miner_read_a_payload_alike() -> None:
    message = parse_message({"role": "assistant", "message": json.dumps(PAYLOAD)}, "history[0]")
    row = {"cid": "p1", "convidx": 0, "modelprompt": "eggs?", "answer": orjson.dumps(PAYLOAD).decode()}
    _, turn = parse_row(row, "product")
    assert message.content == turn.content == TEXT
    assert message.reasoning == turn.meta["reasoning"] == REASONING


def test_what_counts_as_a_payload() -> None:
    # The loader: a reply may itself be JSON, so only product shapes count.
    assert unwrap_payload('[{"type": "fruit", "msg": "apple"}]') is None
    assert unwrap_payload('{"content": "just text"}') is None
    assert unwrap_payload('[{"type": "text", "msg": "hi"}]') == ("hi", None)
    assert unwrap_payload("plain") is None
    # The miner's `answer` field holds a payload by definition: every shape is read, else the raw text.
    assert read_payload_field('{"msg": "x"}') == PayloadText("x", None, ())
    assert read_payload_field([{"type": "text", "text": "y"}]) == PayloadText("y", None, ("text",))
    assert read_payload_field(None) == PayloadText("", None, ())
    assert read_payload_field("plain") == PayloadText("plain", None, ())
    assert read_payload_field("{not json") == PayloadText("{not json", None, ())
    assert read_payload_field('{"content": []}') == PayloadText("", None, ())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T18:00:00+08:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01 10:00:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024/05/01 10:00:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01T10:00:00.5Z", datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=UTC)),
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        (1714557600, datetime(2024, 5, 1, 10, tzinfo=UTC)),
        (1714557600000, datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("1714557600.25", datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=UTC)),
        (datetime(2024, 5, 1, 10), datetime(2024, 5, 1, 10, tzinfo=UTC)),
        (None, None),
        ("", None),
    ],
)
def test_timestamps_are_aware_with_naive_read_as_utc(value: object, expected: datetime | None) -> None:
    for lenient in (False, True):
        parsed = parse_timestamp(value, lenient=lenient)
        assert parsed == expected
        assert parsed is None or parsed.utcoffset() is not None


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01 10:00:00", -5, True, [1], "²", float("nan"), 10**30])
def test_bad_timestamps_raise_naming_the_field_or_are_none_when_lenient(value: object) -> None:
    with pytest.raises(DataError) as info:
        parse_timestamp(value, "created_at")
    assert info.value.field == "created_at" and "yesterday" not in str(info.value)
    assert parse_timestamp(value, "created_at", lenient=True) is None


def test_loader_and_miner_times_can_be_subtracted() -> None:
    message = parse_message({"role": "user", "message": "q", "create_time": "2024-05-01 10:00:00"}, "h[0]")
    [turn] = parse_row({"conversation_id": "c", "turn_index": 0, "role": "user", "content": "q",
                        "created_at": 1714557607})
    assert message.created_at is not None and turn.created_at is not None
    assert turn.created_at - message.created_at == timedelta(seconds=7)
