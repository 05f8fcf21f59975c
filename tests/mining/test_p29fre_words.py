"""`fastre.words_of` on a text that goes on from the last one it split (reusing that one's words) gives exactly the
words a fresh split gives: the cut inside a word (whose cut-off part is itself a tested word, or not), on a word
edge, on an apostrophe, after non-ASCII or CJK text, with the rest empty of words."""

from __future__ import annotations

import pytest

from uxbench.mining.signals import fastre
from uxbench.mining.signals.fastre import words_of

_FILL = "lorem ipsum dolor sit amet " * 4  # past the shortest text `words_of` goes on from
_CASES = [
    (_FILL + "the code does not wo", "rk at all"),  # "wo" is not tested; "work" is
    (_FILL + "it is not", "hing but still not working"),  # "not" (tested) cut from "nothing"
    (_FILL + "an error", "s list"),  # "error" cut from "errors"
    (_FILL + "an error", " again"),  # a whole word at the cut
    (_FILL + "still ", "getting it"),
    (_FILL + "still", " getting"),
    (_FILL + "doesn", "'t work"),
    (_FILL + "doesn'", "t work"),
    (_FILL + "中文的错误 error", "还是报错 fix"),
    (_FILL + "é", "rror fix"),
    (_FILL + "run", "ning"),
    (_FILL + "x" * 40, "error"),
    (_FILL + "error", ""),
    (_FILL + "not", "  ... !!"),
    ("short not", "hing"),  # too short to go on from
]


@pytest.mark.parametrize(("head", "rest"), _CASES)
def test_words_of_goes_on_from_the_last_text(head: str, rest: str) -> None:
    words_of.cache_clear()
    fastre._forget_last()
    first = words_of(head)
    assert first == fastre._words(head)
    whole = head + rest
    assert words_of(whole) == fastre._words(whole), (head, rest)


def test_an_unrelated_text_is_split_whole() -> None:
    words_of.cache_clear()
    words_of(_FILL + "error")
    assert words_of("still getting " + _FILL) == fastre._words("still getting " + _FILL)
