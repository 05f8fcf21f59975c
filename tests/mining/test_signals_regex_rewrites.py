"""Rewritten cue patterns find the same first match as the patterns they stand for (written inputs: word edges,
apostrophes, Unicode, empty text)."""

from __future__ import annotations

import re

import pytest

from uxbench.mining.signals import complaint, cues, error_report, feedback
from uxbench.mining.signals.fastre import words_of

_ANAPHORA_TEXTS = [
    "", " ", "it", "It?", "its", "that one", "that one?\n", "x it", "_it", "'it", "it's", "it s", "thats", "IT'S fine",
    "does it work", "ok, and", "what about that", "İt is it", "ſo it", "for it", "for them\n", "café it", "naïve that",
    "do they", "with it", "from them.", "in that case", "2it", "a\nit\n", "then ?", "instead  ?  ", "is that right",
    "and it", " and then", "Ok so what", "ok, what about", "explain the second one",
    "which one is better, this or that",
    "fit the model to it", "bandit", "don't use it", "what's the use of that", "about it", "aboutit", "was itself",
    "can they", "cant it", "is it's", "a b c d", "use them\nplease", "Do It", "DOES IT", "écrit it", "x" * 400 + " it",
    "why would it", "itinerary then", "so then?", "how about them", "could they", "I need that one.",
]


def _found(m: re.Match[str] | None) -> tuple[tuple[int, int], str] | None:
    return None if m is None else (m.span(), m.group())


@pytest.mark.parametrize("text", _ANAPHORA_TEXTS)
def test_anaphora_rest_matches_the_whole_pattern(text: str) -> None:
    for piece in (text, text[:300].strip(), text.lower(), text.upper()):
        assert _found(cues._anaphora_en(piece)) == _found(cues._ANAPHORA_EN.search(piece))


def test_anaphora_cue_evidence() -> None:
    assert cues.anaphora_cue("and what about the second one") == "and"
    assert cues.anaphora_cue("Can you fix that?") == "that?"
    assert cues.anaphora_cue("Tell me about Paris") is None


_NEGATED_TEXTS = [
    "", " ", "not good", "NOT GOOD", "Not  very good", "isn't right", "isnt right", "wasn't helpful", "WASNT clear",
    "no longer working", "hardly useful", "never what I wanted", "nothing good", "notgood", "knot good", "not goodness",
    "not that great!", "this is not correct", "不太好", "不对", "很好", "not good 不对", "İsn't right", "iſn't right",
    "thanks, that's great", "great, not bad", "cannot good", "not\ngood", "never\tperfect", "No Longer Clear",
]


@pytest.mark.parametrize("text", _NEGATED_TEXTS)
def test_negated_prefilter_matches_the_regex(text: str) -> None:
    assert feedback._negated(text) == (feedback._NEGATED.search(text) is not None)


_GROUP_TEXTS = [
    "", "q", "question 3", "continue", "keep going please", "that's wrong", "it doesn't work", "not bad at all",
    "this is garbage", "you're hallucinating", "i mean the other one", "error: x is not defined", "TypeError: bad",
    "exception: fatal warning", "same error again", "thanks, that works", "no problem", "İt is wrong", "ſtill wrong",
    "why did you say that", "wrong", "the next part please", "now do the same for b", "i'm still getting an error",
    "make it simpler", "在 python 里 not working", "you said a but now b", "i don't think so", "close, but not quite",
]


@pytest.mark.parametrize("text", _GROUP_TEXTS)
def test_group_finds_each_patterns_live_alternatives(text: str) -> None:
    patterns = [complaint._NEUTRAL_EN, complaint._COMPLAINT_EN, complaint._IMPLICIT_EN, complaint._HINT_EN,
                cues._CONTINUE_EN_ANY, cues._REPHRASE_EN, feedback._PRAISE_EN, error_report._MACHINE,
                error_report._REPORT_EN]
    for piece in (text, text.upper(), f"  {text}  ", text * 3):
        low = piece.lower()
        for pattern in patterns:
            assert pattern._group is not None
            assert list(pattern.live(low)) == pattern._live(low, words_of(low))
            whole = pattern.fast.search(low) if len(low) == len(piece) else pattern.slow.search(piece)
            assert _found(pattern.search(piece)) == _found(whole)


@pytest.mark.parametrize("tail", [
    "", "Please share the full error message.", "SHARE THE TRACEBACK", "show me your output", "paste the log",
    "What error do you get?", "which error", "Which Error?", "provide the complete stack", "send me the exact error",
    "what message did you see", "Let me know how it goes.", "what is your output", "show the blog", "post your login",
    "请把报错信息发给我", "发一下报错", "有什么提示", "提示是什么",
    "İ share the error", "ſhare the error", "share\nthe error",
])
def test_asked_for_error_prefilter_matches_the_regex(tail: str) -> None:
    assert error_report._asked_for_error(tail) == (error_report._ASKED_FOR_ERROR.search(tail) is not None)
