"""The memo of short verdict readings (`scoring.verdict._parse_labels_memo`): the same answer as reading the
output afresh, for the first and the repeated call, within its bound."""

from __future__ import annotations

import pytest
from test_verdict_table import BINARY_CASES

from uxbench.scoring import verdict
from uxbench.scoring.verdict import MEMO_ENTRIES, MEMO_MAX_CHARS, parse_binary, parse_three_class


@pytest.fixture(autouse=True)
def _empty_memo() -> None:
    verdict._MEMO.clear()


@pytest.mark.parametrize(("text", "lang", "expected"), BINARY_CASES)
def test_repeated_reading_is_the_fresh_reading(text: str, lang: str | None, expected: str | None) -> None:
    fresh = verdict._parse_labels(text, lang, None, verdict._BINARY)
    assert parse_binary(text, lang) == fresh
    assert parse_binary(text, lang) == fresh  # from the memo
    assert fresh.label == expected


def test_the_key_holds_everything_that_decides_the_verdict() -> None:
    # same text, other language, reasoning or label set: each its own reading
    assert parse_binary("", "zh", reasoning="结论：好").label == "good"
    assert parse_binary("", "zh", reasoning="结论：差").label == "bad"
    assert parse_binary("", "zh").label is None
    assert parse_three_class("中", "zh").label == "neutral"
    assert parse_binary("中", "zh").label is None
    assert parse_binary("good", "en") == verdict._parse_labels("good", "en", None, verdict._BINARY)


def test_long_outputs_are_not_remembered() -> None:
    long = "x" * MEMO_MAX_CHARS + "\n好"
    parse_binary(long, "zh")
    parse_binary("好", "zh", reasoning="r" * MEMO_MAX_CHARS)
    assert verdict._MEMO == {}
    parse_binary("好", "zh")
    assert len(verdict._MEMO) == 1


def test_the_memo_stays_bounded() -> None:
    for i in range(MEMO_ENTRIES + 10):
        parse_binary(f"答案 {i}：好", "zh")
    assert 0 < len(verdict._MEMO) <= MEMO_ENTRIES
    assert parse_binary("差", "zh").label == "bad"
