"""What a user message says of the persona's facts (the session's record of disclosures, and the check that a
realised message leaks no fact the policy has not allowed yet).

A value counts as said when its normalised characters occur in the message and the disclosure detector
(`sim/disclosure.py`) finds it as a value, so a name inside an identifier ("Raj Sanchez" in "raj_sanchez_7340")
is not the name said. A value that occurs only inside another fact's value the message says (the name "Amelia"
inside the e-mail address "amelia.silva7872@example.com") is said with that fact, not on its own: giving the
e-mail when asked for it does not disclose the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from uxbench.sim import markers
from uxbench.sim.disclosure import mentions
from uxbench.sim.persona import Fact


def says(text: str, value: str) -> bool:
    norm = markers.normalize(value)
    return bool(norm) and norm in markers.normalize(text) and mentions(value, text)


def holders(value: str, others: Iterable[str]) -> list[str]:
    """The other values that hold `value` ("amelia.silva7872@example.com" holds "Amelia")."""
    return list(_holders(value, tuple(others)))


@lru_cache(maxsize=4096)  # a persona's values, compared with every message of its sessions
def _holders(value: str, others: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted((o for o in others if len(o) > len(value) and mentions(value, o)), key=len, reverse=True))


def without(text: str, values: Sequence[str]) -> str:
    """The text with these values cut out (longest first)."""
    for value in values:
        text = _value_re(value).sub(" ", text)
    return text


@lru_cache(maxsize=4096)
def _value_re(value: str) -> re.Pattern[str]:
    return re.compile(re.escape(value), re.IGNORECASE)


def alone(text: str, value: str, others: Iterable[str]) -> str:
    """The text without the other values that hold `value` (where it is said only as part of one of them)."""
    return without(text, _holders(value, tuple(others)))


def facts_said(text: str, facts: Sequence[Fact]) -> tuple[str, ...]:
    """The ids of the facts the message states, each on its own."""
    values = [f.value for f in facts]
    return tuple(f.id for f in facts if says(alone(text, f.value, values), f.value))


def states_hidden(text: str, hidden: Sequence[str], allowed: Sequence[str]) -> str | None:
    """Why the message may not be sent (it states a hidden value on its own), or None."""
    for value in hidden:
        if says(alone(text, value, allowed), value):
            return "a fact it may not say yet"
    return None
