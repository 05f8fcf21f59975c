"""The signal stage: every signal on every assistant turn of a session, with its evidence.

`compute_signals` is a pure function of (session, config); `signals_batch` maps it over a batch of sessions
and `signals_table` flattens the result to rows (Parquet/CSV ready), so the same code runs in-process and
in Ray Data `map_batches`.

`dissatisfied_score` (configurable in SignalConfig): the scores of the strong signals (thumbs_down,
regenerate, complaint, dismiss, repeat, rephrase; a text signal's score counts even below its firing
level) and the weak signals' share (skim, topic_change, conversation_end: `weak_score_full` when
`weak_needed` (2) of them fire, a share of it for fewer) combined as independent evidence,
1 - prod(1 - s). `dissatisfied` is that score at or above `dissatisfied_threshold`. Skim alone, a topic
change alone and a conversation ending alone are not enough: each is as often a satisfied user moving on.
`satisfied`: a positive signal (thumbs_up, praise, builds_on, copied) on a turn that is not dissatisfied.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from uxbench.mining.signals.config import DEFAULT_CONFIG, SignalConfig
from uxbench.mining.signals.feedback import engagement, regenerations, thumbs
from uxbench.mining.signals.followup import NO_HIT, Hit, analyse_followup
from uxbench.mining.signals.recovery import attach_recovery
from uxbench.mining.signals.results import SignalValue, TurnSignals, adopt
from uxbench.mining.signals.timing import SkimResult, detect_skim
from uxbench.mining.types import Session, Turn

_NO_FOLLOWUP = SignalValue(fired=None, evidence="no follow-up message", score=None)


@lru_cache(maxsize=8192)
def _sv(fired: bool | None, evidence: str | None, score: float | None = 0.0) -> SignalValue:
    """Shared frozen values: most are (False, None), and building ~15 models per turn was a third of
    the stage's time."""
    return SignalValue(fired=fired, evidence=evidence, score=score)


def _value(hit: Hit) -> SignalValue:
    return _NO_HIT_VALUE if hit is NO_HIT else _sv(hit.fired, hit.evidence, hit.score)


def _flag(fired: bool, evidence: str | None, score: float = 1.0) -> SignalValue:
    return _sv(fired, evidence if fired else None, score if fired else 0.0)


def _replaced_per_turn(session: Session) -> dict[int, int]:
    """Replaced replies per final assistant turn (by list position). A regenerated reply belongs to the
    first kept assistant turn at or after its turn_index: the same index when the product logs the
    regeneration on the same turn, the next one when it got a turn of its own."""
    positions = [p for p, t in enumerate(session.turns) if t.role == "assistant"]
    indices = [session.turns[p].turn_index for p in positions]
    out: dict[int, int] = {}
    for old in session.regenerated:
        k = bisect_left(indices, old.turn_index)
        if k < len(positions):
            out[positions[k]] = out.get(positions[k], 0) + 1
    return out


def _explicit(turn: Turn, replaced: int, config: SignalConfig) -> dict[str, SignalValue]:
    if not replaced and not turn.counters and turn.feedback is None and not turn.regeneration_index:
        # no feedback, counter or regeneration, as on most logs: nothing fires (what the lines below give)
        return dict(_NO_EXPLICIT)
    down, up = thumbs(turn)
    regen = regenerations(turn, replaced)
    copied = engagement(turn)
    return {
        "thumbs_down": _flag(down, "thumbs-down", config.thumbs_down_score),
        "thumbs_up": _flag(up, "thumbs-up"),
        "regenerate": _flag(regen is not None, regen, config.regenerate_score),
        "copied": _flag(copied is not None, copied),
    }


_NO_EXPLICIT = {name: _flag(False, None) for name in ("thumbs_down", "thumbs_up", "regenerate", "copied")}
_NO_TIMES = SkimResult(None, "not computed: no timestamps")
"""`detect_skim` without timestamps (most logs): made once."""
_NO_TIMES_VALUE = _sv(None, _NO_TIMES.evidence, None)
_NO_HIT_VALUE = _sv(NO_HIT.fired, NO_HIT.evidence, NO_HIT.score)
_END, _NOT_END = _flag(True, "no message after this reply"), _flag(False, None)


def _skim(reply: Turn, nxt: Turn | None, config: SignalConfig) -> SkimResult:
    if nxt is None:
        return SkimResult(None, "no follow-up message")
    if reply.created_at is None or nxt.created_at is None:
        return _NO_TIMES
    return detect_skim(
        reply.content, reply.created_at, nxt.created_at,
        seconds_per_unit=config.skim_seconds_per_unit, max_gap_s=config.skim_max_gap_s,
        min_reply_chars=config.skim_min_reply_chars,
    )


def dissatisfied_score(values: dict[str, SignalValue], config: SignalConfig) -> float:
    """The strong signals' scores and the weak signals' share, combined as independent evidence."""
    keep = 1.0
    for name in config.strong_signals:
        keep *= 1.0 - (values[name].score or 0.0)
    weak = sum(bool(values[n].fired) for n in config.weak_signals)
    keep *= 1.0 - config.weak_score_full * min(1.0, weak / config.weak_needed)
    return round(1.0 - keep, 4)


def _verdicts(values: dict[str, Any], config: SignalConfig) -> None:
    """`dissatisfied_score` and the lists in one pass over the signals (the same figures, ~2x faster), added to
    `values` in the model's field order. A factor of exactly 1.0 (a score of 0, no weak signal) leaves the
    product as it is, so it is skipped."""
    keep = 1.0
    by: list[str] = []
    for name in config.strong_signals:
        strong = values[name].score
        if strong:
            keep *= 1.0 - strong
            if strong > 0:
                by.append(name)
    weak = 0
    for name in config.weak_signals:
        if values[name].fired:
            weak += 1
            by.append(name)
    if weak:
        keep *= 1.0 - config.weak_score_full * min(1.0, weak / config.weak_needed)
    score = round(1.0 - keep, 4)
    dissatisfied = score >= config.dissatisfied_threshold
    positive = [n for n in config.positive_signals if values[n].fired] if not dissatisfied else []
    values["dissatisfied_score"] = score
    values["dissatisfied"] = dissatisfied
    values["dissatisfied_by"] = by if dissatisfied else []
    values["satisfied"] = bool(positive)
    values["satisfied_by"] = positive


def compute_signals(session: Session, config: SignalConfig = DEFAULT_CONFIG) -> list[TurnSignals]:
    """One `TurnSignals` per assistant turn of `session`, in order, recovery chains attached."""
    turns = session.turns
    replaced = _replaced_per_turn(session) if session.regenerated else {}
    out: list[TurnSignals] = []
    prev_user: Turn | None = None
    last = len(turns) - 1
    for pos, turn in enumerate(turns):
        if turn.role == "user":
            prev_user = turn
            continue
        nxt = turns[pos + 1] if pos < last and turns[pos + 1].role == "user" else None
        explicit = _explicit(turn, replaced.get(pos, 0), config)
        skim = _skim(turn, nxt, config)
        # the fields in the model's order, each of its type: `adopt` takes them as the instance's dict (validating
        # them again, or building them in a second dict, was a tenth of the stage)
        values: dict[str, Any] = {
            "conversation_id": session.conversation_id,
            "turn_index": turn.turn_index,
            "prev_user_turn": prev_user.turn_index if prev_user else None,
            "next_user_turn": nxt.turn_index if nxt else None,
            "thumbs_down": explicit["thumbs_down"],
            "thumbs_up": explicit["thumbs_up"],
            "regenerate": explicit["regenerate"],
            "skim": _NO_TIMES_VALUE if skim is _NO_TIMES else _sv(
                skim.fired, skim.evidence, None if skim.fired is None else float(bool(skim.fired))),
        }
        if nxt is None:
            follow = None
            values["complaint"] = values["dismiss"] = values["repeat"] = values["rephrase"] = _NO_FOLLOWUP
            values["continuation"] = values["topic_change"] = _NO_FOLLOWUP
            values["conversation_end"] = _END if pos == last else _NOT_END
            values["praise"] = values["builds_on"] = _NO_FOLLOWUP
        else:
            follow = analyse_followup(prev_user.content if prev_user else None, turn.content, nxt.content, config)
            values["complaint"] = _value(follow.complaint)
            values["dismiss"] = _value(follow.dismiss)
            values["repeat"] = _value(follow.repeat)
            values["rephrase"] = _value(follow.rephrase)
            values["continuation"] = _value(follow.continuation)
            values["topic_change"] = _value(follow.topic_change)
            values["conversation_end"] = _NOT_END  # a user message follows
            values["praise"] = _value(follow.praise)
            values["builds_on"] = _value(follow.builds_on)
        values["copied"] = explicit["copied"]
        values["similarity"] = follow.similarity if follow else None
        values["gap_s"] = skim.gap_s
        values["seconds_per_unit"] = skim.seconds_per_unit
        values["followup_label"] = follow.label if follow else None
        _verdicts(values, config)
        out.append(adopt(values))
    attach_recovery(out, config.recovery_max_turns)
    return out


def signals_batch(sessions: Iterable[Session], config: SignalConfig = DEFAULT_CONFIG) -> list[TurnSignals]:
    """`compute_signals` over a batch of sessions, concatenated."""
    return [ts for session in sessions for ts in compute_signals(session, config)]


def signals_table(sessions: Iterable[Session], config: SignalConfig = DEFAULT_CONFIG) -> list[dict[str, Any]]:
    """Flat rows, one per assistant turn: ids, each signal and its evidence, numbers, verdicts, recovery."""
    return [ts.row() for ts in signals_batch(sessions, config)]
