"""Is a run usable for comparison? A configuration whose sessions mostly ended in `error` (an assistant that
failed after its retries, a simulator whose outputs were unusable twice, `--mode free --simulator scripted:user`
against an assistant that never completes an item: every session a premature stop) measures its own breakage,
not the assistants or the simulator; `sim compare` refuses it and `sim sensitivity` leaves it out, saying why."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from uxbench.sim.types import SessionRecord

MAX_ERROR_SHARE = 0.5
"""A run with more than this share of its sessions ended in `error` is not compared."""


def error_counts(records: Iterable[SessionRecord]) -> tuple[int, int, Counter[str]]:
    """(sessions, sessions ended in error, error details by count)."""
    n = 0
    details: Counter[str] = Counter()
    for record in records:
        n += 1
        if record.termination.reason == "error":
            details[(record.termination.detail or "no detail").split(":")[0][:80]] += 1
    return n, sum(details.values()), details


def broken_reason(label: str, n: int, n_errors: int, details: Counter[str]) -> str | None:
    """Why the run cannot be compared, or None when it can."""
    if n == 0:
        return f"{label} has no sessions"
    if n_errors / n <= MAX_ERROR_SHARE:
        return None
    top = "; ".join(f"{detail} ({count})" for detail, count in details.most_common(3))
    return (f"{label}: {n_errors} of {n} sessions ended in error ({top}); its metrics measure the breakage, not "
            "the assistant. Fix the configuration (a rerun of the same `uxbench sim run` retries sessions the "
            "assistant failed; with --mode free, scripted:user stops once it has raised every item, so an "
            "assistant that completes none ends every session with a premature stop) and run it again")
