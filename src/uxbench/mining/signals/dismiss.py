"""Short give-up replies ("算了", "不用了", "forget it", "never mind", "whatever").

Only a message that *starts* with a give-up phrase (after an optional "ok", "哦", "行吧" and the like)
and stays short counts. Polite acknowledgements (好的谢谢, ok thanks, got it) are not give-ups:
they are positive or neutral and are handled by `feedback.find_praise`; nor is a give-up phrase next to
thanks or a fix ("不用了谢谢，已经解决了", "没事了，原来是静音了", "never mind, it works now").
A give-up scores `SCORE_GIVE_UP`; a message that is only a resigned "行吧" / "好吧" / "唉" / "fine." scores
`SCORE_RESIGNED`: after a refusal it is giving up, after a useful answer a reluctant yes.
"""

from __future__ import annotations

import re

_LEAD_ZH = r"(?:(?:好吧|行吧|哦|噢|嗯|唉|哎|额|呃|那|ok|好|行|没事|算了)[，,。.！!~～ ]*)*"
_GIVE_UP_ZH = (
    r"(?:算了|罢了|不用了|没事了|不问了|随便(?:你)?(?:吧|了)?$|无所谓|不需要了|不要了|拉倒|放弃了?|懒得(?:问"
    r"|说|弄|管)"
    r"|当我没问|我自己(?:来|弄|改|查|想|写|搞|解决)|不聊了|不说了|不弄了|没意思|就这样吧|那就这样吧|没事没事"
    r"|不指望(?:你|你们)?了?|(?:我)?换(?:一)?家|我?(?:不买|不修|不办|不要|不换|不退|不等)了"
    r"|(?:我)?还是(?:自己|去|打电话|找人工|找别人|问别人)|我(?:自己)?去(?:营业厅|店里|门店|柜台|线下|官网)"
    r"|(?:就)?退了吧|退了算了)"
)
_LEAD_EN = (
    r"(?:(?:ok(?:ay)?|oh|ugh|meh|fine|well|hmm+|lol|sigh|alright|so|yeah|eh|nah|nope|no|oh well)[,.!]*\s+)*"
)
_GIVE_UP_EN = (
    r"(?:forget (?:it|about it|that|i asked|this)|never ?mind|nvm|whatever|meh$|i give up|giving up"
    r"|i'?ll pass|pass$|skip it"
    r"|doesn'?t matter|not important|no need|don'?t bother|leave it|drop it|stop$"
    r"|i'?ll (?:just )?(?:google|search|do|figure|find|ask|look|check|handle|write)\b"
    r"|i'?ll do it myself|not worth it|this is pointless|you can'?t help)"
)
_TRAILING = "。.！!~～?？…"
"""Stripped from the end of a message, with whitespace (what `[\\s。.！!~～?？…]+$` removes)."""
_RESIGNED = re.compile(
    r"^(?:唉|哎|哎呀|行吧|好吧|那好吧|那行吧|行行行|好好好|fine|whatever you say|sigh)$", re.IGNORECASE
)
_RESOLVED = re.compile(
    r"谢谢|多谢|感谢|解决了|好了|可以了|拿到了?|收到了?|搞定|没问题|明白了|原来是|步骤很清楚|\bthanks?\b|\bthank you\b"
    r"|\b(?:solved|fixed|works?|working|got it|figured it out)\b",
    re.IGNORECASE,
)
SCORE_GIVE_UP = 0.8
SCORE_RESIGNED = 0.6
_DISMISS = re.compile(rf"^\s*(?:{_LEAD_ZH}{_GIVE_UP_ZH}|{_LEAD_EN}{_GIVE_UP_EN})", re.IGNORECASE)


def _strip_trailing(text: str) -> str:
    """`text` without its trailing punctuation and whitespace (`str.rstrip()` and the regex `\\s` agree on
    whitespace); a C loop rather than a regex tried at every position of a long message."""
    while True:
        stripped = text.rstrip(_TRAILING).rstrip()
        if len(stripped) == len(text):
            return text
        text = stripped


def score_dismiss(text: str, max_chars: int = 40) -> tuple[float, str] | None:
    """(score, phrase) of a give-up in a short user message, or None."""
    stripped = _strip_trailing(text.strip())
    if not stripped or len(stripped) > max_chars or _RESOLVED.search(stripped):
        return None
    if _RESIGNED.match(stripped):
        return SCORE_RESIGNED, stripped
    m = _DISMISS.search(stripped)
    return (SCORE_GIVE_UP, m.group(0).strip()) if m else None


def find_dismiss(text: str, max_chars: int = 40) -> str | None:
    """The give-up phrase that opens a short user message, or None."""
    found = score_dismiss(text, max_chars)
    return found[1] if found else None
