"""`normalised_longer_than` decides a non-ASCII text from the characters normalising keeps one for one (`KEPT`)
without normalising it: those characters must survive NFKC, casefolding and the removal of non-word characters,
each as a character of its own, next to anything."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest

from uxbench.mining.signals.similarity import KEPT, normalise, normalised_longer_than

_NON_WORD = re.compile(r"[\W_]")
_KEPT_CHARS = [chr(c) for c in range(sys.maxunicode + 1) if KEPT.fullmatch(chr(c))]


def test_kept_characters_stay_themselves() -> None:
    for char in _KEPT_CHARS:
        assert unicodedata.normalize("NFKC", char) == char
        assert unicodedata.combining(char) == 0
        assert len(normalise(char)) == 1


def test_no_composition_takes_a_kept_character_after_its_first() -> None:
    """Canonical composition can merge a kept character only with marks after it, into a character that still
    normalises to a word character; it never absorbs a kept character into the one before it."""
    kept = set(_KEPT_CHARS)
    for code in range(sys.maxunicode + 1):
        decomposition = unicodedata.decomposition(chr(code))
        if not decomposition or decomposition.startswith("<"):
            continue
        parts = [chr(int(h, 16)) for h in decomposition.split()]
        assert not kept.intersection(parts[1:]), hex(code)
        if parts[0] in kept:
            assert normalise(chr(code)), hex(code)


@pytest.mark.parametrize("text", [
    "", "é", "ab", "abc", "a\u0301b\u0301c\u0301", "İİİ", "ǰǰ", "中文", "中文字", "中\u0301文\u0301字\u0301",
    "①②③", "ﬁ",
    "ａｂｃ", "a_b", "—a—b—", "ß", "x" * 70 + "é", "é" * 80 + "abc", " " * 200 + "中文字", "e\u0301\u0301", "가각",
])
@pytest.mark.parametrize("chars", [0, 1, 2, 3, 5])
def test_normalised_longer_than_matches_normalise(text: str, chars: int) -> None:
    assert normalised_longer_than(text, chars) == (len(normalise(text)) > chars)
