"""What a regular expression needs in a text before it can match: the literal prefilters of `fastre`.

From the parsed pattern (the `re` module's own parser), each run of fixed text is expanded into all its
spellings ("doesn'?t work" -> "doesnt work", "doesn't work"); every match contains one spelling of every
run that is not optional, so each such set is a necessary condition, and so is any set that every branch of
a required group contributes to. Zero-width anchors that put a word edge next to a letter (`\\b`, `^`, `$`,
and the word start every `WordRegex` match begins at) are kept as `EDGE`, so a set can also be read as
whole words the text must hold (`word_condition`): "\\bnot working\\b" needs the words "not" and "working",
a test against the text's word set that costs far less than the regex.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

EDGE = "\x00"
"""In an expanded literal: a word edge (no a-z or 0-9 on its far side)."""
_MAX_SPELLINGS = 64
"""The most strings one run is expanded to."""
WORD = re.compile(r"[a-z0-9]+")
"""A word, both in the conditions read here and in the texts `fastre` tests them on (they must agree)."""
_EDGE_ANCHORS = frozenset(
    {"AT_BOUNDARY", "AT_BEGINNING", "AT_BEGINNING_STRING", "AT_BEGINNING_LINE", "AT_END", "AT_END_STRING",
     "AT_END_LINE"}
)
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
COMMON = frozenset(
    "a an the it its is are was be been do does did to of and or in on at for with from by as i me my you your"
    " we they he she this that these those what which not no so but if then can will would have has get got"
    " make now just still even again there here more same one all any some up out about".split()
)
"""Frequent English words: a condition on them alone passes nearly every text."""


def _common(word: str) -> bool:
    return len(word) <= 2 or word in COMMON


LiteralSet = frozenset[str]
WordCondition = tuple[tuple[str, ...], ...]
"""Alternatives of word tuples: a text may match when it holds every word of one tuple."""


def _structure(pattern: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each character of `pattern` outside escapes and character classes: those that open
    and close its groups and split its alternatives."""
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 2 if pattern.startswith("^]", i + 1) else 1 if pattern.startswith("]", i + 1) else 0
        else:
            yield i, char
        i += 1


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern` ("a|(b|c)" -> ["a", "(b|c)"])."""
    out: list[str] = []
    depth, start = 0, 0
    for i, char in _structure(pattern):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    out.append(pattern[start:])
    return out


def necessary_sets(pattern: str, *, at_word_start: bool = False, any_case: bool = False) -> list[LiteralSet]:
    """Literal sets of which every match of `pattern` (case-sensitive) contains a member, each one; [] when
    none is found or the pattern is not understood. `at_word_start`: every match starts where no letter or
    digit precedes. `any_case`: the pattern may ignore case (the caller reads only caseless characters)."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern)
    except re.error:
        return []
    if parsed.state.flags & (re.VERBOSE if any_case else re.IGNORECASE | re.VERBOSE):  # an inline (?i), (?x)
        return []
    return _sets(list(parsed), EDGE if at_word_start else "")


def scans_by_first_char(pattern: str, most: int = 8) -> bool:
    """`re` can skip ahead to where `pattern` may start: its first item is a letter, digit, space or apostrophe, a
    class, or a group of at most `most` branches that each start with such a character (none of them optional), so a
    search tests few positions instead of every one. Read from the text (parsing it would cost more at import)."""
    if pattern.startswith("(?:"):
        inner, rest = _group(pattern)
        if inner is None or rest[:1] in _QUANTIFIERS:
            return False
        branches = split_alternatives(inner)
        return len({b[:1] for b in branches}) <= most and all(_literal_first(b) for b in branches)
    if pattern.startswith("["):
        close = pattern.find("]", 2)
        return close > 0 and "\\" not in pattern[:close] and pattern[close + 1: close + 2] not in _QUANTIFIERS
    return _literal_first(pattern)


_QUANTIFIERS = ("?", "*", "+", "{")


def _literal_first(pattern: str) -> bool:
    first = pattern[:1]
    return first != "" and first.isascii() and (first.isalnum() or first in " '") and pattern[1:2] not in _QUANTIFIERS


def _group(pattern: str) -> tuple[str | None, str]:
    """The inside of the group `pattern` opens with, and what follows it (None when the group is not closed)."""
    depth = 0
    for i, char in _structure(pattern):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if not depth:
                return pattern[3:i], pattern[i + 1:]
    return None, ""


def _product(left: set[str], right: set[str]) -> set[str] | None:
    if len(left) * len(right) > _MAX_SPELLINGS:
        return None
    return {a + b for a in left for b in right}


def _exact_item(op: Any, arg: Any) -> set[str] | None:
    """Every string one parsed item can match, when few (anchors match "" or an edge), else None."""
    name = str(op)
    if name == "LITERAL":
        return {chr(arg)}
    if name == "AT":
        return {EDGE if str(arg) in _EDGE_ANCHORS else ""}
    if name in ("ASSERT", "ASSERT_NOT"):
        return {""}
    if name == "IN":
        return {chr(a) for _, a in arg} if all(str(o) == "LITERAL" for o, _ in arg) else None
    if name == "SUBPATTERN":
        return None if arg[1] & re.IGNORECASE else _exact(arg[-1])
    if name == "BRANCH":
        out: set[str] = set()
        for branch in arg[1]:
            sub = _exact(branch)
            if sub is None:
                return None
            out |= sub
        return out if len(out) <= _MAX_SPELLINGS else None
    if name in _REPEATS and arg[1] <= 2:
        return _exact_repeat(arg[0], arg[1], arg[2])
    return None


def _exact_repeat(low: int, high: int, items: Sequence[Any]) -> set[str] | None:
    once = _exact(items)
    if once is None:
        return None
    options: set[str] = set()
    power: set[str] | None = {""}
    for count in range(high + 1):
        assert power is not None
        if count >= low:
            options |= power
        if count < high:
            power = _product(power, once)
            if power is None:
                return None
    return options if len(options) <= _MAX_SPELLINGS else None


def _exact(items: Sequence[Any]) -> set[str] | None:
    out: set[str] | None = {""}
    for op, arg in items:
        sub = _exact_item(op, arg)
        if sub is None or out is None:
            return None
        out = _product(out, sub)
    return out


def _sets(items: Sequence[Any], start: str = "") -> list[LiteralSet]:
    """Every necessary literal set found in a parsed item sequence (`start`: what precedes it)."""
    found: list[LiteralSet] = []
    run: set[str] = {start}  # every spelling of the current run of fixed items

    def flush() -> None:
        if all(s.replace(EDGE, "") for s in run):
            found.append(frozenset(run))

    for op, arg in items:
        exact = _exact_item(op, arg)
        if exact is not None:
            nxt = _product(run, exact)
            if nxt is None:  # too many spellings: close the run and start a new one here
                # a run that ends (starts) in a space or the like is followed (preceded) by a word edge
                if all(s and not WORD.match(s[0]) for s in exact):
                    run = {s + EDGE for s in run}
                flush()
                # the new run goes on from the word the old one ended in ("...the e" + "rror" -> "error")
                nxt = _product({_tail(s) for s in run}, exact) or exact
            run = nxt
            continue
        spacer = _spacer(op, arg)  # `\\s*`, `\\W+`, `[,.]*`: it keeps or makes a word edge
        ends_at_edge = all(s and not WORD.match(s[-1]) for s in run)
        if spacer is not None and spacer >= 1:
            run = {s + EDGE for s in run}
        flush()
        run = {EDGE} if spacer is not None and (spacer >= 1 or ends_at_edge) else {""}
        name = str(op)
        if name == "SUBPATTERN" and not arg[1] & re.IGNORECASE:
            found += _sets(arg[-1])
        elif name == "BRANCH":
            branches = [best(_sets(branch)) for branch in arg[1]]
            chosen = [b for b in branches if b]
            if len(chosen) == len(branches):  # every branch needs one of its literals
                found.append(frozenset().union(*chosen))
        elif name in _REPEATS and arg[0] >= 1:
            found += _sets(arg[2])
        elif name == "ATOMIC_GROUP":
            found += _sets(arg)
    flush()
    return found


def _spacer(op: Any, arg: Any) -> int | None:
    """The least count of a repeat of characters that are never a-z or 0-9, else None."""
    if str(op) not in _REPEATS or len(arg[2]) != 1:
        return None
    item_op, item_arg = arg[2][0]
    name = str(item_op)
    if name == "LITERAL":
        return None if WORD.match(chr(item_arg)) else arg[0]
    if name != "IN":
        return None
    for o, a in item_arg:
        if str(o) == "LITERAL" and not WORD.match(chr(a)):
            continue
        if str(o) == "CATEGORY" and str(a) in ("CATEGORY_SPACE", "CATEGORY_NOT_WORD"):
            continue
        return None
    return int(arg[0])


def _tail(literal: str) -> str:
    """The word `literal` ends in (maybe empty), after an edge when something comes before it."""
    start = len(literal)
    while start and WORD.match(literal[start - 1]):
        start -= 1
    return (EDGE if start else "") + literal[start:]


def _word_rate(words: Sequence[str]) -> float:
    """A rough share of texts holding all of `words`."""
    rate = 1.0
    for word in words:
        rate *= 0.5 if _common(word) else 0.25 ** min(len(word), 6)
    return rate


def condition_rate(condition: WordCondition) -> float:
    """A rough share of texts meeting a word condition."""
    return sum(_word_rate(words) for words in condition)


def pass_rate(literals: LiteralSet) -> float:
    """A rough share of texts holding one of `literals` (as words where it can be read so)."""
    condition = word_condition(literals)
    if condition is not None:
        return condition_rate(condition)
    return sum(0.25 ** min(len(lit.replace(EDGE, "")), 6) for lit in literals)


def best(sets: list[LiteralSet]) -> LiteralSet | None:
    """The most selective of `sets`."""
    return min(sets, key=pass_rate) if sets else None


def word_condition(literals: LiteralSet) -> WordCondition | None:
    """`literals` as whole words (runs of a-z and 0-9 bounded inside the literal by another character or an
    edge): a text holding one of them holds every word of one tuple. None when a literal has no such word."""
    out: set[tuple[str, ...]] = set()
    for literal in literals:
        words = tuple(sorted(
            {m.group() for m in WORD.finditer(literal) if m.start() > 0 and m.end() < len(literal)},
            key=lambda w: (_common(w), -len(w)),  # the rarest first
        ))
        if not words:
            return None
        out.add(words)
    # a tuple that holds another one adds nothing: keep the smaller
    return tuple(sorted(w for w in out if not any(set(o) < set(w) for o in out)))
