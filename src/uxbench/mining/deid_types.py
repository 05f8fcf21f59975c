"""The span of one detected personal value and the types there are (shared by `deid_rules`, `deid_names` and
`deid`, which reads keys and records without loading the rules)."""

from __future__ import annotations

from dataclasses import dataclass

PII_TYPES = ("URL", "EMAIL", "ID", "CARD", "PHONE", "IP", "ADDRESS", "NAME")


@dataclass(frozen=True)
class PiiSpan:
    """One detected value: its type, where it is, and its normalised form (for consistent pseudonyms)."""

    type: str
    start: int
    end: int
    norm: str
