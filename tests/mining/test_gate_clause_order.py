"""The prefilter searches a pattern's first clause on its own in every text: it puts a clause of common chat
words ("how to ", "i want ") after a rarer one. Only the order changes; the clauses are the same."""

from __future__ import annotations

from uxbench.mining import gate, gate_prefilter


def test_common_word_clauses_come_after_rarer_ones() -> None:
    openers = "|".join(["how to", "way to", "i want to", "help me", "steps to", "how can i", "how do i"])
    verbs = "|".join(["make", "build", "create", "cook", "brew", "craft", "assemble", "construct"])
    clauses = gate_prefilter.required_clauses(f"(?:{openers}) (?:{verbs}) (?:a )?(?:bomb|molotov|c4)")
    assert len(clauses) >= 2 and " bomb" in clauses[0]
    assert "how to " in clauses[-1] or any("how to " in literal for literal in clauses[-1])
    rules = gate._default_rules()
    for index, (_, pattern) in enumerate(rules.patterns):
        if any("how to " in literal for clause in rules.prefilter.clauses[index] for literal in clause):
            assert not any("how to " in literal for literal in rules.prefilter.clauses[index][0]), pattern


def test_the_order_keeps_the_same_clauses() -> None:
    for _, pattern in gate._default_rules().patterns:
        clauses = gate_prefilter.required_clauses(pattern.pattern)
        assert len(set(clauses)) == len(clauses)
        by_frequency = sorted(clauses, key=lambda c: (gate_prefilter._frequency(c), sorted(c)))
        assert set(by_frequency) == set(clauses)


def test_order_key_on_written_clauses() -> None:
    key = gate_prefilter._order_key
    assert key(frozenset({"how to ", "i want "}))[0] > key(frozenset({" bomb", " gun"}))[0]
    assert key(frozenset({" bomb"}))[0] == gate_prefilter._frequency(frozenset({" bomb"}))
    assert key(frozenset({"裸照"}))[0] == gate_prefilter._frequency(frozenset({"裸照"}))
    assert key(frozenset({"i'm going "}))[0] == 1 / 16
