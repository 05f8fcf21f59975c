"""The complaint-side prefilters say what the plain formulations say: `score_complaint` skipping the English tiers
where none has a live alternative, and `find_praise`'s negation test on the shared lower-cased text."""

from __future__ import annotations

import random
import re

import pytest

from uxbench.mining.signals import complaint, feedback
from uxbench.mining.signals.fastre import blank, has_han
from uxbench.mining.snippets import window

_FRAGMENTS = (
    "not bad", "my bad", "that's garbage", "you're right", "that is wrong", "wrong", "nope", "no, the", "still not",
    "try again", "i'll try again", "I'm confused", "close, but", "not quite", "what's wrong with my code",
    "error code", "it doesn't work", "this is", "the worst", "awful", "hallucinated", "you said A but", "garbage",
    "İstanbul", "ǅ", "ß", "naïve", "café", "不错", "不对", "没用", "还是不行", "我记错了", "唉", "thanks",
    "not helpful", "isn't", "never", "no longer", "hardly", "Not Bad", "NOT WRONG", "seriously?", "wtf", "?",
    ",", ".", "!", "\n", "   ", "'", "don't", "it's", "well", "one two three four five six", "x", "123",
)


def _old_score(text: str, max_chars: int = 300) -> tuple[float, str] | None:
    """`score_complaint` as it was: the English tiers run on every text with a Latin letter."""
    head = text[:max_chars]
    if not head.strip():
        return None
    best: tuple[float, int, int] | None = None
    if has_han(head):
        masked = blank(head, (m.span() for m in complaint._NEUTRAL_ZH.finditer(head)))
        best = complaint._first(complaint._ZH_TIERS, masked)
    if (best is None or best[0] < complaint.SCORE_EXPLICIT) and complaint._HAS_LATIN.search(head):
        found = complaint._first(complaint._EN_TIERS, blank(head, complaint._NEUTRAL_EN.spans(head)))
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    if best is None:
        return None
    return best[0], window(head, best[1], best[2], complaint._CONTEXT_CHARS)


def _texts() -> list[str]:
    rng = random.Random(29)
    texts = ["", " ", "\n\t", "a", "no", "No.", "İ wrong", "ugh", "Ugh, garbage", "my bad, that's garbage",
             "not bad at all, but the code is wrong", "garbage" + " x" * 200, "x " * 160 + "wrong"]
    for _ in range(3000):
        texts.append(rng.choice(("", " ", ", ", "\n")).join(rng.choices(_FRAGMENTS, k=rng.randint(1, 8))))
    return texts


@pytest.mark.parametrize("max_chars", [300, 12])
def test_score_complaint_agrees_with_the_plain_formulation(max_chars: int) -> None:
    for text in _texts():
        assert complaint.score_complaint(text, max_chars) == _old_score(text, max_chars), text


def test_negated_agrees_with_the_plain_formulation() -> None:
    def old(text: str) -> bool:
        if text.isascii() and not any(word in text.lower() for word in feedback._NEGATION_WORDS):
            return False
        return feedback._NEGATED.search(text) is not None

    def old_praise(text: str) -> str | None:
        if len(text) > 200 or not text.strip() or old(text):
            return None
        m = feedback._PRAISE_ZH.search(text) or feedback._PRAISE_EN.search(text)
        return text[m.start():m.end()] if m else None

    for text in [*_texts(), "NOT good", "Isn't great", "NoT", "hardlY", "no  longer", "nevermore", "不太好"]:
        assert feedback._negated(text) == old(text), text
        assert feedback.find_praise(text) == old_praise(text), text


def test_some_texts_skip_and_some_match() -> None:
    """The written texts exercise both sides of the prefilter."""
    scores = [complaint.score_complaint(t) for t in _texts()]
    assert any(s is None for s in scores) and any(s is not None and s[0] >= 0.7 for s in scores)
    assert re.search("wrong", "that is wrong")
