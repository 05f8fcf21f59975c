"""Ranks with honest ties: systems ranked by a metric, neighbours that cannot be told apart share a rank."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from uxbench.metrics.proportions import finite_or_none, multinomial_resample, percentile_interval


def paired_rate_diff(
    a: Sequence[bool], b: Sequence[bool], *, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """rate(A) - rate(B) on the same cases (a[i], b[i]: case i was a success for A, for B), with a paired
    percentile bootstrap interval. Cases are resampled with both outcomes, which is a multinomial draw of the
    (A only, B only, both or neither) counts: diff = (a_only - b_only) / n."""
    if len(a) != len(b):
        raise ValueError(f"paired sequences differ in length: {len(a)} vs {len(b)}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    x, y = np.asarray(a, dtype=bool).reshape(-1), np.asarray(b, dtype=bool).reshape(-1)
    n = int(x.size)
    a_only, b_only = int(np.sum(x & ~y)), int(np.sum(~x & y))
    out: dict[str, Any] = {"n": n, "a_only": a_only, "b_only": b_only, "diff": None, "ci_low": None,
                           "ci_high": None, "method": "paired bootstrap", "n_boot": n_boot, "seed": seed}
    if n == 0:
        return out
    reps = multinomial_resample([a_only, b_only, n - a_only - b_only], n_boot, np.random.default_rng(seed))
    low, high = percentile_interval((reps[:, 0] - reps[:, 1]) / n, confidence)
    out.update(diff=(a_only - b_only) / n, ci_low=finite_or_none(low), ci_high=finite_or_none(high))
    return out


def diff_contains_zero(diff: dict[str, Any] | None) -> bool | None:
    """Whether a paired difference's interval contains 0; None when it has no interval (no shared cases)."""
    if not diff or diff.get("ci_low") is None or diff.get("ci_high") is None:
        return None
    return bool(diff["ci_low"] <= 0.0 <= diff["ci_high"])


def shared_ranks(tied_with_previous: Sequence[bool]) -> list[int]:
    """Competition ranks of systems already sorted best first: entry i shares the rank of entry i - 1 when
    `tied_with_previous[i]` (its difference from that neighbour is not significant), otherwise its rank is
    i + 1 (so two systems tied at rank 1 are followed by rank 3). Ties chain: A ~ B and B ~ C put all three
    on one rank even when A and C differ. `tied_with_previous[0]` is ignored."""
    ranks: list[int] = []
    for i, tied in enumerate(tied_with_previous):
        ranks.append(ranks[-1] if i > 0 and tied else i + 1)
    return ranks
