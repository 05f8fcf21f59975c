"""Verdict words in Chinese and English, and the regular expressions that find them.

A token only counts when it stands alone: a Chinese word must not touch another Han character
(so 好的, 最好, 偏差, 差异 and 好处 never count), an English word must not touch a letter or digit.
Negated forms are matched as whole units first, so 不好 / 不太好 / "not good" / "isn't good" are read
as bad and never as the 好 / good inside them. "Hedges" (不差, "not bad") are recognised so that the
bad inside them is not read either; they are not verdicts.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from uxbench.scoring._text import CJK

Kind = Literal["good", "bad", "neutral", "hedge"]
Lang = Literal["zh", "en"]
KINDS: tuple[Kind, ...] = ("bad", "hedge", "neutral", "good")
"""Alternation order: negated and longer forms before the bare words they contain."""

_ZH_INTENSIFIERS = "(?:是|太|很|够|怎么|大|算|那么|特别|十分|非常|太过|完全|真的){0,3}"
ZH_NEG_GOOD = rf"(?:并|也|都|真|可|就)?(?:不|没|非|算不上|谈不上|称不上){_ZH_INTENSIFIERS}好"
ZH_NEG_BAD = rf"(?:并|也|都|倒)?(?:不|没){_ZH_INTENSIFIERS}差"
_EN_NEGATORS = r"(?:not|no|never|hardly|nothing|neither|nor|isnt|dont|doesnt|wasnt|arent|wont|[a-z]*n't)"
_EN_VERBS = (
    r"(?:(?:be|been|look|looks|seem|seems|sound|sounds|feel|feels|appear|appears|come\s+across\s+as)\s+)?"
)
_EN_FILLERS = (
    r"(?:(?:a|an|very|so|that|really|quite|particularly|too|overly|entirely|all|at|exactly)\s+){0,3}"
)
EN_NEG_GOOD = rf"{_EN_NEGATORS}\s+{_EN_VERBS}{_EN_FILLERS}good"
EN_NEG_BAD = rf"{_EN_NEGATORS}\s+{_EN_VERBS}{_EN_FILLERS}bad"

# Words the prompts ask for ("core") and synonyms models use instead ("alias"). The fallback scan of
# free text only trusts core words; markers, JSON values and bare lines accept both.
_CORE: dict[Lang, dict[Kind, list[str]]] = {
    "zh": {
        "good": ["好"],
        "bad": [ZH_NEG_GOOD, "差"],
        "neutral": ["中", "一般", "中等", "中性"],
        "hedge": [ZH_NEG_BAD],
    },
    "en": {
        "good": ["good"],
        "bad": [EN_NEG_GOOD, "bad"],
        "neutral": ["neutral", "mixed"],
        "hedge": [EN_NEG_BAD],
    },
}
_ALIAS: dict[Lang, dict[Kind, list[str]]] = {
    "zh": {
        "good": ["满意", "好评", "点赞", "正面", "积极", "很好", "非常好", "挺好", "较好", "良好"],
        "bad": ["不满意", "差评", "点踩", "负面", "消极", "不佳", "很差", "非常差", "较差", "太差"],
        "neutral": [],
        "hedge": [],
    },
    "en": {
        "good": ["positive", "satisfied", "thumbs up"],
        "bad": ["negative", "poor", "unsatisfied", "dissatisfied", "thumbs down"],
        "neutral": [],
        "hedge": [],
    },
}
_BOUNDS: dict[Lang, tuple[str, str]] = {
    "zh": (rf"(?<![{CJK}])", rf"(?![{CJK}])"),
    "en": (r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"),
}


def _alternatives(words: list[str]) -> str:
    # Regex forms (containing a group) stay first; plain words go longest first.
    regexes = [w for w in words if "(" in w]
    plain = sorted((w for w in words if "(" not in w), key=len, reverse=True)
    return "|".join(regexes + [re.escape(w).replace(r"\ ", r"\s+") for w in plain])


@cache
def token_regex(langs: tuple[Lang, ...] = ("zh", "en"), aliases: bool = True) -> re.Pattern[str]:
    """One regex with a named group per kind; scan with `finditer` and read `match.lastgroup`."""
    groups = []
    for kind in KINDS:
        parts = []
        for lang in langs:
            words = _CORE[lang][kind] + (_ALIAS[lang][kind] if aliases else [])
            if words:
                left, right = _BOUNDS[lang]
                parts.append(f"{left}(?:{_alternatives(words)}){right}")
        if parts:
            groups.append(f"(?P<{kind}>{'|'.join(parts)})")
    return re.compile("|".join(groups), re.I)


def find_tokens(
    text: str, langs: tuple[Lang, ...] = ("zh", "en"), aliases: bool = True
) -> list[tuple[int, Kind]]:
    """(offset, kind) of every standalone verdict word in `text`."""
    out: list[tuple[int, Kind]] = []
    for match in token_regex(langs, aliases).finditer(text):
        kind = match.lastgroup
        if kind in KINDS:
            out.append((match.start(), kind))
    return out


def whole_token(text: str) -> Kind | None:
    """The kind when `text` is exactly one verdict word (either language, aliases allowed)."""
    match = token_regex().fullmatch(text.strip())
    kind = match.lastgroup if match is not None else None
    return kind if kind in KINDS else None


def leading_token(text: str) -> Kind | None:
    """The kind of a verdict word at the very start of `text`."""
    match = token_regex().match(text)
    kind = match.lastgroup if match is not None else None
    return kind if kind in KINDS else None


# A negated "good" at the very end of an output: such an output is never read as good. No left
# boundary on purpose, so that a glued prefix ("回复不好", "cannot good") still counts.
NEG_GOOD_TAIL_RE = re.compile(rf"(?:{ZH_NEG_GOOD}|{EN_NEG_GOOD})\W*$", re.I)
