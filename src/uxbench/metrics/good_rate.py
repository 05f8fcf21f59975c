"""Task 2 Good% and Task 3 Recovery Rate: the share of generated replies a judge calls good.

Two denominators side by side, as the published figures used both without saying so:
- `all_cases`: good / every selected case (a failed generation, an unscorable or unreadable score counts as
  not good: the v1 convention);
- `scored_only`: good / cases the judge scored (the leaderboard's convention).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from uxbench.metrics.judge import MISSING_STRATUM, turns_bucket
from uxbench.metrics.proportions import proportion

LENGTH_BUCKETS = ((0, "0-199"), (200, "200-499"), (500, "500-999"), (1000, "1000-1999"), (2000, "2000+"))
"""Reply length buckets, in characters."""


def length_bucket(n_chars: int) -> str:
    label = LENGTH_BUCKETS[0][1]
    for low, name in LENGTH_BUCKETS:
        if n_chars >= low:
            label = name
    return label


def history_bucket(n_messages: int) -> str:
    return turns_bucket(n_messages)


def _sort_key(key: str) -> tuple[int, int, str]:
    if key == MISSING_STRATUM:
        return (2, 0, key)
    digits = "".join(ch for ch in key[: len(key) - len(key.lstrip("0123456789"))])
    return (0, int(digits), key) if digits else (1, 0, key)


def good_rate_metrics(
    labels: Sequence[str | None],
    *,
    n_cases: int,
    scores: Sequence[float | None] = (),
    strata: Mapping[str, Sequence[str | int | None]] | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Figures over one judge's verdicts.

    `labels[i]` is the judge's verdict on the i-th scored reply (good / bad / None when unscorable or
    unreadable); `n_cases` counts every selected case, including those whose generation failed or that were
    not scored. `scores` are the numeric scores where the judge gave one. `strata` maps a breakdown name to one
    value per entry of `labels`.
    """
    n_scored = sum(1 for label in labels if label is not None)
    n_good = sum(1 for label in labels if label == "good")
    values = np.asarray([s for s in scores if s is not None], dtype=float)
    out: dict[str, Any] = {
        "n_cases": n_cases,
        "n_judged": len(labels),
        "n_scored": n_scored,
        "n_good": n_good,
        "good_rate_all_cases": proportion(n_good, n_cases, confidence),
        "good_rate_scored_only": proportion(n_good, n_scored, confidence),
        "score_mean": float(values.mean()) if values.size else None,
        "score_median": float(np.median(values)) if values.size else None,
        "n_with_score": int(values.size),
        "breakdowns": {},
    }
    for name, column in (strata or {}).items():
        groups: dict[str, list[str | None]] = {}
        for value, label in zip(column, labels, strict=True):
            key = MISSING_STRATUM if value is None else str(value)
            groups.setdefault(key, []).append(label)
        out["breakdowns"][name] = {
            key: {
                "n": len(group),
                "good_rate_scored_only": proportion(
                    sum(1 for g in group if g == "good"), sum(1 for g in group if g is not None), confidence
                ),
            }
            for key, group in sorted(groups.items(), key=lambda kv: _sort_key(kv[0]))
        }
    return out
