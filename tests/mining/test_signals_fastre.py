"""The prefiltered patterns of the signal detectors find exactly what their plain regexes find.

`fastre.WordRegex` runs a pattern's alternatives one by one, each only on a text holding the words it needs,
and `fastre.Prefiltered` skips texts that lack a required substring or any CJK character. Both are
necessary conditions worked out from the parsed pattern (`literals`); a wrong one would silently drop a
signal. Every such pattern in the detectors is checked here against its plain regex on texts built from
the pattern's own words (so that most alternatives can match), on the written follow-up sets, and on
mixed-case and Unicode edge cases.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uxbench.mining.signals as signals_pkg
from uxbench.mining.signals.fastre import Prefiltered, WordRegex
from uxbench.mining.signals.literals import necessary_sets, split_alternatives, word_condition

_SETS = Path(signals_pkg.__file__).parent.parent / "signal_sets"


def _patterns() -> list[tuple[str, WordRegex | Prefiltered]]:
    found: list[tuple[str, WordRegex | Prefiltered]] = []
    for info in pkgutil.iter_modules(signals_pkg.__path__):
        module = importlib.import_module(f"{signals_pkg.__name__}.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, WordRegex | Prefiltered):
                found.append((f"{info.name}.{name}", value))
    return found


PATTERNS = _patterns()


def _reference(pattern: WordRegex | Prefiltered, text: str) -> list[tuple[int, int]]:
    """The first match's span, by the plain regex (what the detectors did before the prefilters)."""
    if isinstance(pattern, Prefiltered):
        m = pattern.regex.search(text)
    else:
        low = text.lower()
        m = pattern.fast.search(low) if len(low) == len(text) else pattern.slow.search(text)
    return [m.span()] if m else []


def _found(pattern: WordRegex | Prefiltered, text: str) -> list[tuple[int, int]]:
    m = pattern.search(text)
    return [m.span()] if m else []


def _vocabulary(pattern: WordRegex | Prefiltered) -> list[str]:
    source = pattern.pattern if isinstance(pattern, Prefiltered) else pattern.fast.pattern
    return re.findall(r"[a-z][a-z' ]*[a-z]|[\u4e00-\u9fff]+", source) or ["x"]


def _texts(pattern: WordRegex | Prefiltered, rng: random.Random, count: int) -> Iterator[str]:
    words = _vocabulary(pattern)
    glue = [" ", " ", ", ", ". ", "! ", "? ", "'", "-", "\n", "，", "。", "_", "é"]
    for _ in range(count):
        parts = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.3:
            parts = [p.upper() if rng.random() < 0.5 else p.capitalize() for p in parts]
        text = "".join(p + rng.choice(glue) for p in parts)
        yield text[: rng.randint(0, len(text))] if rng.random() < 0.2 else text


def _written() -> list[str]:
    texts: list[str] = []
    for name in ("followups.jsonl", "zh_followups.jsonl"):
        for line in (_SETS / name).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            texts += [str(v) for v in item.values() if isinstance(v, str)]
    return texts


def test_the_detectors_use_prefiltered_patterns() -> None:
    assert len(PATTERNS) >= 15
    assert any(isinstance(p, WordRegex) for _, p in PATTERNS)
    assert any(isinstance(p, Prefiltered) for _, p in PATTERNS)


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_each_pattern_matches_like_its_plain_regex(name: str, pattern: WordRegex | Prefiltered) -> None:
    rng = random.Random(name)
    matched = 0
    for text in [*_texts(pattern, rng, 1500), *_written()]:
        expected = _reference(pattern, text)
        assert _found(pattern, text) == expected, (name, text)
        matched += bool(expected)
        if isinstance(pattern, WordRegex):
            assert list(pattern.spans(text)) == [
                m.span() for m in (pattern.fast.finditer(text.lower()) if len(text.lower()) == len(text)
                                   else pattern.slow.finditer(text))
            ], (name, text)
    assert matched, f"{name}: no text matched, so the check compared nothing"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab it's not work还是不行没用 ,.!?'\nİéK")), max_size=60))
def test_arbitrary_text_matches_like_the_plain_regex(text: str) -> None:
    for name, pattern in PATTERNS:
        assert _found(pattern, text) == _reference(pattern, text), (name, text)


def test_necessary_conditions_are_read_from_the_parsed_pattern() -> None:
    assert split_alternatives(r"a|(b|c)|[|]d") == ["a", "(b|c)", "[|]d"]
    # every match of "doesn'?t work" holds one of its two spellings
    assert frozenset({"doesnt work", "doesn't work"}) in necessary_sets(r"doesn'?t work")
    # as words: "not" and "working" must both be in the text
    sets = necessary_sets(r"\bnot working\b", at_word_start=True)
    conditions = [c for c in map(word_condition, sets) if c is not None]
    assert (("working", "not"),) in conditions
    # an optional part is never required: the bare "stop" meets every condition
    sets = necessary_sets(r"(?:please )?stop")
    assert sets
    assert all(any(lit in "stop" for lit in found) for found in sets)
