"""The literal gate in front of the simulator's leak and role-flip patterns: the same matches as the pattern
alone on every text, and the pattern left out where no literal it needs is present."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from uxbench.sim import markers
from uxbench.sim.literal_gate import LiteralGate

_PIECES = [
    "I'm happy to help", "how can I assist", "sorry for the inconvenience", "as an AI", "Thought:", "  plan：",
    "<think>", "<|reasoning|>", "act: leave", "ACT = x", '{"act"', "patience_left", "Patience: 3", "[[x]]",
    "role-play", "Roleplay", "Your tone : calm", "typing habits:", "you write very short", "persona", "simulator",
    "满意度：3", "耐心值", "作为AI", "作为ai", "很高兴为您", "给您带来的不便", "思考：", "（思考", "contact", "exactly",
    "İ'm happy to help", "ſorry for the confusion", "K act: 1", "ＡＣＴ: x", "Ａs an AI", "Ｉ'm glad to help",
    "my order", "the blender cracked", "refund", "\n", " ", "?", "。", "Assistant:", "😀", "é",
]


def _texts() -> list[str]:
    rng = random.Random(7)
    out = ["".join(rng.choice(_PIECES) + rng.choice(("", " ", "\n", ". ")) for _ in range(rng.randint(1, 6)))
           for _ in range(4000)]
    return out + _PIECES + [p.upper() for p in _PIECES] + [p.lower() for p in _PIECES]


@pytest.mark.parametrize("name", ["ROLE_FLIP_RE", "POLICY_RE", "REASONING_RE"])
def test_the_gate_finds_what_the_pattern_finds(name: str) -> None:
    gate = getattr(markers, name)
    assert isinstance(gate, LiteralGate) and gate._automaton is not None  # the gate is in use for these patterns
    skipped = 0
    for text in _texts():
        want, got = gate.regex.search(text), gate.search(text)
        assert (want and want.span()) == (got and got.span()), text
        skipped += not gate.could_match(text)
    assert skipped > 100  # and it does leave texts out


def test_characters_that_ignore_case_pairs_with_ascii_letters_bypass_the_gate() -> None:
    gate = LiteralGate(re.compile(r"sorry|kind|hi", re.IGNORECASE))
    for text in ("ſorry", "Kind", "İ", "ＳＯＲＲＹ"):  # long s, Kelvin sign, dotted I, full-width letters
        assert gate.could_match(text)
        assert bool(gate.search(text)) == bool(gate.regex.search(text))
    assert not gate.could_match("nada, 中文。")


def test_a_pattern_with_an_alternative_that_needs_no_literal_is_not_gated() -> None:
    gate = LiteralGate(re.compile(r"hello|\d+", re.IGNORECASE))
    assert gate._automaton is None
    assert gate.search("42") is not None and gate.search("nothing") is None
    for a, b in itertools.product(("HELLO", "x"), ("1", "")):
        assert bool(gate.search(a + b)) == bool(gate.regex.search(a + b))
