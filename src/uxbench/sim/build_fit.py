"""Reaction weights and patience of a mined persona, fitted from its conversation's reaction counts.

One conversation holds few reactions, so every share is pulled toward the pool's (all conversations considered
in the build): share_c = (n_c + ALPHA * pool_c) / (n + ALPHA), with ALPHA pseudo-counts (empirical-Bayes additive
smoothing; a conversation without a reaction gets the pool's shares). What is counted, over the build part's
assistant turns in order (`sim.reactions` labels):

- a failure reaction (repeat, rephrase, complain, dismiss) that opens a run of them counts toward `failure`, one
  later in the run toward `failure_low` (patience is lower by then); a topic change right after a failure
  reaction counts as `abandon` (the user dropped the item);
- the conversation ending on a dismissal, or right after a failure reaction, is a give-up: closing by `dismiss`
  when the last reaction was a dismissal, else by `leave` (only when the build part reaches the end);
- `like` = thumbs-up / replies not reacted to as failures; `dislike` = thumbs-down / failed replies (a failure
  reaction or a thumbs-down); `skim` = skim fired / skim computed (timestamps needed);
- patience: f failed replies sat through; a user who gave up after f had `session` = f - 0.5 (the failure beyond
  the budget ends the session), one who did not, f + 0.5 at least (the pool's median when larger).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from uxbench.sim.persona import ClosingWeights, Patience, Reactions, ReactionWeights
from uxbench.sim.reactions import DISSATISFIED, reaction_of

ALPHA = 2.0
"""Pseudo-counts of the pool's shares in every fitted share."""
WEIGHTS = ("repeat", "rephrase", "complain", "dismiss", "abandon")
_DEFAULT = Reactions()


@dataclass
class ReactionCounts:
    """What one conversation's build part shows."""

    first: Counter[str] = field(default_factory=Counter)
    """Failure reactions that open a run of them (and abandons)."""
    later: Counter[str] = field(default_factory=Counter)
    """Failure reactions later in a run."""
    closing: Counter[str] = field(default_factory=Counter)
    """dismiss / leave when the conversation ended right after a failure."""
    failed_replies: int = 0
    ok_replies: int = 0
    thumbs_up: int = 0
    thumbs_down: int = 0
    skim_fired: int = 0
    skim_computed: int = 0

    @property
    def gave_up(self) -> bool:
        return sum(self.closing.values()) > 0


def count_reactions(rows: Sequence[Mapping[str, Any]], *, ends_conversation: bool = True) -> ReactionCounts:
    """Counts over signal rows of consecutive assistant turns (in order). `ends_conversation`: the rows reach the
    conversation's end (a build prefix does not), so a final dismissal or a silent end after a failure is a
    give-up."""
    out = ReactionCounts()
    previous_failed = False
    last_failure = ""
    for row in rows:
        reaction = reaction_of(row)
        failed = reaction in DISSATISFIED
        if failed:
            (out.later if previous_failed else out.first)[reaction] += 1
            last_failure = reaction
        elif reaction == "abandon_topic" and previous_failed:
            out.first["abandon"] += 1
        elif reaction == "end" and previous_failed and ends_conversation:
            out.closing["dismiss" if last_failure == "dismiss" else "leave"] += 1
        if failed or row.get("thumbs_down"):
            out.failed_replies += 1
        elif reaction != "end" or row.get("thumbs_up"):
            out.ok_replies += 1
        out.thumbs_up += bool(row.get("thumbs_up"))
        out.thumbs_down += bool(row.get("thumbs_down"))
        if row.get("skim") is not None:
            out.skim_computed += 1
            out.skim_fired += bool(row.get("skim"))
        previous_failed = failed
    if ends_conversation and rows and reaction_of(rows[-1]) == "dismiss":
        out.closing["dismiss"] += 1  # the user's last message gives up
    return out


@dataclass(frozen=True)
class Pool:
    """The shares every conversation's are pulled toward."""

    first: dict[str, float]
    later: dict[str, float]
    closing: dict[str, float]
    like: float
    dislike: float
    skim: float
    session: float
    """Median fitted session patience of the conversations that gave up (the default's when none did)."""

    @classmethod
    def of(cls, counts: Sequence[ReactionCounts]) -> Pool:
        def shares(counter: Counter[str], keys: Sequence[str], default: Mapping[str, float]) -> dict[str, float]:
            total = sum(counter[k] for k in keys)
            return {k: counter[k] / total for k in keys} if total else dict(default)

        first = sum((c.first for c in counts), Counter())
        later = sum((c.later for c in counts), Counter())
        closing = sum((c.closing for c in counts), Counter())
        ok = sum(c.ok_replies for c in counts)
        failed = sum(c.failed_replies for c in counts)
        computed = sum(c.skim_computed for c in counts)
        gave_up = [max(0.5, c.failed_replies - 0.5) for c in counts if c.gave_up]
        return cls(
            first=shares(first, WEIGHTS, _norm(_DEFAULT.failure.items())),
            later=shares(later, WEIGHTS, _norm(_DEFAULT.failure_low.items())),
            closing=shares(closing, ("dismiss", "leave"), {"dismiss": 0.5, "leave": 0.5}),
            like=sum(c.thumbs_up for c in counts) / ok if ok else _DEFAULT.like,
            dislike=sum(c.thumbs_down for c in counts) / failed if failed else _DEFAULT.dislike,
            skim=sum(c.skim_fired for c in counts) / computed if computed else 0.0,
            session=statistics.median(gave_up) if gave_up else Patience().session,
        )


def _norm(weights: Mapping[Any, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {str(k): v / total for k, v in weights.items()}


def _smooth(counter: Counter[str], keys: Sequence[str], prior: Mapping[str, float]) -> dict[str, float]:
    n = sum(counter[k] for k in keys)
    return {k: round((counter[k] + ALPHA * prior.get(k, 0.0)) / (n + ALPHA), 4) for k in keys}


def _rate(k: int, n: int, prior: float) -> float:
    return round(min(1.0, (k + ALPHA * prior) / (n + ALPHA)), 4)


def fit(counts: ReactionCounts, pool: Pool) -> tuple[Reactions, Patience]:
    """The persona's reactions and patience (see the module docstring)."""
    first = _smooth(counts.first, WEIGHTS, pool.first)
    later = _smooth(counts.later, WEIGHTS, pool.later)
    closing = _smooth(counts.closing, ("dismiss", "leave"), pool.closing)
    if sum(first.values()) <= 0:
        first = _norm(_DEFAULT.failure.items())
    if sum(later.values()) <= 0:
        later = _norm(_DEFAULT.failure_low.items())
    reactions = Reactions(
        failure=ReactionWeights(**first), failure_low=ReactionWeights(**later),
        exhausted=ClosingWeights(**closing) if sum(closing.values()) > 0 else ClosingWeights(),
        like=_rate(counts.thumbs_up, counts.ok_replies, pool.like),
        dislike=_rate(counts.thumbs_down, counts.failed_replies, pool.dislike),
        skim=_rate(counts.skim_fired, counts.skim_computed, pool.skim),
        provenance=f"fitted:mined reaction counts (alpha={ALPHA:g} toward the pool)",
    )
    f = counts.failed_replies
    session = max(0.5, f - 0.5) if counts.gave_up else max(f + 0.5, pool.session)
    return reactions, Patience(session=round(session, 2))
