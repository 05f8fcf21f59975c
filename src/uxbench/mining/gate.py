"""Safety gate: keep unsafe conversations out of test cases, and say why.

Four categories, with Chinese and English patterns written for this project (in
``resources/gate_patterns.yaml``, where the design decisions are written down next to the patterns):

- ``sexual``: explicit sexual content and requests for it; any sexual content involving minors.
- ``abuse``: identity slurs, threats, death wishes and dehumanising statements about a group. Plain profanity
  aimed at the assistant is not gated: it is a complaint signal.
- ``self_harm``: requests for suicide or self-harm methods, first-person lethal-dose questions and stated
  intent to die. A third-person lethal-dose question (``这个药的致死剂量是多少``) is pharmacology and passes.
- ``weapons_drugs``: instructions to make weapons, explosives, chemical or biological agents or illegal
  drugs, and where to buy them.

Each hit is dropped when an allow pattern of its category occurs within ``window`` characters (reporting,
prevention, law and news, harmless homonyms such as "bath bomb" or "nerf gun"). The patterns target
explicit content and instruction-seeking, not topics, so ordinary medical (drug doses, side effects,
treating depression), legal (divorce, lawsuits, drug laws), political (elections, government policy) and
educational questions pass, as do "kill the process" and 杀毒软件.

Limits: patterns see one message at a time, so a harmful request split over several turns, deliberate
obfuscation (spaced letters, homophones, pinyin) and languages other than Chinese and English are not
caught. The gate is a filter for building test sets, not a moderation system.

`gate_session` is a pure function; the snippets in its reasons are at most `SNIPPET_CHARS` characters, with
any personal data replaced by its type.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, Field

from uxbench.errors import ConfigError
from uxbench.mining.deid import redact_text
from uxbench.mining.gate_prefilter import Prefilter
from uxbench.mining.snippets import clip
from uxbench.mining.types import Session

CATEGORIES = ("sexual", "abuse", "self_harm", "weapons_drugs")
SNIPPET_CHARS = 40
MAX_REASONS = 10
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060\ufeff\u00ad]")


class GateResult(BaseModel):
    """Whether a conversation may become a test case, and the reasons when it may not."""

    conversation_id: str
    allowed: bool
    reasons: list[str] = Field(default_factory=list)
    """``category: "snippet" (user turn 4)`` for the first `MAX_REASONS` hits."""
    categories: list[str] = Field(default_factory=list)
    """Every category hit, sorted."""
    hits: int = 0


@dataclass(frozen=True)
class GateHit:
    """One pattern match in one text: its category and a short, PII-free snippet."""

    category: str
    snippet: str


@dataclass(frozen=True)
class _Rules:
    window: int
    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    """(category, pattern), in category order."""
    allow: dict[str, re.Pattern[str] | None]
    prefilter: Prefilter


def _join(patterns: list[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


def _compile(data: dict[str, Any]) -> _Rules:
    categories = data.get("categories")
    if not isinstance(categories, dict) or set(categories) != set(CATEGORIES):
        raise ConfigError(f"gate patterns must define exactly the categories {', '.join(CATEGORIES)}")
    patterns: list[tuple[str, re.Pattern[str]]] = []
    allow: dict[str, re.Pattern[str] | None] = {}
    for name in CATEGORIES:
        spec = categories[name] or {}
        try:
            patterns += [(name, re.compile(p)) for p in spec.get("patterns") or []]
            allowed = list(spec.get("allow") or [])
            allow[name] = re.compile(_join(allowed)) if allowed else None
        except re.error as exc:
            raise ConfigError(f"gate category '{name}' has an invalid pattern: {exc}") from None
        if not spec.get("patterns"):
            raise ConfigError(f"gate category '{name}' has no patterns")
    return _Rules(window=int(data.get("window", 24)), patterns=tuple(patterns), allow=allow,
                  prefilter=Prefilter([pattern.pattern for _, pattern in patterns]))


@lru_cache(maxsize=1)
def _default_rules() -> _Rules:
    text = resources.files("uxbench.mining").joinpath("resources/gate_patterns.yaml").read_text("utf-8")
    return _compile(yaml.safe_load(text))


_CURLY = ("\u2019", "\u2018", "\u02bc")
"""Typographic apostrophes, made plain before matching."""


def normalize_for_gate(text: str) -> str:
    """NFKC (full-width to half-width), lower case, zero-width characters removed, typographic apostrophes
    made plain (phone keyboards type "I’m"), spaces collapsed."""
    if text.isascii():  # already NFKC, and no zero-width characters or curly apostrophes
        return _ascii_norm(text).decode("ascii")
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = _ZERO_WIDTH.sub("", text).lower()
    for curly in _CURLY:  # str.replace finds a character at memchr speed; translate looks up every one
        if curly in text:
            text = text.replace(curly, "'")
    return _collapse_spaces(text)


_ASCII_LOWER_SPACED = bytes(
    ord(" ") if chr(byte).isspace() else ord(chr(byte).lower()) if byte < 0x80 else byte for byte in range(256))
"""An ASCII byte's lower case, or a space for white space (what str.isspace says: \\t-\\r, \\x1c-\\x1f, " ")."""
_SPACE_RUN = re.compile(b"  +")


def _ascii_norm(text: str) -> bytes:
    """``normalize_for_gate(text)`` of an ASCII text, as bytes: lower case and white space to spaces in one table
    lookup a byte, then runs of spaces made one (2x faster than str.lower and split / join: no word objects)."""
    norm = text.encode("ascii").translate(_ASCII_LOWER_SPACED)
    return _SPACE_RUN.sub(b" ", norm) if b"  " in norm else norm


def _collapse_spaces(text: str) -> str:
    """``re.sub(r"\\s+", " ", text)``, 3x faster: str.split and ``\\s`` share one notion of white space."""
    words = text.split()
    if not words:
        return " " if text else ""
    joined = " ".join(words)
    if text[0].isspace():
        joined = " " + joined
    return joined + " " if text[-1].isspace() else joined


def _word_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


def _snippet(text: str) -> str:
    clean = redact_text(text).replace('"', "'")
    return clip(clean, SNIPPET_CHARS)


def gate_text(text: str, rules: _Rules | None = None) -> list[GateHit]:
    """Hits in one text, after the allow-list (empty when the text passes)."""
    rules = rules or _default_rules()
    # An ASCII text (most) is normalised and searched as bytes (`_ascii_norm`, inlined: this runs for every
    # message), and made a str only when a pattern is due.
    norm = None
    if text.isascii():
        raw = text.encode("ascii").translate(_ASCII_LOWER_SPACED)
        if b"  " in raw:
            raw = _SPACE_RUN.sub(b" ", raw)
    else:
        norm = normalize_for_gate(text)
        raw = norm.encode("utf-8", "surrogatepass")
    due = rules.prefilter.due(raw)
    if not due:
        return []  # most texts
    if norm is None:
        norm = raw.decode("ascii")
    hits: list[GateHit] = []
    for category in CATEGORIES:
        allow = rules.allow[category]
        spans: list[tuple[int, int]] = []
        for index in due:
            pattern_category, pattern = rules.patterns[index]
            if pattern_category != category:
                continue
            for match in pattern.finditer(norm):
                start, end = match.span()
                inside_word = start > 0 and _word_char(norm[start]) and _word_char(norm[start - 1])
                if inside_word or not match.group().strip():
                    continue  # "xporn" is not "porn"
                if allow is not None and allow.search(norm[max(0, start - rules.window): end + rules.window]):
                    continue
                spans.append((start, end))
        last_end = -1
        for start, end in sorted(spans):  # one hit per stretch of text, however many patterns matched it
            if start >= last_end:
                hits.append(GateHit(category, _snippet(norm[start:end])))
            last_end = max(last_end, end)
    return hits


_KEPT, _KEPT_MAX_CHARS = 1024, 8000
"""The hits of the last 1,024 texts of up to 8,000 characters are kept, as `deid_rules.find_pii` keeps its spans:
a real log repeats whole messages (10% of the ShareGPT pool's text within the last thousand texts)."""


@lru_cache(maxsize=_KEPT)
def _default_hits(text: str) -> tuple[GateHit, ...]:
    # a pure function of the text, its hits frozen: a repeated text is looked up, not scanned again
    return tuple(gate_text(text, _default_rules()))


def gate_session(session: Session) -> GateResult:
    """Check every message (final turns and replaced replies, both roles) of a conversation."""
    rules = _default_rules()
    reasons: list[str] = []
    categories: set[str] = set()
    count = 0
    for turn in [*session.turns, *session.regenerated]:
        text = turn.content
        for hit in gate_text(text, rules) if len(text) > _KEPT_MAX_CHARS else _default_hits(text):
            count += 1
            categories.add(hit.category)
            if len(reasons) < MAX_REASONS:
                reasons.append(f'{hit.category}: "{hit.snippet}" ({turn.role} turn {turn.turn_index})')
    return GateResult(
        conversation_id=session.conversation_id, allowed=count == 0, reasons=reasons,
        categories=sorted(categories), hits=count,
    )
