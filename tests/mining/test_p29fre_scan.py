"""`fastre._Alternative.search` (a scan for the pattern without its word-start tests, then the whole pattern
matched where the scan stops) finds exactly the match of the plain ``regex.search``, on written tricky texts:
the pattern inside a word, after an apostrophe, an underscore or a non-ASCII letter (where the look-behind and
``\\b`` disagree), at the very start and end, repeated, overlapping, with CJK and empty text."""

from __future__ import annotations

import importlib
import pkgutil
import random

import pytest

import uxbench.mining.signals as signals_pkg
from uxbench.mining.signals.fastre import WordRegex, _Alternative
from uxbench.mining.signals.literals import scans_by_first_char


def _alternatives() -> list[tuple[str, _Alternative]]:
    found: list[tuple[str, _Alternative]] = []
    for info in pkgutil.iter_modules(signals_pkg.__path__):
        module = importlib.import_module(f"{signals_pkg.__name__}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, WordRegex):
                found += [(f"{info.name}.{name}[{i}]", a) for i, a in enumerate(value._alternatives)]
    return found


ALTERNATIVES = _alternatives()
_PREFIXES = ["", " ", "x", "'", "_", "é", "1", "\n", "中", "-", "un", "is is "]
_SUFFIXES = ["", " ", "s", "x", "'", ".", "\n", "中", " and more text"]
_WRITTEN = [
    "", " ", "中文没有英文", "ok", "is not defined", "this is not correct", "isnot defined", "'not defined",
    "_not defined", "énot defined", "xnot defined and not defined", "not not defined", "error: foo", "errors: x",
    "stderror: x",
    "i'm getting an error", "i'mgetting", "still getting it", "still still getting", "doesn't work", "doesnt work",
    "didn't\nwork", "same error again", "error again error again", "404 not found", "4044 not found",
    "status code: 500", "statuscode 500", "thanks", "thx!", "too long", "tootoo long", "it gives nothing",
    "you're wrong", "wrongly wrong", "that's not it", "that'snot", "make it shorter", "continue with",
]


def _texts(alternative: _Alternative) -> list[str]:
    """Texts built from the alternative's own words (so it may match), each with tricky neighbours."""
    rng = random.Random(hash(alternative.regex.pattern) & 0xFFFF)
    words = sorted(alternative.index or ()) + sorted(w for c in alternative.conditions for w in c.words())
    out = list(_WRITTEN)
    for _ in range(30):
        phrase = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) if words else "not defined"
        out.append(rng.choice(_PREFIXES) + phrase + rng.choice(_SUFFIXES) + rng.choice(_PREFIXES) + phrase)
    return out


@pytest.mark.parametrize(("name", "alternative"), ALTERNATIVES, ids=[n for n, _ in ALTERNATIVES])
def test_scan_finds_the_plain_match(name: str, alternative: _Alternative) -> None:
    for text in _texts(alternative):
        low = text.lower()
        expected = alternative.regex.search(low)
        found = alternative.search(low)
        assert (found and (found.span(), found.group())) == (expected and (expected.span(), expected.group())), text


@pytest.mark.parametrize(
    "pattern",
    [r"not defined\b", r"\bnot [^,.;]{1,20}, but\b", r"(?:is|was) not\b", r"[45]\d\d (?:bad|not found)\b",
     r"\b(?:ab|a) b\b", r"\bt(?:y|hx)\b", r"\b\bfoo"],
)
def test_scan_on_written_patterns(pattern: str) -> None:
    alternative = _Alternative(pattern)
    assert alternative.scan is not None
    texts = ["", "not defined", "xnot defined", "_not defined", "énot defined", "'not defined not defined",
             "is not", "this is not", "thisis not", "was not", "500 bad", "4500 bad", "x404 not found",
             "ab b", "aab b a b", "ty", "pty thx", "_ty ty", "foo", "xfoo foo", "not this, but that", "ynot a, but"]
    for text in texts:
        expected = alternative.regex.search(text)
        found = alternative.search(text)
        assert (found and found.span()) == (expected and expected.span()), (pattern, text)


def test_scans_by_first_char() -> None:
    assert scans_by_first_char(r"not defined\b")
    assert scans_by_first_char(r"(?:is|was|are) not")
    assert scans_by_first_char(r"[45]\d\d x")
    assert not scans_by_first_char(r"(?:the |x)?next")  # an optional first item
    assert not scans_by_first_char(r"(?:\d+|five) more")  # a branch starting with a class
    assert not scans_by_first_char(r"s?x")
    assert not scans_by_first_char(r"(?:ab|bb|cb|db|eb|fb|gb|hb|ib)x")  # too many first characters
    assert not scans_by_first_char("(")  # not a pattern
    assert not scans_by_first_char("")
