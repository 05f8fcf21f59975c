"""English cue patterns, matched fast.

Python's `re` tries every alternative of a pattern at every position of the text; a big alternation that
opens with `\\b` and runs case-insensitively costs ~200 µs on a 300-character message, which made the cue
patterns most of the signal stage's time on real text. Matching the lower-cased text with a pattern that
may start only where no letter, digit or apostrophe precedes (a word start) is 4-10x faster and means the
same for these patterns, which all begin at a word. A text whose lower-casing changes its length (rare
characters such as "İ") falls back to the case-insensitive pattern, so match positions always index the
original text.

Most alternatives of a cue pattern cannot match most messages, and the message's set of words says so for
far less than the regex costs: each alternative is compiled on its own with the words (or, where it has no
whole words, the substrings) one of which every match of it contains (`literals`), and runs only on a text
that holds them. The first match of the whole alternation is the leftmost of the alternatives' first
matches, the earliest alternative on a tie, so searching the alternatives left one by one gives the same
match; leaving out an alternative that cannot match anywhere changes no match of `spans` either. A pattern
whose alternatives nearly every text passes (pronouns, "it's") runs whole, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import product

from uxbench.mining.signals.literals import (
    EDGE,
    WORD,
    WordCondition,
    best,
    condition_rate,
    necessary_sets,
    pass_rate,
    scans_by_first_char,
    split_alternatives,
    word_condition,
)

_WORD_START = r"(?<![a-z0-9'])"
_MAX_SEPARATE = 4
"""Up to this many alternatives left by the prefilter run one by one; more run as the whole pattern."""
_MAX_LITERALS = 8
"""A `Prefiltered` pattern tests at most this many substrings (more cost about as much as the regex)."""
_MAX_CONDITIONS = 3
"""Word conditions tested per alternative (the most selective ones)."""
_MAX_EXPECTED = 8.0
"""When the alternatives' prefilters together pass more than this many per text (by `literals`' rough
estimate: pronouns and "it's" pass nearly every text), the whole pattern runs, as before."""


_VOCABULARY: frozenset[str] = frozenset()
"""Every word some `WordRegex` prefilter tests: the others never change what a prefilter says."""


@lru_cache(maxsize=8)
def words_of(low: str) -> frozenset[str]:
    """The whole words (runs of a-z and 0-9) of a lower-cased text that some prefilter tests (`_VOCABULARY`);
    the patterns of one message share it. The set is small, so the prefilters' set operations on it are cheap,
    where on all the words of a long message they were most of the prefilters' time.

    A text that goes on from the last one split (a message's first 1,500 characters after its first 300) reuses
    its words and splits only the rest, from the start of the word the last text ended in. That word's cut-off
    part counted as a word there; when it is one the set keeps, it may be in it only for that, so the text is
    split whole."""
    global _last
    prev, prev_words = _last
    cut = len(prev)
    if cut >= _MIN_REUSE and len(low) > cut and low.startswith(prev):
        start = len(prev.rstrip(_WORD_CHARS)) if low[cut] in _WORD_CHARS else cut
        if prev[start:] not in prev_words:
            words = prev_words.union(_words(low[start:]))
            _last = (low, words)
            return words
    words = _words(low)
    _last = (low, words)
    return words


def _words(low: str) -> frozenset[str]:
    if low.isascii():  # the same words (runs of a-z and 0-9), split 2-3x faster than by the regex
        return _VOCABULARY.intersection(low.encode().translate(_WORD_BYTES).decode().split())
    return _VOCABULARY.intersection(WORD.findall(low))


_MIN_REUSE = 100
"""The shortest last text `words_of` goes on from."""
_WORD_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"
_last: tuple[str, frozenset[str]] = ("", frozenset())
"""The last text `words_of` split, and its words."""


_WORD_BYTES = bytes(c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))
"""For `words_of`: a-z and 0-9 kept, every other byte a space."""


def _add_vocabulary(words: frozenset[str]) -> None:
    global _VOCABULARY
    if not words <= _VOCABULARY:
        _VOCABULARY = _VOCABULARY | words
        words_of.cache_clear()  # the sets kept were read without the new words
        _forget_last()


def _forget_last() -> None:
    global _last
    _last = ("", frozenset())


def tested_words(words: frozenset[str]) -> frozenset[str]:
    """`words`, added to those `words_of` keeps, for a rule of its own that tests them on a text's `words_of`."""
    _add_vocabulary(words)
    return words


@lru_cache(maxsize=8)
def lowered(text: str) -> str:
    """``text.lower()``, kept for the last few texts: the ~10 cue patterns of one message then lower it once,
    and `words_of` finds the result by a hash computed once."""
    return text.lower()


def product_factors(tuples: list[frozenset[str]]) -> tuple[frozenset[str], ...] | None:
    """Disjoint word sets S1, S2, ... whose products (one word of each) are exactly `tuples`, else None: a text
    then holds every word of one tuple when it holds a word of each set, one `isdisjoint` per set instead of a
    loop over the tuples (most conditions are such products: "now (?:do|write|...)" is {now} x {do, write, ...})."""
    tuples = list(set(tuples))
    if not tuples:
        return None
    words = frozenset().union(*tuples)
    together: dict[str, set[str]] = {w: set() for w in words}
    for t in tuples:
        for w in t:
            together[w] |= t
    # in a product, the words never in a tuple with `w` are the rest of its own set
    factors = sorted({(words - together[w]) | {w} for w in words}, key=lambda f: (len(f), sorted(f)))
    size = 1
    for f in factors:
        size *= len(f)
    if sum(map(len, factors)) != len(words) or size != len(tuples):
        return None  # overlapping sets, or fewer tuples than their product
    if set(map(frozenset, product(*factors))) != set(tuples):
        return None
    return tuple(factors)


class _Condition:
    """A word condition (see `literals.word_condition`) prepared for set operations: a text meets it when it
    holds one of `singles`, or a word of `firsts` with all the other words that go with it (`rests`); where
    the longer tuples are a product (`product_factors`), a word of each of `factors` instead."""

    __slots__ = ("factors", "firsts", "rests", "singles")

    def __init__(self, condition: WordCondition) -> None:
        self.singles = frozenset(words[0] for words in condition if len(words) == 1)
        rests: dict[str, list[frozenset[str]]] = {}
        for words in condition:
            if len(words) > 1:
                rests.setdefault(words[0], []).append(frozenset(words[1:]))
        self.rests = {first: tuple(r) for first, r in rests.items()}
        self.firsts = frozenset(rests)
        self.factors = product_factors([frozenset(words) for words in condition if len(words) > 1])

    def words(self) -> frozenset[str]:
        """Every word the condition tests."""
        return self.singles.union(self.firsts, *(r for rests in self.rests.values() for r in rests))

    def holds(self, words: frozenset[str]) -> bool:
        if not self.singles.isdisjoint(words):
            return True
        if self.factors is not None:
            for factor in self.factors:
                if factor.isdisjoint(words):
                    return False
            return True
        return self.holds_by_tuples(words)

    def holds_by_tuples(self, words: frozenset[str]) -> bool:
        """`holds` past `singles`, tuple by tuple (what `factors` says where there are factors)."""
        for first in self.firsts.intersection(words):
            for rest in self.rests[first]:
                if rest <= words:
                    return True
        return False


class _Alternative:
    """One top-level alternative of a `WordRegex` and its prefilter: word conditions (`index`: a word of
    each way to meet the first one; `conditions`: what else must hold), else substrings (`literals`)."""

    __slots__ = ("anchored", "conditions", "index", "literals", "rate", "regex", "scan", "sets")

    def __init__(self, pattern: str) -> None:
        self.regex = re.compile(f"{_WORD_START}(?:{pattern})")
        # The word-start look-behind hides the pattern's first character from `re`, which then tries every
        # position (~6 ns a character); without it (and a leading \b), `re` skips to where that character is.
        bare = pattern
        while bare.startswith("\\b"):
            bare = bare[2:]
        # compiled on first use: most are never used, and compiling them all at import costs more than it saves
        self.scan: re.Pattern[str] | str | None = bare if scans_by_first_char(bare) else None
        # "^..." (no MULTILINE) can only match at the start: `match` it
        self.anchored = pattern.startswith("^")
        sets = necessary_sets(pattern, at_word_start=True)
        conditions = sorted((c for c in map(word_condition, sets) if c is not None), key=condition_rate)
        conditions = conditions[:_MAX_CONDITIONS]
        self.index = frozenset(words[0] for words in conditions[0]) if conditions else None
        self.conditions = tuple(  # what the index does not already say
            _Condition(c) for c in conditions if c is not conditions[0] or any(len(w) > 1 for w in c)
        )
        chosen = best(sets)
        self.literals = (
            tuple(sorted({lit.replace(EDGE, "") for lit in chosen}, key=len, reverse=True))
            if chosen and not conditions else None
        )
        self.rate = condition_rate(conditions[0]) if conditions else pass_rate(chosen) if chosen else 1.0
        # every condition a product and nothing else: `holds` is a word of each of their sets, in one loop
        products = all(c.factors and not c.singles for c in self.conditions)
        self.sets = tuple(f for c in self.conditions for f in c.factors or ()) if products else None

    def search(self, low: str) -> re.Match[str] | None:
        """``self.regex.search(low)``. Wherever `regex` matches, `scan` (the pattern less its word-start tests) matches
        too, so the first position where `scan` matches and `regex` does as well starts the first match."""
        scan = self.scan
        if scan is None:
            return self.regex.search(low)
        if isinstance(scan, str):
            scan = self.scan = re.compile(scan)
        pos = 0
        while (candidate := scan.search(low, pos)) is not None:
            start = candidate.start()
            if (m := self.regex.match(low, start)) is not None:
                return m
            pos = start + 1
        return None

    def holds(self, words: frozenset[str]) -> bool:
        """Every word condition holds for a text of `words`."""
        if self.sets is not None:
            for words_set in self.sets:
                if words_set.isdisjoint(words):
                    return False
            return True
        for condition in self.conditions:
            if not condition.holds(words):
                return False
        return True


class WordRegex:
    """A case-insensitive pattern whose matches start at a word, matched on the lower-cased text."""

    __slots__ = ("_alternatives", "_always", "_by_literals", "_by_words", "_group", "_keys", "_member", "_words_only",
                 "fast", "slow")

    def __init__(self, pattern: str, flags: int = 0, group: Group | None = None) -> None:
        self.fast = re.compile(f"{_WORD_START}(?:{pattern})", flags)
        self.slow = re.compile(f"{_WORD_START}(?:{pattern})", flags | re.IGNORECASE)
        alternatives: list[_Alternative] = []
        if flags == 0 and self.fast.groups == 0:  # where one by one is sure to give the same match
            alternatives = [_Alternative(p) for p in split_alternatives(pattern)]
            if sum(a.rate for a in alternatives if not a.anchored) > _MAX_EXPECTED:
                alternatives = []
        self._alternatives = tuple(alternatives)
        self._always = tuple(i for i, a in enumerate(alternatives) if a.index is None and a.literals is None)
        self._by_literals = tuple((i, a.literals) for i, a in enumerate(alternatives) if a.literals is not None)
        by_words: dict[str, list[tuple[int, _Alternative | None]]] = {}
        for i, a in enumerate(alternatives):
            for key in a.index or ():
                by_words.setdefault(key, []).append((i, a if a.conditions else None))
        self._by_words = {key: tuple(entries) for key, entries in by_words.items()}
        self._keys = frozenset(by_words)
        self._words_only = bool(alternatives) and not self._always and not self._by_literals
        """Every alternative needs a word of `_keys`: a text with none of them cannot match."""
        _add_vocabulary(self._keys.union(*(c.words() for a in alternatives for c in a.conditions)))
        self._group = group if alternatives else None
        self._member = group.add(self) if group is not None and alternatives else -1

    def live(self, low: str) -> list[int] | tuple[int, ...]:
        """`_live` of a lower-cased text, through the group when there is one."""
        if self._group is not None:
            return self._group.live(low)[self._member]
        return self._live(low, words_of(low))

    def _live(self, low: str, words: frozenset[str]) -> list[int]:
        """The alternatives that may match `low` (whose words are `words`), in order."""
        live = list(self._always)
        for i, literals in self._by_literals:
            for literal in literals:
                if literal in low:
                    live.append(i)
                    break
        hits = self._keys.intersection(words)
        if not hits:
            return sorted(live) if live and self._by_literals else live
        found = set(live)
        for key in hits:
            for i, check in self._by_words[key]:
                if i not in found and (check is None or check.holds(words)):
                    found.add(i)
        return sorted(found)

    def search(self, text: str) -> re.Match[str] | None:
        """The first match; its positions index `text` (its group text is lower-cased)."""
        low = lowered(text)
        if len(low) != len(text):
            return self.slow.search(text)
        if not self._alternatives:
            return self.fast.search(low)
        if self._group is not None:
            live = self._group.live(low)[self._member]
        else:
            words = words_of(low)
            if self._words_only and self._keys.isdisjoint(words):
                return None  # what `_live` finds: no alternative
            live = self._live(low, words)
        if not live:
            return None
        if len(live) > _MAX_SEPARATE:
            return self.fast.search(low)
        alternatives = self._alternatives
        for i in live:
            if alternatives[i].anchored and (m := alternatives[i].regex.match(low)) is not None:
                # a match at the start: an earlier alternative matching there comes first
                for j in live:
                    if j >= i:
                        break
                    if (earlier := alternatives[j].regex.match(low)) is not None:
                        return earlier
                return m
        found: re.Match[str] | None = None
        for i in live:
            if alternatives[i].anchored:
                continue  # did not match above
            m = alternatives[i].search(low)
            if m is not None and (found is None or m.start() < found.start()):
                found = m
                if not m.start():
                    break  # nothing starts earlier, and an earlier alternative wins a tie
        return found

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        low = lowered(text)
        if len(low) != len(text):
            pattern, subject = self.slow, text
        else:
            pattern, subject = self.fast, low
            if self._alternatives and not self.live(low):
                return
        for m in pattern.finditer(subject):
            yield m.start(), m.end()


class Group:
    """`WordRegex` patterns matched on the same texts (a message's opening): which alternatives of each may match
    a text (`WordRegex._live`, the same lists) is found for all of them in one pass, one set intersection and one
    loop over their words and substrings, and kept for the last few texts, where each pattern's own pass was
    most of the cost of a search that matches nothing."""

    def __init__(self) -> None:
        self._members: list[WordRegex] = []
        self._by_word: dict[str, tuple[tuple[int, int, _Alternative | None], ...]] = {}
        self._keys: frozenset[str] = frozenset()
        self._literals: tuple[tuple[str, int, int], ...] = ()
        self._none: tuple[tuple[int, ...], ...] = ()
        self.live = lru_cache(maxsize=8)(self._live)

    def add(self, member: WordRegex) -> int:
        """Add a pattern (with alternatives); its index in the tuples `live` returns."""
        self._members.append(member)
        by_word: dict[str, list[tuple[int, int, _Alternative | None]]] = {}
        literals: list[tuple[str, int, int]] = []
        for k, m in enumerate(self._members):
            for key, entries in m._by_words.items():
                by_word.setdefault(key, []).extend((k, i, check) for i, check in entries)
            literals += [(literal, k, i) for i, alternative in m._by_literals for literal in alternative]
        self._by_word = {key: tuple(entries) for key, entries in by_word.items()}
        self._keys = frozenset(by_word)
        self._literals = tuple(literals)
        self._none = tuple(m._always for m in self._members)
        self.live.cache_clear()
        return len(self._members) - 1

    def _live(self, low: str) -> tuple[list[int] | tuple[int, ...], ...]:
        """Per member, the alternatives that may match `low`, in order."""
        words = words_of(low)
        found: dict[int, set[int]] = {}
        for key in self._keys.intersection(words):
            for k, i, check in self._by_word[key]:
                if check is None or check.holds(words):
                    found.setdefault(k, set()).add(i)
        for literal, k, i in self._literals:
            if literal in low:
                found.setdefault(k, set()).add(i)
        if not found:
            return self._none
        out: list[list[int] | tuple[int, ...]] = list(self._none)
        for k, alternatives in found.items():
            out[k] = sorted(alternatives.union(self._none[k]))
        return tuple(out)


OPENING = Group()
"""The cue patterns of the signal rules: each runs on a user message's opening, mostly the same text."""


def _caseless_cjk(char: str) -> bool:
    """A CJK character (or one past them) that no case-insensitive match can equate with another."""
    return char >= "\u2e80" and char.lower() == char == char.upper() and char.casefold() == char


class Prefiltered:
    """A compiled pattern behind a cheap necessary condition: a pattern every match of which holds a Chinese
    (or Japanese, Korean) character cannot match an ASCII text (`str.isascii` is a flag read); a
    case-sensitive one runs only on a text holding one of its few required substrings."""

    __slots__ = ("literals", "needs_cjk", "regex")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.regex = re.compile(pattern, flags)
        self.needs_cjk = any(
            all(any(_caseless_cjk(c) for c in lit) for lit in found)
            for found in necessary_sets(pattern, any_case=True)
        )
        chosen = None if flags & re.IGNORECASE else best(necessary_sets(pattern))
        literals = {lit.replace(EDGE, "") for lit in chosen} if chosen else set()
        self.literals = (
            tuple(sorted(literals, key=len, reverse=True))
            if literals and len(literals) <= _MAX_LITERALS and min(map(len, literals)) >= 2 else None
        )

    @property
    def pattern(self) -> str:
        return self.regex.pattern

    def search(self, text: str) -> re.Match[str] | None:
        if self.needs_cjk and text.isascii():
            return None
        if self.literals is not None and not any(lit in text for lit in self.literals):
            return None
        return self.regex.search(text)


_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def has_han(text: str) -> bool:
    """The text holds a Chinese character (an ASCII text, most of them, is known not to without a scan)."""
    return not text.isascii() and _HAN.search(text) is not None


def blank(text: str, spans: Iterator[tuple[int, int]]) -> str:
    """`text` with the given spans replaced by spaces (same length, so positions still hold)."""
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(" " * (end - start))
        last = end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)
