"""Numbers as users write them, rewritten to Arabic digits: full-width digits, Chinese numerals (digit by digit,
一二三四, or positional, 一万二千三百, with 两 / 幺 / 〇), Arabic digits with 万 / 千 / k, and English number words
("five thousand", "one two three four"). Used by the disclosure detector to find a fact's value however it is
spelled; no text is changed anywhere else."""

from __future__ import annotations

import re
import unicodedata

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG_UNITS = {"万": 10_000, "亿": 100_000_000}
_ZH_RUN_RE = re.compile("[零〇一幺二两三四五六七八九十百千万亿]+")
_ARABIC_UNIT_RE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(万|千|亿|[kK](?![A-Za-z]))")

_EN_ONES = {"zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9}
_EN_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
             "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
            "ninety": 90}
_EN_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_EN_WORDS = {**_EN_ONES, **_EN_TEENS, **_EN_TENS, **_EN_SCALES}
_EN_WORD = "(?:" + "|".join(sorted(_EN_WORDS, key=len, reverse=True)) + ")"
_AFTER_SCALE = "(?:" + "|".join(f"(?<={w})" for w in _EN_SCALES) + ")"
_EN_RUN_RE = re.compile(rf"\b{_EN_WORD}(?:(?:[\s-]+|{_AFTER_SCALE}\s+and\s+){_EN_WORD})*\b", re.I)
"""A run of number words; "and" joins only after a scale word (one hundred and five, not "one and two")."""


def _zh_positional(run: str) -> int | None:
    """一万二千三百四十五 -> 12345, 十二 -> 12, 一百零五 -> 105; None when the run is not a well-formed number."""
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in _ZH_DIGITS:
            if digit is not None and ch not in "零〇":
                return None  # two digits in a row inside a positional number (一二百): not one reading
            digit = _ZH_DIGITS[ch] if ch not in "零〇" else digit
        elif ch in _ZH_SMALL_UNITS:
            section += (1 if digit is None else digit) * _ZH_SMALL_UNITS[ch]
            digit = None
        else:  # 万 / 亿
            section += digit or 0
            if section == 0:
                return None
            total += section * _ZH_BIG_UNITS[ch]
            section, digit = 0, None
    return total + section + (digit or 0)


def _zh_run(match: re.Match[str]) -> str:
    run = match.group()
    if not any(ch in _ZH_SMALL_UNITS or ch in _ZH_BIG_UNITS for ch in run):
        return "".join(str(_ZH_DIGITS[ch]) for ch in run)  # read digit by digit: 一二三四 -> 1234
    value = _zh_positional(run)
    return run if value is None else str(value)


def _arabic_unit(match: re.Match[str]) -> str:
    scale = {"万": 10_000, "千": 1000, "亿": 100_000_000, "k": 1000, "K": 1000}[match.group(2)]
    value = float(match.group(1)) * scale
    return str(int(value)) if value == int(value) else match.group()


def _en_run(match: re.Match[str]) -> str:
    words = [w.lower() for w in re.split(r"[\s-]+", match.group()) if w and w.lower() != "and"]
    if len(words) == 1 and words[0] in ("oh",):
        return match.group()  # "oh" alone is an interjection, not a zero
    if all(w in _EN_ONES for w in words):
        return "".join(str(_EN_ONES[w]) for w in words)  # digit by digit: "one two three" -> 123
    total, current = 0, 0
    for w in words:
        if w in _EN_SCALES:
            current = max(current, 1) * _EN_SCALES[w]
            if _EN_SCALES[w] >= 1000:
                total, current = total + current, 0
        elif w == "oh":
            return match.group()
        else:
            current += _EN_WORDS[w]
    return str(total + current)


def arabic_numbers(text: str) -> str:
    """`text` with full-width characters folded (NFKC), Chinese numerals, 5万 / 3千 / 5k and English number words
    rewritten to Arabic digits; everything else unchanged."""
    text = unicodedata.normalize("NFKC", text)
    text = _ZH_RUN_RE.sub(_zh_run, text)
    text = _ARABIC_UNIT_RE.sub(_arabic_unit, text)
    return _EN_RUN_RE.sub(_en_run, text)
