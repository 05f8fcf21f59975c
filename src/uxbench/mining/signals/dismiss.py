"""Short give-up replies ("算了", "不用了", "forget it", "never mind", "whatever").

Only a message that *starts* with a give-up phrase (after an optional "ok", "哦", "行吧" and the like)
and stays short counts. Polite acknowledgements (好的谢谢, ok thanks, got it) are not give-ups:
they are positive or neutral and are handled by `feedback.find_praise`.
"""

from __future__ import annotations

import re

_LEAD_ZH = r"(?:(?:好吧|行吧|哦|噢|嗯|唉|哎|额|呃|那|ok|好|行|没事|算了)[，,。.！!~～ ]*)*"
_GIVE_UP_ZH = (
    r"(?:算了|罢了|不用了|没事了|不问了|随便(?:你)?(?:吧|了)?$|无所谓|不需要了|不要了|拉倒|放弃了?|懒得(?:问"
    r"|说|弄|管)"
    r"|当我没问|我自己(?:来|弄|改|查|想|写|搞|解决)|不聊了|不说了|不弄了|没意思|就这样吧|那就这样吧|没事没事)"
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
_TRAILING = re.compile(r"[\s。.！!~～?？…]+$")
_DISMISS = re.compile(rf"^\s*(?:{_LEAD_ZH}{_GIVE_UP_ZH}|{_LEAD_EN}{_GIVE_UP_EN})", re.IGNORECASE)


def find_dismiss(text: str, max_chars: int = 40) -> str | None:
    """The give-up phrase that opens a short user message, or None."""
    stripped = _TRAILING.sub("", text.strip())
    if not stripped or len(stripped) > max_chars:
        return None
    m = _DISMISS.search(stripped)
    return m.group(0).strip() if m else None
