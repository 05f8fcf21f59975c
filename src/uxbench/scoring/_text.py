"""Text clean-up shared by the verdict parsers: Unicode forms, markdown decoration, reasoning blocks."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
"""Han ideograph ranges: a Chinese verdict character only counts when no ideograph touches it."""

_THINK_TAGS = "think|thinking|reasoning|reflection"
_BLOCK_RE = re.compile(rf"<({_THINK_TAGS})>(.*?)</\1>", re.S | re.I)
_OPEN_RE = re.compile(rf"<(?:{_THINK_TAGS})>", re.I)
_CLOSE_RE = re.compile(rf"</(?:{_THINK_TAGS})>", re.I)
# LaTeX wrappers math-trained models put around final answers: \boxed{bad}, \text{好}
_LATEX_RE = re.compile(r"\\(?:boxed|text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_ZERO_WIDTH_RE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# Decoration around a bare answer on its own line: markdown, quotes, brackets, bullets, punctuation.
DECORATION = " \t#>-+•·*_~`\"'“”「」『』【】[](){}<>《》.。,，!！?？;；:：、…|/\\"


class Split(NamedTuple):
    """A model output divided into the answer proper and any inline reasoning."""

    answer: str
    thinking: str


def normalize(text: str) -> str:
    """NFKC (full-width colon and letters become ASCII), one kind of line break, no emphasis markers."""
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    text = _ZERO_WIDTH_RE.sub("", text)
    text = "\n".join(text.splitlines())
    text = _LATEX_RE.sub(r" \1 ", text)
    # Emphasis and code marks never carry a verdict; removing them lets "**Verdict:** `bad`" read plainly.
    return text.replace("*", "").replace("`", "").replace("__", "")


def split_thinking(text: str) -> Split:
    """Move <think>-style blocks out of the answer.

    A closing tag without an opening one (chat templates often put `<think>` in the prompt) makes
    everything before it reasoning; an opening tag that never closes at the very start (output cut off
    mid-thought) makes everything after it reasoning. A stray unclosed tag after some answer text is
    dropped and the text kept, so a later verdict is not hidden.
    """
    thinking: list[str] = []

    def _collect(match: re.Match[str]) -> str:
        thinking.append(match.group(2))
        return "\n"

    text = _BLOCK_RE.sub(_collect, text)
    closes = list(_CLOSE_RE.finditer(text))
    if closes:
        thinking.append(text[: closes[-1].start()])
        text = text[closes[-1].end() :]
    opened = _OPEN_RE.search(text)
    if opened is not None:
        if text[: opened.start()].strip():
            text = _OPEN_RE.sub("\n", text)
        else:
            thinking.append(text[opened.end() :])
            text = ""
    return Split(text.strip(), "\n".join(part.strip() for part in thinking if part.strip()))


def strip_reasoning(text: str) -> str:
    """The answer part of a model output, <think> blocks removed (used for intermediate outputs)."""
    return split_thinking(text).answer


def lines(text: str) -> list[tuple[int, str]]:
    """Non-blank lines with their start offsets."""
    out: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        if line.strip():
            out.append((pos, line))
        pos += len(line) + 1
    return out


def bare(line: str) -> str:
    """A line without surrounding decoration: '**「差」。**' -> '差'."""
    return line.strip(DECORATION)
