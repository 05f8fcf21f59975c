"""Short evidence snippets that end at word boundaries: "That's wrong, it is" rather than "That's wrong, it i".

Latin words (letters, digits, apostrophes, hyphens) are kept whole; Chinese and Japanese text has no spaces, and
each character counts as a word there. A snippet never grows past what was asked: a cut moves back to the last
boundary (one word longer than the whole limit is cut hard), and a window around a match shrinks to whole
words, never past the match itself.
"""

from __future__ import annotations

ELLIPSIS = "…"


def _in_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "_'-")


def _splits_word(text: str, at: int) -> bool:
    """True when a cut at `at` falls inside a Latin word."""
    return 0 < at < len(text) and _in_word(text[at - 1]) and _in_word(text[at])


def clip(text: str, limit: int, mark: str = ELLIPSIS) -> str:
    """`text` stripped and cut to at most `limit` characters at a word boundary, `mark` appended when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = max(1, limit - len(mark))
    if _splits_word(text, cut):
        back = cut
        while back > 0 and _in_word(text[back - 1]):
            back -= 1
        if text[:back].strip():  # else one word longer than the limit: cut it hard
            cut = back
    return text[:cut].rstrip(" ,;:") + mark


def window(text: str, start: int, end: int, pad: int) -> str:
    """The match `text[start:end]` with up to `pad` characters of context on each side, trimmed to whole words."""
    left, right = max(0, start - pad), min(len(text), end + pad)
    while left < start and _splits_word(text, left):
        left += 1
    while right > end and _splits_word(text, right):
        right -= 1
    return text[left:right].strip()
