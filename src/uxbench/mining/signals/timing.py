"""Skim: the user answered faster than they could have read the reply.

The method notes give 0.15 s per character and an absolute gap under 30 s, on replies over 50 characters.
Per character is sound for Chinese (0.15 s/char is 400 characters a minute, a fast read; typical is about
260) but not for English, where 0.15 s per letter is about 70 words a minute, slower than anyone reads,
so every reply would count as skimmed. We therefore count *reading units* (a CJK character or a
non-CJK word, which take about the same time to read) and keep 0.15 s per unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from uxbench.mining.signals.similarity import reading_units


@dataclass(frozen=True)
class SkimResult:
    fired: bool | None
    evidence: str
    gap_s: float | None = None
    seconds_per_unit: float | None = None


def detect_skim(
    reply: str,
    reply_at: datetime | None,
    next_at: datetime | None,
    *,
    seconds_per_unit: float,
    max_gap_s: float,
    min_reply_chars: int,
) -> SkimResult:
    """Skim verdict for one reply given the time of the reply and of the user's next message."""
    if reply_at is None or next_at is None:
        return SkimResult(None, "not computed: no timestamps")
    gap = (next_at - reply_at).total_seconds()
    return skim_from_gap(reply, gap, seconds_per_unit=seconds_per_unit, max_gap_s=max_gap_s,
                         min_reply_chars=min_reply_chars)


def skim_from_gap(
    reply: str, gap_s: float, *, seconds_per_unit: float, max_gap_s: float, min_reply_chars: int
) -> SkimResult:
    if gap_s < 0:
        return SkimResult(None, f"not computed: negative gap {gap_s:.0f}s", gap_s)
    if len(reply.strip()) <= min_reply_chars:
        return SkimResult(False, f"reply of {len(reply.strip())} chars is too short to skim", gap_s)
    units = reading_units(reply)
    ratio = gap_s / units if units else float("inf")
    fired = ratio < seconds_per_unit and gap_s < max_gap_s
    return SkimResult(fired, f"{gap_s:.0f}s for {units} reading units ({ratio:.3f} s/unit)", gap_s, ratio)
