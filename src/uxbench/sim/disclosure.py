"""The code-level premature-disclosure detector: does a user turn state a private fact's value, however spelled?

A value is found in a text after both are normalised the same way (`uxbench.sim.numerals.arabic_numbers`: NFKC
folds full-width characters, Chinese numerals and English number words become digits; then case-folding):

- **identifiers** (a value with at least `MIN_CODE_DIGITS` digits: order numbers, phones, amounts, codes): only
  the letters and digits are compared, so spacing and grouping do not matter ("1234 5678", "1234-5678",
  "12,345,678", "１２３４５６７８", "一二三四五六七八" all match 12345678); an edge digit of the value may not touch
  another digit of the text (12345678 is not found in 9123456789);
- **short numbers** (one or two digits: a party size, a floor): the number standing alone (2 in "2 adults",
  "two adults", "两个人"), never inside a longer number;
- **words** (names, places, models): the words in order with any spacing or hyphenation between them, on word
  boundaries for Latin script; for Chinese script, spaces are ignored;
- **placeholders** of de-identified logs (`[PHONE_1]`): the placeholder itself.

Paraphrases ("the one I ordered last Tuesday" for a date) are beyond code: the UFS judge pass covers them.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from uxbench.sim.numerals import arabic_numbers

MIN_CODE_DIGITS = 3
"""A value with at least this many digits is compared as an identifier (letters and digits only)."""
ValueKind = Literal["identifier", "short_number", "words", "placeholder"]
_PLACEHOLDER_RE = re.compile(r"\[[A-Z]+_\d+\]")
_CJK_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD_SPLIT_RE = re.compile(r"[\s\-_/·・]+")


@lru_cache(maxsize=1024)  # one message is searched for each of the persona's facts in turn
def _fold(text: str) -> str:
    return arabic_numbers(unicodedata.normalize("NFKC", text)).casefold()


def _alnum(text: str) -> tuple[str, list[int]]:
    """The letters and digits of `text` (CJK characters count as letters), with each one's offset in `text`."""
    keep = [(i, ch) for i, ch in enumerate(text) if ch.isalnum()]
    return "".join(ch for _, ch in keep), [i for i, _ in keep]


@dataclass(frozen=True)
class CompiledValue:
    """A fact value ready to be searched for."""

    value: str
    kind: ValueKind
    key: str
    pattern: re.Pattern[str] | None = None

    def find(self, text: str) -> tuple[int, int] | None:
        """(start, end) in the folded text of the first occurrence, or None. Offsets are for evidence only."""
        if not self.key:
            return None
        if self.kind == "placeholder":
            at = text.find(self.value)
            return (at, at + len(self.value)) if at >= 0 else None
        folded = _fold(text)
        if self.kind == "identifier":
            squashed, offsets = _alnum(folded)
            start = 0
            while (at := squashed.find(self.key, start)) >= 0:
                end = at + len(self.key)
                before_ok = not (self.key[0].isdigit() and at > 0 and squashed[at - 1].isdigit())
                after_ok = not (self.key[-1].isdigit() and end < len(squashed) and squashed[end].isdigit())
                if before_ok and after_ok and _digits_touch_only_separators(folded, offsets[at:end]):
                    return offsets[at], offsets[end - 1] + 1
                start = at + 1
            return None
        if self.kind == "words" and _CJK_RE.search(self.key):
            compact = re.sub(r"\s+", "", folded)
            at = compact.find(self.key)
            return (at, at + len(self.key)) if at >= 0 else None
        assert self.pattern is not None
        match = self.pattern.search(folded)
        return match.span() if match else None


def _digits_touch_only_separators(folded: str, positions: list[int]) -> bool:
    """The matched characters are at most 3 characters of spacing or punctuation apart, within one line:
    "1234 - 5678" is one value grouped by hand, "... 12.\n\n34 ..." is two numbers."""
    for a, b in itertools.pairwise(positions):
        gap = folded[a + 1 : b]
        if len(gap) > 3 or "\n" in gap:
            return False
    return True


@lru_cache(maxsize=4096)  # a persona's values, searched for in every message of its sessions (immutable result)
def compile_value(value: str) -> CompiledValue:
    """How `value` will be searched for (see the module docstring)."""
    raw = value.strip()
    if _PLACEHOLDER_RE.fullmatch(raw):
        return CompiledValue(raw, "placeholder", raw)
    folded = _fold(raw)
    key, _ = _alnum(folded)
    digits = sum(ch.isdigit() for ch in key)
    if digits >= MIN_CODE_DIGITS:
        return CompiledValue(raw, "identifier", key)
    if key.isdigit():
        return CompiledValue(raw, "short_number", key, re.compile(rf"(?<![\d.]){re.escape(key)}(?![\d]|\.\d)"))
    if _CJK_RE.search(folded):
        return CompiledValue(raw, "words", re.sub(r"\s+", "", folded))
    words = [w for w in _WORD_SPLIT_RE.split(folded) if w]
    body = r"[\s\-_/·・]*".join(re.escape(w) for w in words)
    return CompiledValue(raw, "words", " ".join(words), re.compile(rf"(?<!\w){body}(?!\w)") if words else None)


def mentions(value: str | CompiledValue, text: str) -> bool:
    """True when `text` states `value` (in any of the spellings the module docstring lists)."""
    compiled = value if isinstance(value, CompiledValue) else compile_value(value)
    return compiled.find(text) is not None


DisclosureVerdict = Literal["ok", "premature", "forbidden", "not_said"]


@dataclass(frozen=True)
class DisclosureFinding:
    """Where a fact was first stated and whether that was allowed."""

    fact_id: str
    policy: str
    first_said: int | None
    """Position in the transcript of the first user turn stating the value; None when never stated."""
    requested_at: int | None
    """Position of the first assistant turn that asked for it (from the assessor or the judge); None if never."""
    verdict: DisclosureVerdict
    """ok; premature (said before it was allowed); forbidden (a `never` fact said at all); not_said."""
    evidence: str = ""


def first_user_mention(value: str | CompiledValue, turns: Sequence[tuple[str, str]]) -> int | None:
    """Position in `turns` ((role, text) pairs) of the first user turn that states the value."""
    compiled = value if isinstance(value, CompiledValue) else compile_value(value)
    for position, (role, text) in enumerate(turns):
        if role == "user" and compiled.find(text) is not None:
            return position
    return None


def allowed_from(policy: str, turns: Sequence[tuple[str, str]], requested_at: int | None) -> int | None:
    """The first transcript position at which a user turn may state the fact; None: never.

    opening: from the first turn. on_request / volunteer_if_adjacent: the user turn after the assistant asked
    (an adjacent volunteer needs the judge; code holds it to the request). after_turn:k: from the k-th user turn
    (1 = the opener) or after a request, whichever is first. never: never."""
    asked = requested_at + 1 if requested_at is not None else None
    if policy == "opening":
        return 0
    if policy == "never":
        return None
    if policy.startswith("after_turn:"):
        k = int(policy.split(":", 1)[1])
        user_positions = [i for i, (role, _) in enumerate(turns) if role == "user"]
        by_turn = user_positions[k - 1] if 0 < k <= len(user_positions) else (0 if k <= 0 else None)
        candidates = [p for p in (by_turn, asked) if p is not None]
        return min(candidates) if candidates else None
    return asked


def check_fact(
    fact_id: str, value: str, policy: str, turns: Sequence[tuple[str, str]], requested_at: int | None
) -> DisclosureFinding:
    """Was fact `fact_id` stated by the user before its policy allowed it? (`turns`: the whole transcript.)"""
    said = first_user_mention(value, turns)
    if said is None:
        return DisclosureFinding(fact_id, policy, None, requested_at, "not_said")
    allowed = allowed_from(policy, turns, requested_at)
    if policy == "never":
        return DisclosureFinding(fact_id, policy, said, requested_at, "forbidden",
                                 f"a never-disclose fact is stated in turn {said}")
    if allowed is None or said < allowed:
        why = "before the assistant asked for it" if requested_at is None or said <= requested_at else \
            "before its turn"
        return DisclosureFinding(fact_id, policy, said, requested_at, "premature", f"stated in turn {said}, {why}")
    return DisclosureFinding(fact_id, policy, said, requested_at, "ok")
