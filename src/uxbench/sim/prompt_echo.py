"""Does a user message repeat the simulator's own prompt? ("... Write the user's next message now.")

A small model realising a user turn sometimes copies its instructions into the message. Every fixed sentence of
the realiser's and the free-mode simulator's templates (`templates/{en,zh}/`: the system prompts, the turn prompts
and the acts' instructions, with their `$placeholders` cut out) is a fragment; a user message that contains one,
compared after `markers.normalize` (width, case, punctuation and spaces ignored), echoes the prompt. Fragments
shorter than `MIN_CHARS` normalised characters (`MIN_CJK_CHARS` in Chinese) are left out: a user may say "thanks"
or "算了" on their own.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.sim.markers import normalize

TEMPLATES = PackageTemplates("uxbench.sim", "Simulator")
PROMPT_FILES = ("realise.txt", "realise_turn.txt", "open_turn.txt", "free.txt", "free_turn.txt")
MIN_CHARS = 16
MIN_CJK_CHARS = 7
_PLACEHOLDER_RE = re.compile(r"\$\{?\w+\}?")
_SPLIT_RE = re.compile(r"(?<=[.!?:;。！？：；])\s*|\n+|“|”|\"")
_CJK_RE = re.compile("[\u3400-\u9fff]")


def _fragments_of(text: str) -> set[str]:
    out: set[str] = set()
    for piece in _SPLIT_RE.split(text):
        for part in _PLACEHOLDER_RE.split(piece or ""):
            norm = normalize(part)
            if len(norm) >= (MIN_CJK_CHARS if _CJK_RE.search(norm) else MIN_CHARS):
                out.add(norm)
    return out


@lru_cache(maxsize=1)
def prompt_fragments() -> frozenset[str]:
    """The normalised fixed sentences of every simulator prompt template, en and zh."""
    out: set[str] = set()
    for lang in ("en", "zh"):
        for name in PROMPT_FILES:
            out |= _fragments_of(TEMPLATES.read(f"{lang}/{name}").decode("utf-8"))
        acts = json.loads(TEMPLATES.read(f"{lang}/acts.json").decode("utf-8"))
        for instruction in acts.values():
            out |= _fragments_of(str(instruction))
    return frozenset(out)


def prompt_echo(text: str) -> str | None:
    """The first prompt fragment the message contains (normalised), or None."""
    norm = normalize(text)
    if not norm:
        return None
    return next((f for f in sorted(prompt_fragments(), key=len, reverse=True) if f in norm), None)
