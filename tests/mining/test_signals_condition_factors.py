"""`fastre.product_factors`: a word condition whose tuples are a product is tested set by set, with the same
answer as the tuple-by-tuple test, on written conditions and on every condition of the signal rules."""

from __future__ import annotations

import random
import sys
from itertools import combinations

import uxbench.mining.signals.detect  # noqa: F401  (loads every rule, so every condition exists)
from uxbench.mining.signals.fastre import WordRegex, _Condition, product_factors


def _by_tuples(condition: _Condition, words: frozenset[str]) -> bool:
    """The formulation before the factors: one of `singles`, or a first word and its rest."""
    return not condition.singles.isdisjoint(words) or condition.holds_by_tuples(words)


def _subsets(words: list[str], rng: random.Random) -> list[frozenset[str]]:
    if len(words) <= 10:
        return [frozenset(c) for n in range(len(words) + 1) for c in combinations(words, n)]
    return [frozenset(w for w in words if rng.random() < p) for p in (0.1, 0.3, 0.5, 0.8) for _ in range(300)]


def test_product_factors_written() -> None:
    fs = frozenset
    assert product_factors([fs({"now", "do"}), fs({"now", "the"})]) == (fs({"now"}), fs({"do", "the"}))
    assert product_factors([fs({"a", "b"})]) == (fs({"a"}), fs({"b"}))
    assert product_factors([]) is None
    assert product_factors([fs({"a", "b"}), fs({"c", "d"})]) is None  # a union, not a product
    assert product_factors([fs({"a", "b"}), fs({"a", "c"}), fs({"d", "b"})]) is None  # {a,d}x{b,c} less one
    assert product_factors([fs({"a", "b", "c"}), fs({"a", "b"})]) is None  # one tuple inside another
    three = [fs({x, y, z}) for x in "ab" for y in "cd" for z in "e"]
    assert product_factors(three) == (fs({"e"}), fs({"a", "b"}), fs({"c", "d"}))


def test_condition_written() -> None:
    cases = [
        (("now", "do"), ("now", "the"), ("convert", "now")),
        (("not",), ("that", "it", "s"), ("thats", "it")),
        (("still", "broken"), ("still", "doesn", "t"), ("not", "still")),
        (("a", "b"), ("c", "d")),
        (("x",),),
    ]
    rng = random.Random(0)
    for condition in cases:
        prepared = _Condition(condition)
        words = sorted({w for t in condition for w in t} | {"other"})
        for subset in _subsets(words, rng):
            assert prepared.holds(subset) == _by_tuples(prepared, subset) == any(set(t) <= subset for t in condition)


def test_every_rule_condition() -> None:
    rng = random.Random(1)
    patterns = [p for name, module in list(sys.modules.items()) if name.startswith("uxbench.mining.signals")
                for p in vars(module).values() if isinstance(p, WordRegex)]
    conditions = [c for p in patterns for a in p._alternatives for c in a.conditions]
    assert conditions and any(c.factors is not None for c in conditions)
    for condition in conditions:
        for subset in _subsets(sorted(condition.words() | {"zz"}), rng):
            assert condition.holds(subset) == _by_tuples(condition, subset)


def test_every_rule_alternative() -> None:
    """`_Alternative.holds` by its flattened sets agrees with every condition's own test."""
    rng = random.Random(2)
    patterns = [p for name, module in list(sys.modules.items()) if name.startswith("uxbench.mining.signals")
                for p in vars(module).values() if isinstance(p, WordRegex)]
    alternatives = [a for p in patterns for a in p._alternatives if a.conditions]
    assert any(a.sets is not None for a in alternatives)
    for alternative in alternatives:
        words = sorted({"zz"}.union(*(c.words() for c in alternative.conditions)))
        for subset in _subsets(words, rng):
            assert alternative.holds(subset) == all(_by_tuples(c, subset) for c in alternative.conditions)
