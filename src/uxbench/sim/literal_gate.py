"""A case-insensitive pattern searched only in texts that hold one of the literals every match of it needs.

The simulator's leak and role-flip patterns are long alternations (`markers.POLICY_RE`, `ROLE_FLIP_RE`): Python's
`re` tries each alternative at each position, 30-40 µs for a 70-character message, and every realised message
and every user turn of the gate is searched with them. Every match of such a pattern contains one of a few
dozen literals (`mining.signals.literals.necessary_sets`, read from the parsed pattern), and one Aho-Corasick
pass over the lower-cased text (about 1 µs) says when none is there, so the pattern cannot match.

Lower-casing the text is exact only where case-insensitive matching pairs ASCII letters with ASCII letters
alone: a text with any character outside ASCII, CJK ideographs and CJK or full-width punctuation (a "ſ", "K"
or "İ" that `re.IGNORECASE` pairs with s, k or i; full-width letters) is searched with the pattern directly,
as is every text when a literal of the pattern is such a character. Matches are always the pattern's own, on
the original text.
"""

from __future__ import annotations

import re

from ahocorasick_rs import AhoCorasick

from uxbench.mining.signals.literals import EDGE, necessary_sets, split_alternatives

_PLAIN_CHARS = "\x00-\x7f\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff01-\uff20\uff3b-\uff40\uff5b-\uff65"
"""ASCII, CJK ideographs and CJK / full-width punctuation and digits: characters that case-insensitive matching
pairs with none but their ASCII case partners (full-width letters, which have case, are left out)."""
_OTHER_CHAR_RE = re.compile(f"[^{_PLAIN_CHARS}]")


class LiteralGate:
    """`pattern.search`, skipped where a cheap test proves it finds nothing."""

    __slots__ = ("_automaton", "regex")

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.regex = regex
        self._automaton: AhoCorasick | None = None
        literals = _literals(regex.pattern)
        if literals:
            self._automaton = AhoCorasick(sorted(literals))

    @property
    def pattern(self) -> str:
        return self.regex.pattern

    def could_match(self, text: str) -> bool:
        """False only where the pattern cannot match `text`."""
        if self._automaton is None or _OTHER_CHAR_RE.search(text):
            return True
        return bool(self._automaton.find_matches_as_indexes(text.lower()))

    def search(self, text: str) -> re.Match[str] | None:
        return self.regex.search(text) if self.could_match(text) else None


def _literals(pattern: str) -> set[str] | None:
    """Lower-cased literals one of which every match of `pattern` holds, or None. Each top-level alternative gives
    its own set, the one whose shortest literal is longest ("your tone" rather than the ":" after it)."""
    out: set[str] = set()
    for alternative in split_alternatives(pattern):
        sets = [{lit.replace(EDGE, "").lower() for lit in found}
                for found in necessary_sets(alternative, any_case=True)]
        sets = [found for found in sets if found and "" not in found
                and not any(_OTHER_CHAR_RE.search(lit) for lit in found)]
        if not sets:
            return None
        out |= max(sets, key=lambda found: (min(map(len, found)), -len(found)))
    return out


class GateSet:
    """`LiteralGate.could_match` of several patterns from one pass: one Aho-Corasick automaton over all their
    literals, read once over the lower-cased text (a line is read by three intro patterns, a sentence by two or
    three, and each gate's own pass cost as much as the pattern it spared on a short text)."""

    def __init__(self, *gates: LiteralGate) -> None:
        self.gates = gates
        self._always = tuple(not _literals(g.pattern) for g in gates)  # no literals to test: always searched
        owners: dict[str, list[int]] = {}
        for index, gate in enumerate(gates):
            for literal in sorted(_literals(gate.pattern) or ()):
                owners.setdefault(literal, []).append(index)
        self._literals = list(owners)
        self._owners = [tuple(owners[lit]) for lit in self._literals]
        self._automaton = AhoCorasick(self._literals) if self._literals else None
        self._all = (True,) * len(gates)

    def could(self, text: str) -> tuple[bool, ...]:
        """Per gate, False only where its pattern cannot match `text` (what its `could_match` says)."""
        if self._automaton is None or _OTHER_CHAR_RE.search(text):
            return self._all
        out = list(self._always)
        for index, _, _ in self._automaton.find_matches_as_indexes(text.lower(), overlapping=True):
            for owner in self._owners[index]:
                out[owner] = True
        return tuple(out)
