"""Which safety-gate patterns can match a text, from literals that every match contains.

Python's regex engine tries every branch of a pattern at every position, so running the gate's ~45 patterns
on every message is slow. Each pattern instead gets *clauses*: sets of literals of which a matching text holds
at least one each (``how to make a bomb`` needs one of "how to ", ...; one of " make ", " build ", ...; one of
" bomb", " gun", ...). One Aho-Corasick pass finds every literal in a text (``ahocorasick_rs``, a compiled
DFA: about 130 MB/s here, 3.5x pyahocorasick's scan), and only patterns whose clauses are all met run;
ordinary chat meets none. The clauses are necessary conditions, so the hits are the same as
running every pattern.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

import ahocorasick_rs

Clause = frozenset[str]
"""Literals of which a text must contain at least one for a pattern to match it."""
_MAX_STRINGS = 64  # most strings a stretch of a pattern is expanded into ("(?:a|an) (?:bomb|gun)s?": 8)
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


def _finite(op: Any, arg: Any) -> frozenset[str] | None:
    """The strings one parsed element matches, when they are few and literal (zero-width ones match "")."""
    name = str(op)
    if name == "LITERAL":
        return frozenset([chr(arg)])
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return frozenset([""])  # zero-width: the text on both sides stays contiguous
    if name == "IN" and len(arg) <= 8 and all(str(o) == "LITERAL" for o, _ in arg):
        return frozenset(chr(a) for _, a in arg)
    if name == "SUBPATTERN" and not arg[1]:  # no inline flags such as (?i:...)
        return _finite_seq(arg[-1])
    if name == "BRANCH":
        branches = [_finite_seq(branch) for branch in arg[1]]
        union: frozenset[str] = frozenset()
        for branch in branches:
            if branch is None:
                return None
            union |= branch
        return union if len(union) <= _MAX_STRINGS else None
    if name in _REPEATS and arg[1] == 1:
        body = _finite_seq(arg[2])
        return None if body is None else body | ({""} if arg[0] == 0 else set())
    return None


def _finite_seq(items: Any) -> frozenset[str] | None:
    strings = frozenset([""])
    for op, arg in items:
        part = _finite(op, arg)
        if part is None or len(strings) * len(part) > _MAX_STRINGS:
            return None
        strings = frozenset(a + b for a in strings for b in part)
    return strings


def _clauses(items: Any, before: str = "") -> list[Clause]:
    """Clauses every match of a parsed pattern meets: each stretch of few literal strings, and those of
    required groups, branches (one clause from each branch, joined) and repeats. ``before``: text that
    precedes every match (" " for "bomb" in "make a bomb"), which makes short literals selective."""
    found: list[Clause] = []
    stretch = frozenset([before])
    for op, arg in [*items, (None, None)]:  # the sentinel flushes the last stretch
        part = None if op is None else _finite(op, arg)
        if part is not None and len(stretch) * len(part) <= _MAX_STRINGS:
            stretch = frozenset(a + b for a in stretch for b in part)
            continue
        # Too many strings, or an element without literals: end the stretch here, keeping what is
        # certainly on either side of the cut.
        before = _common_prefix(s[::-1] for s in stretch)[::-1]
        head = "" if part is None else _common_prefix(part)
        clause = frozenset(s + head for s in stretch)
        if "" not in clause:
            found.append(clause)
        stretch = frozenset([""]) if part is None else frozenset(before + s for s in part)
        if part is not None or op is None:
            continue
        if str(op) == "SUBPATTERN" and not arg[1]:
            found.extend(_clauses(arg[-1], before))
        elif str(op) == "BRANCH":
            branches = [_clauses(branch, before) for branch in arg[1]]
            if all(branches):
                if _product(len(b) for b in branches) > _MAX_STRINGS:
                    branches = [[min(b, key=_frequency)] for b in branches]
                found.extend(frozenset().union(*combo) for combo in itertools.product(*branches))
        elif str(op) in _REPEATS and arg[0] >= 1:
            found.extend(_clauses(arg[2], before))
    return found


def _common_prefix(strings: Iterable[str]) -> str:
    ordered = sorted(strings)
    first, last = ordered[0], ordered[-1]  # the extremes differ earliest
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def _product(sizes: Iterable[int]) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total


def _frequency(clause: Clause) -> float:
    """A rough chance that a text meets the clause: longer literals (a CJK character counts two) are rarer."""
    return sum(4.0 ** -sum(1 if c.isascii() else 2 for c in literal) for literal in clause)


_COMMON_WORDS = frozenset(
    "a am an all and any are be build can could create do does for get going how i i'm is it make many me much my "
    "need of plan should some steps the these those to trying want wanna way ways we what will would you your".split())
"""Words of ordinary chat with an assistant: a literal made of them alone ("how to ", "i want ", "way to ")
is in a quarter of the pool's texts, however long it is."""


def _order_key(clause: Clause) -> tuple[float, list[str]]:
    """`_frequency`, with a literal of common words only counted as likely as two letters: the first clause,
    searched on its own in every text, should be one that is rarely met ("how to make a bomb": " bomb", ...)."""
    chance = sum(1 / 16 if literal.isascii() and set(re.findall(r"[a-z']+", literal)) <= _COMMON_WORDS
                 else _frequency(frozenset([literal])) for literal in clause)
    return chance, sorted(clause)


def _weak(literal: str) -> bool:
    """Too short to filter anything ("of", " a "); one CJK character is selective enough."""
    return literal.isascii() and (len(literal) < 3 or len(literal.strip()) < 2)


def required_clauses(pattern: str) -> tuple[Clause, ...]:
    """Necessary conditions for ``pattern`` to match a text: one literal of each clause is in it.

    Most selective first; empty when nothing useful is required (the pattern then always runs).
    """
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern)
        if parsed.state.flags & re.IGNORECASE:
            return ()
        raw = _clauses(parsed)
    except Exception:  # pragma: no cover - a private API: fall back to always running the pattern
        return ()
    clauses = {frozenset(lit for lit in clause if not any(o != lit and o in lit for o in clause))
               for clause in raw if not any(_weak(literal) for literal in clause)}
    ordered = sorted(clauses, key=_order_key)
    return tuple(c for c in ordered if not any(o < c for o in ordered))  # a superset of another adds nothing


class _Finder:
    """Which literals of a set occur in a text's UTF-8 bytes (overlapping matches: "kill all " inside "skill all "
    and " all " both count), as their numbers in the whole list. A literal is in a text exactly when its UTF-8
    form is in the text's, and ahocorasick_rs reads bytes without copying them or mapping offsets back."""

    def __init__(self, literals: Sequence[str], number: dict[str, int]) -> None:
        self.numbers = [number[literal] for literal in literals]
        self.automaton = ahocorasick_rs.BytesAhoCorasick(
            [literal.encode("utf-8") for literal in literals], matchkind=ahocorasick_rs.MatchKind.Standard,
            implementation=ahocorasick_rs.Implementation.DFA,
        ) if literals else None

    def found(self, raw: bytes) -> set[int]:
        if self.automaton is None:
            return set()
        numbers = self.numbers
        return {numbers[index] for index, _, _ in self.automaton.find_matches_as_indexes(raw, overlapping=True)}


class Prefilter:
    """The patterns (by index) that may match a text, from one pass over it, two for the few texts that hold
    a pattern's first (most selective) clause: that clause's literals are searched first, on their own (a
    small automaton that rarely matches: 2x faster than all literals, whose common ones, "how to ", match
    in most texts), and the other clauses' literals only where a pattern is still possible."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.clauses = [required_clauses(p) for p in patterns]
        literals = sorted({literal for clauses in self.clauses for clause in clauses for literal in clause})
        number = {literal: i for i, literal in enumerate(literals)}
        firsts = sorted({literal for clauses in self.clauses if clauses for literal in clauses[0]})
        others = sorted({literal for clauses in self.clauses for clause in clauses[1:] for literal in clause})
        # [ASCII text, other text]: ASCII texts (most) skip the literals they cannot contain
        self._first = (_Finder([lit for lit in firsts if lit.isascii()], number), _Finder(firsts, number))
        self._other = (_Finder([lit for lit in others if lit.isascii()], number), _Finder(others, number))
        by_first: dict[int, list[int]] = {}
        for pattern, clauses in enumerate(self.clauses):
            for literal in clauses[0] if clauses else ():
                by_first.setdefault(number[literal], []).append(pattern)
        self._by_first = {literal: tuple(found) for literal, found in by_first.items()}
        self._rest = [tuple(frozenset(number[lit] for lit in clause) for clause in clauses[1:])
                      for clauses in self.clauses]
        self._always = tuple(i for i, clauses in enumerate(self.clauses) if not clauses)

    def due(self, text: str | bytes) -> Sequence[int]:
        """Indices of the patterns whose clauses ``text`` (normalised for the gate; or its UTF-8 bytes) all
        meets, in order."""
        raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        which = 0 if raw.isascii() else 1
        first = self._first[which]
        hits = first.automaton.find_matches_as_indexes(raw, overlapping=True) if first.automaton else None
        if not hits:
            return self._always  # most texts
        numbers = first.numbers
        found = {numbers[index] for index, _, _ in hits}
        by_first = self._by_first
        candidates = {pattern for literal in found for pattern in by_first[literal]}
        rest = self._rest
        if any(rest[pattern] for pattern in candidates):
            found |= self._other[which].found(raw)
        due = [pattern for pattern in candidates
               if all(not clause.isdisjoint(found) for clause in rest[pattern])]
        return sorted([*self._always, *due]) if self._always else sorted(due)
