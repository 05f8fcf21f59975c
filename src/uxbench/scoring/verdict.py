"""Read a judge's verdict from free model text, conservatively.

Order of evidence, for the answer text with <think> blocks removed:
1. the LAST explicit marker (`Verdict:`, `Final answer:`, `结论：`, `答案：`, JSON `"verdict": ...`);
   a later bare final line that disagrees with it makes the output ambiguous;
2. a final line that is nothing but a verdict word (`**差**`, `「好」`, `Bad.`);
3. a first line that is nothing but a verdict word, when no other line contradicts it;
4. verdict words standing alone anywhere, when they all agree.
Anything else gives label None with a note saying why: an output is never silently dropped.
Separately reported reasoning is read only when the answer is empty, and then only for a marker.
An output whose last words are a negated "good" (不好, "not good") is never read as good.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from uxbench.scoring._text import bare, lines, normalize, split_thinking
from uxbench.scoring.lexicon import NEG_GOOD_TAIL_RE, Kind, Lang, find_tokens, leading_token, whole_token

Label = Literal["good", "bad", "neutral"]
_BINARY: frozenset[str] = frozenset({"good", "bad"})
_THREE: frozenset[str] = frozenset({"good", "bad", "neutral"})


class ParsedVerdict(NamedTuple):
    """A parsed label (None when no verdict could be read) and how it was read."""

    label: Label | None
    note: str


class ParsedScore(NamedTuple):
    """A parsed Likert score (None when none could be read) and how it was read."""

    score: int | None
    note: str


def _marker_re(names: str) -> re.Pattern[str]:
    # NAME, an optional closing quote/bracket, then a separator (colon, '=', 'is', 是, 为, or 】).
    return re.compile(
        rf"(?<![A-Za-z])(?P<name>{names})(?![A-Za-z])[ \t]*[\"'”」』]?[ \t]*"
        r"(?:[】\]][ \t]*:?|[=是为:][ \t]*:?"
        r"|(?P<word>(?<![A-Za-z])(?:is|was|would\s+be|will\s+be)(?![A-Za-z]))[ \t]*:?)",
        re.I,
    )


# "The answer is bad" in prose is about the judged reply, so 'is' only follows the unambiguous names.
_WEAK_NAMES = frozenset({"answer", "label", "result", "decision", "rating", "score", "grade", "prediction"})


def _is_marker(match: re.Match[str]) -> bool:
    return match.group("word") is None or match.group("name").lower() not in _WEAK_NAMES


_LABEL_MARKER_RE = _marker_re(
    r"final[ \t]+(?:answer|verdict|judge?ment|label|rating|decision|prediction)|verdict|answer|judge?ment"
    r"|label|conclusion|decision|prediction|result"
    r"|最终(?:答案|结论|判断|判定|评价|预测|结果)|结论|答案|判断|判定|预测|评价|反馈|结果"
)
_SCORE_MARKER_RE = _marker_re(
    r"final[ \t]+(?:score|rating|answer|verdict|grade)|score|rating|verdict|answer|grade"
    r"|最终(?:评分|得分|分数|答案|结论)|评分|打分|得分|分数|分值|结论|答案"
)
_VALUE_LEAD = " \t\"'“”「」『』【】[](){}<>《》"
_NUMBER_RE = re.compile(r"[+-]?\d+(?:\.\d+)?")
_ZH_NUMERALS = {**dict(zip("一二三四五六七八九十", range(1, 11), strict=True)), "两": 2}
_SCORE_RE = re.compile(
    r"(?P<num>[+-]?\d+(?:\.\d+)?|[一二两三四五六七八九十](?=\s*分))"
    r"(?:\s*(?:/|out\s+of|分制中的|分中的)\s*(?P<den>\d+))?",
    re.I,
)
_BARE_SCORE_RE = re.compile(rf"{_SCORE_RE.pattern}\s*(?:分|points?)?", re.I)
_LOOSE_INT_RE = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.]*\d)")


@dataclass(frozen=True)
class _Found:
    """One reading of the text: where, what (None = a non-verdict such as a hedge), and how."""

    pos: int
    label: Label | None
    note: str


# ---------------------------------------------------------------- labels (binary, three-class)


def _from_kind(kind: Kind, allowed: frozenset[str]) -> tuple[Label | None, str]:
    if kind == "hedge":
        return None, "hedged answer (such as 'not bad' / 不差) is not a verdict"
    if kind not in allowed:
        return None, "answered neutral, which is not a binary verdict"
    return kind, ""


def _from_number(text: str, allowed: frozenset[str]) -> tuple[Label | None, str]:
    value = float(text)
    if value == 1:
        return "good", ""
    if value == -1:
        return "bad", ""
    if value == 0:
        return ("neutral", "") if "neutral" in allowed else (None, "0 is not a binary verdict")
    return None, f"number {text} is not a verdict"


def _markers(text: str, allowed: frozenset[str]) -> list[_Found]:
    found: list[_Found] = []
    for match in _LABEL_MARKER_RE.finditer(text):
        if not _is_marker(match):
            continue
        end = text.find("\n", match.end())
        value = text[match.end() : end if end >= 0 else len(text)].lstrip(_VALUE_LEAD)
        name = match.group("name")
        kind = leading_token(value)
        if kind is not None:
            label, why = _from_kind(kind, allowed)
        else:
            number = _NUMBER_RE.match(value)
            if number is None:
                continue
            label, why = _from_number(number.group(), allowed)
        found.append(_Found(match.start(), label, f"marker '{name}'" + (f"; {why}" if why else "")))
    return found


def _bare_kind(line: str) -> Kind | None:
    return whole_token(bare(line))


def _read_answer(answer: str, langs: tuple[Lang, ...], allowed: frozenset[str]) -> ParsedVerdict:
    text_lines = lines(answer)
    final_pos, final_line = text_lines[-1]
    final_kind = _bare_kind(final_line)
    markers = _markers(answer, allowed)
    if markers:
        last = markers[-1]
        if final_pos > last.pos and final_kind is not None:
            later, _ = _from_kind(final_kind, allowed)
            if later != last.label:
                return ParsedVerdict(
                    None, f"ambiguous: {last.note} says {last.label}, final line says {later}"
                )
        return ParsedVerdict(last.label, last.note)
    first_kind = _bare_kind(text_lines[0][1]) if len(text_lines) > 1 else None
    if final_kind is not None:
        if first_kind is not None and first_kind != final_kind:
            return ParsedVerdict(
                None, f"ambiguous: first line says {first_kind}, final line says {final_kind}"
            )
        label, why = _from_kind(final_kind, allowed)
        return ParsedVerdict(label, "final line" + (f"; {why}" if why else ""))
    tokens = find_tokens(answer, langs, aliases=False)
    kinds = {kind for _, kind in tokens} | ({first_kind} if first_kind is not None else set())
    if not kinds:
        return ParsedVerdict(None, "no verdict found")
    if len(kinds) > 1:
        return ParsedVerdict(
            None, f"ambiguous: found {', '.join(sorted(kinds))} with no final verdict marker"
        )
    label, why = _from_kind(kinds.pop(), allowed)
    how = (
        "first line"
        if first_kind is not None
        else ("single token" if len(tokens) == 1 else f"{len(tokens)} agreeing tokens")
    )
    return ParsedVerdict(label, how + (f"; {why}" if why else ""))


def _ends_negated_good(*texts: str) -> bool:
    return any(NEG_GOOD_TAIL_RE.search(t.rstrip()[-200:]) is not None for t in texts)


def _parse_labels(
    text: str, lang: str | None, reasoning: str | None, allowed: frozenset[str]
) -> ParsedVerdict:
    norm = normalize(text or "")
    answer, thinking = split_thinking(norm)
    if answer:
        langs: tuple[Lang, ...] = (lang,) if lang in ("zh", "en") else ("zh", "en")  # type: ignore[assignment]
        result, source = _read_answer(answer, langs, allowed), answer
    else:
        source = "\n".join(p for p in (thinking, normalize(reasoning or "").strip()) if p)
        if not source:
            return ParsedVerdict(None, "empty output")
        markers = _markers(source, allowed)
        if not markers:
            return ParsedVerdict(None, "empty answer; no verdict marker in the reasoning")
        result = ParsedVerdict(markers[-1].label, f"from reasoning (answer empty): {markers[-1].note}")
    if result.label == "good" and _ends_negated_good(norm, source):
        return ParsedVerdict(None, "ambiguous: the output ends with a negated 'good'")
    return result


MEMO_MAX_CHARS = 256
"""Outputs (answer and reasoning together) up to this long are remembered with their verdict: a judge at
temperature 0 answers thousands of cases with the same few short texts (`好`, `**差**`, `Verdict: bad`), and
reading one costs tens of microseconds. Longer outputs are read every time."""
MEMO_ENTRIES = 4096
"""How many short outputs are remembered at most (the memo is emptied when full: memory stays bounded)."""
_MEMO: dict[tuple[str, str | None, str | None, frozenset[str]], ParsedVerdict] = {}


def _parse_labels_memo(
    text: str, lang: str | None, reasoning: str | None, allowed: frozenset[str]
) -> ParsedVerdict:
    """`_parse_labels`, remembered for short outputs (it is a pure function of its arguments)."""
    size = len(text) + (len(reasoning) if reasoning else 0) if isinstance(text, str) else MEMO_MAX_CHARS + 1
    if size > MEMO_MAX_CHARS:
        return _parse_labels(text, lang, reasoning, allowed)
    key = (text, lang, reasoning, allowed)
    found = _MEMO.get(key)
    if found is None:
        found = _parse_labels(text, lang, reasoning, allowed)
        if len(_MEMO) >= MEMO_ENTRIES:
            _MEMO.clear()
        _MEMO[key] = found
    return found


def parse_binary(text: str, lang: str | None = None, *, reasoning: str | None = None) -> ParsedVerdict:
    """good / bad / None from a judge's output.

    `lang` ("zh" / "en") limits the free-text fallback scan to that language's words; markers and
    bare lines accept both languages. `reasoning` is the provider's separate reasoning text.
    """
    return _parse_labels_memo(text, lang, reasoning, _BINARY)


def parse_three_class(text: str, lang: str | None = None, *, reasoning: str | None = None) -> ParsedVerdict:
    """good / neutral / bad / None (zh 好 / 中 / 差, en good / neutral / bad; 0 in JSON = neutral)."""
    return _parse_labels_memo(text, lang, reasoning, _THREE)


# ---------------------------------------------------------------- Likert scores


def _check_score(num: str, den: str | None, scale: int, how: str) -> ParsedScore:
    value = float(_ZH_NUMERALS.get(num, 0) or num)
    if den is not None and int(den) != scale:
        return ParsedScore(None, f"{how}: score given out of {den}, expected out of {scale}")
    if value != int(value):
        return ParsedScore(None, f"{how}: non-integer score {num}")
    if not 1 <= value <= scale:
        return ParsedScore(None, f"{how}: score {num} outside 1-{scale}")
    return ParsedScore(int(value), how)


def _score_markers(text: str, scale: int) -> list[tuple[int, ParsedScore]]:
    found: list[tuple[int, ParsedScore]] = []
    for match in _SCORE_MARKER_RE.finditer(text):
        if not _is_marker(match):
            continue
        end = text.find("\n", match.end())
        value = text[match.end() : end if end >= 0 else len(text)].lstrip(_VALUE_LEAD)
        score = _SCORE_RE.match(value)
        if score is not None:
            how = f"marker '{match.group('name')}'"
            found.append((match.start(), _check_score(score["num"], score["den"], scale, how)))
    return found


def parse_likert(text: str, scale: int, *, reasoning: str | None = None) -> ParsedScore:
    """An integer 1..scale from a judge's output, read in the same order as labels."""
    norm = normalize(text or "")
    answer, thinking = split_thinking(norm)
    if not answer:
        source = "\n".join(p for p in (thinking, normalize(reasoning or "").strip()) if p)
        if not source:
            return ParsedScore(None, "empty output")
        markers = _score_markers(source, scale)
        if not markers:
            return ParsedScore(None, "empty answer; no score marker in the reasoning")
        score, note = markers[-1][1]
        return ParsedScore(score, f"from reasoning (answer empty): {note}")
    markers = _score_markers(answer, scale)
    if markers:
        return markers[-1][1]
    text_lines = lines(answer)
    for line, how in ((text_lines[-1][1], "final line"), (text_lines[0][1], "first line")):
        whole = _BARE_SCORE_RE.fullmatch(bare(line))
        if whole is not None:
            return _check_score(whole["num"], whole["den"], scale, how)
    numbers = set(_LOOSE_INT_RE.findall(answer))
    if len(numbers) == 1:
        return _check_score(numbers.pop(), None, scale, "single number")
    if numbers:
        return ParsedScore(None, f"ambiguous: several numbers ({', '.join(sorted(numbers)[:5])})")
    return ParsedScore(None, "no score found")
