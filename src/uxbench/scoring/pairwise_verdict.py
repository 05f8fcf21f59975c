"""Read a pairwise judge's answer (A, B or tie; zh and en), conservatively.

Order of evidence, in the answer with <think> blocks removed (as `verdict.py` reads good/bad):
1. the LAST explicit marker (`Verdict: A`, `Final answer: Reply B`, `结论：平局`, `答案：回复A`, `Winner: B`);
   a later final line that names another choice makes the output ambiguous;
2. a final line that is nothing but a choice (`A`, `**B**`, `「平局」`, `Reply A`, `回复B更好`, `I prefer A.`);
3. a first line that is nothing but a choice, when the final line does not contradict it.
A letter inside prose is never read: "A good reply would..." says nothing. Anything else gives None with a
note saying why. Separately reported reasoning is read only when the answer is empty, and only for a marker.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from uxbench.scoring._text import bare, lines, normalize, split_thinking

Pick = Literal["A", "B", "tie"]

_TIE = (r"tie|a\s+tie|draw|equal|equally\s+(?:good|bad|preferred)|same|no\s+preference|neither|both"
        r"|平局|平手|打平|持平|相同|一样|一样好|都一样|不分上下|不相上下|难分高下|差不多|两者相当|无偏好")
_NAMED = r"(?:(?:reply|response|answer|option|candidate|assistant|回复|回答|答复|选项|候选)\s*)?(?<![A-Za-z])"
_LETTER = rf"{_NAMED}(?P<letter>[AB])(?![A-Za-z0-9])"
# After a marker the letter must be a capital: "The answer is a bit long" names no reply.
_CHOICE_RE = re.compile(rf"(?:(?P<tie>{_TIE})(?![A-Za-z])|{_NAMED}(?P<letter>(?-i:[AB]))(?![A-Za-z0-9]))", re.I)
_LEAD = (r"(?:(?:i\s+(?:would\s+)?(?:prefer|choose|pick)|(?:the\s+)?(?:better|preferred)\s+(?:one|reply|response)"
         r"\s+is|prefer|choose|我(?:会)?(?:选|选择|更喜欢)|选择?|更喜欢|更好的是)\s*:?\s*)?")
_TAIL = (r"(?:\s*(?:is\s+(?:better|preferred|the\s+better\s+one)|wins|is\s+the\s+winner|更好|更佳|更优|较好|胜出?"
         r"|获胜|更受欢迎|更符合用户需求))?")
_WHOLE_RE = re.compile(rf"{_LEAD}(?:(?P<tie>{_TIE})|{_LETTER}){_TAIL}", re.I)
_MARKER_RE = re.compile(
    r"(?<![A-Za-z])(?P<name>final\s+(?:answer|verdict|choice|judge?ment|decision)|verdict|answer|choice"
    r"|preference|preferred(?:\s+(?:reply|response))?|winner|better\s+(?:reply|response)|decision|conclusion"
    r"|最终(?:答案|结论|判断|选择)|结论|答案|判断|选择|更好的(?:回复|一条)?|胜者|偏好)"
    r"(?![A-Za-z])[ \t]*[\"'”」』]?[ \t]*(?:[】\]][ \t]*:?|[=:][ \t]*|(?:是|为)[ \t]*:?|\s+is[ \t]*:?)[ \t]*",
    re.I,
)
_VALUE_LEAD = " \t\"'“”「」『』【】[](){}<>《》"


class ParsedPick(NamedTuple):
    """The choice (None when no choice could be read) and how it was read."""

    pick: Pick | None
    note: str


def _choice(match: re.Match[str]) -> Pick:
    return "tie" if match.group("tie") else match.group("letter").upper()  # type: ignore[return-value]


def _whole(line: str) -> Pick | None:
    match = _WHOLE_RE.fullmatch(bare(line))
    return _choice(match) if match is not None else None


def _markers(text: str) -> list[tuple[int, Pick, str]]:
    found: list[tuple[int, Pick, str]] = []
    for match in _MARKER_RE.finditer(text):
        end = text.find("\n", match.end())
        value = text[match.end(): end if end >= 0 else len(text)].lstrip(_VALUE_LEAD)
        choice = _CHOICE_RE.match(value)
        pick = _choice(choice) if choice is not None else _whole(value)  # a lone lower-case letter is fine
        if pick is not None:
            found.append((match.start(), pick, f"marker '{match.group('name')}'"))
    return found


def _read_answer(answer: str) -> ParsedPick:
    text_lines = lines(answer)
    final_pos, final_line = text_lines[-1]
    final = _whole(final_line)
    markers = _markers(answer)
    if markers:
        pos, pick, how = markers[-1]
        if final is not None and final_pos > pos and final != pick:
            return ParsedPick(None, f"ambiguous: {how} says {pick}, final line says {final}")
        return ParsedPick(pick, how)
    first = _whole(text_lines[0][1]) if len(text_lines) > 1 else None
    if final is not None:
        if first is not None and first != final:
            return ParsedPick(None, f"ambiguous: first line says {first}, final line says {final}")
        return ParsedPick(final, "final line")
    if first is not None:
        return ParsedPick(first, "first line")
    return ParsedPick(None, "no choice found (expected A, B or tie)")


def parse_pick(text: str, *, reasoning: str | None = None) -> ParsedPick:
    """A, B, tie or None from a pairwise judge's output. `reasoning`: the provider's separate reasoning text."""
    norm = normalize(text or "")
    answer, thinking = split_thinking(norm)
    if answer:
        return _read_answer(answer)
    source = "\n".join(p for p in (thinking, normalize(reasoning or "").strip()) if p)
    if not source:
        return ParsedPick(None, "empty output")
    markers = _markers(source)
    if not markers:
        return ParsedPick(None, "empty answer; no choice marker in the reasoning")
    return ParsedPick(markers[-1][1], f"from reasoning (answer empty): {markers[-1][2]}")
