"""Explicit feedback (thumbs, regenerations) and positive implicit signals (thanks and praise, copy/share)."""

from __future__ import annotations

import re

from uxbench.mining.signals.fastre import OPENING, Prefiltered, WordRegex, lowered
from uxbench.mining.types import Turn

_F = re.IGNORECASE

# Negated praise ("not helpful", "不太好", "not perfect") must not count as praise.
_NEGATED = re.compile(
    r"\b(?:not|isn'?t|wasn'?t|no longer|hardly|never)\s+(?:very |that |so |really |quite |too )?"
    r"(?:good|great|helpful|useful|right|correct|perfect|clear|working|what)\b|不(?:太|怎么|是很|够)?(?:好"
    r"|对|行|清楚|有用|准确|完美)",
    _F,
)
_PRAISE_ZH = Prefiltered(
    r"谢谢|多谢|感谢|谢啦|谢了|太棒|太好了|很棒|真棒|好棒|完美|厉害|牛啊|牛逼|赞|不错|没错|对的|正确|很有用"
    r"|有用|有帮助"
    r"|解决了|可以可以|好用(?!的)|明白了|懂了|学到了|没毛病|说得对|就是这样|正是|就用这个|很好|非常好|清楚了"
    r"|有道理|靠谱"
)
_PRAISE_EN = WordRegex(
    r"\b(?:thanks?|thank you|thx|ty|tysm|cheers|perfect|great|awesome|excellent|amazing|brilliant|fantastic"
    r"|helpful"
    r"|wonderful|nice|cool|exactly|love it|good job|well done|not bad|makes sense|got it|that (?:works|worked"
    r"|helps"
    r"|helped|fixed it)|it works|works now|you'?re right|that'?s (?:right|correct)|(?:yes|yep|all|is) correct"
    r"|spot on"
    r"|nothing wrong|no problem)\b",
    group=OPENING,
)


_NEGATION_WORDS = ("not", "isn", "wasn", "no longer", "hardly", "never")
"""One of these is in every match of `_NEGATED`'s English part, in any case."""
_ANY_NEGATION_WORD = re.compile("|".join(map(re.escape, _NEGATION_WORDS)))
"""Finds one of `_NEGATION_WORDS` in a text: one scan in C for the six substring tests."""


def _negated(text: str) -> bool:
    """``_NEGATED.search(text) is not None``. An ASCII text cannot hold the Chinese part and, lower-cased, holds
    one of `_NEGATION_WORDS` wherever the English part matches (case-insensitive matching of ASCII letters is
    lower-casing them): most texts fail that test, for less than the regex costs."""
    if text.isascii():  # the lower-cased text the cue patterns already made, when there is one
        if _ANY_NEGATION_WORD.search(lowered(text)) is None:
            return False
    return _NEGATED.search(text) is not None


def find_praise(text: str, max_chars: int = 200) -> str | None:
    """Thanks or praise in a short user message, unless negated; None otherwise."""
    if len(text) > max_chars or not text.strip() or _negated(text):
        return None
    m = _PRAISE_ZH.search(text) or _PRAISE_EN.search(text)
    return text[m.start():m.end()] if m else None


def thumbs(turn: Turn) -> tuple[bool, bool]:
    """(thumbs_down, thumbs_up) of an assistant turn, from `feedback` or like/unlike counters."""
    c = turn.counters
    down = turn.feedback == "dislike" or c.get("unlike", 0) > 0 or c.get("dislike", 0) > 0
    up = turn.feedback == "like" or c.get("like", 0) > 0
    return down, up


def engagement(turn: Turn) -> str | None:
    """Evidence of copying or sharing the reply, from the product's counters."""
    parts = [f"{name}={turn.counters[name]}" for name in ("copy", "share") if turn.counters.get(name, 0) > 0]
    return ", ".join(parts) if parts else None


def regenerations(turn: Turn, replaced: int) -> str | None:
    """Evidence that the user asked for another reply at this turn (replaced replies or a click counter)."""
    clicks = turn.counters.get("regenerate_clicks", 0)
    if replaced == 0 and clicks == 0 and turn.regeneration_index == 0:
        return None
    parts = []
    if replaced:
        parts.append(f"{replaced} earlier repl{'y' if replaced == 1 else 'ies'} replaced")
    if turn.regeneration_index and not replaced:
        parts.append(f"regeneration #{turn.regeneration_index}")
    if clicks:
        parts.append(f"regenerate_clicks={clicks}")
    return ", ".join(parts)
