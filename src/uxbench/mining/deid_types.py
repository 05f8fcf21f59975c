"""The span of one detected personal value (shared by the rules of `deid_rules` and `deid_names`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PiiSpan:
    """One detected value: its type, where it is, and its normalised form (for consistent pseudonyms)."""

    type: str
    start: int
    end: int
    norm: str
