"""Pairwise win rates: A over B with ties counted half, and the position inconsistency of a two-order judge."""

from __future__ import annotations

from typing import Any

from uxbench.metrics.proportions import proportion, wilson_ci


def win_rate(wins: int, ties: int, losses: int, confidence: float = 0.95) -> dict[str, Any]:
    """Win rate of A over B = (wins + ties / 2) / n, with a Wilson interval on those n comparisons.

    A tie counted as half a win has less variance than a coin flip, so the Wilson interval (exact for
    win/lose outcomes) is slightly conservative when there are ties. The shares of wins, ties and losses
    are reported apart, each with its own Wilson interval.
    """
    if min(wins, ties, losses) < 0:
        raise ValueError(f"counts must be >= 0, got wins={wins}, ties={ties}, losses={losses}")
    n = wins + ties + losses
    score = wins + ties / 2
    low, high = wilson_ci(score, n, confidence)
    return {
        "value": score / n if n else None,
        "ci_low": low,
        "ci_high": high,
        "n": n,
        "method": "wilson, ties count half",
        "wins": proportion(wins, n, confidence),
        "ties": proportion(ties, n, confidence),
        "losses": proportion(losses, n, confidence),
    }
