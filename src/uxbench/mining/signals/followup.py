"""What the user's next message says about the reply before it: the text-based signals of one follow-up.

Each detector runs on its own and keeps its evidence; the guards between them are explicit:
- a continuation (cue, same instruction with a new text, a changed chapter number, an extended request)
  is never a repeat or a rephrase;
- a message that points back at the reply ("what about", "那…") is not a rephrase by similarity alone;
- a topic change needs low similarity, little lexical overlap with the question and the reply, and no cue;
- templated continuations are never repeats or rephrases: the same request with its subject swapped ("expand
  on A" -> "expand on B"), the next quiz item, a relayed game or role-play move, the user fixing a typo in
  their own request, a repeated "continue".
Each hit carries a score in [0, 1]: how sure the detector is (see `complaint`, `error_report`). A signal
fires at `SignalConfig.fire_score`; weaker evidence keeps its score and evidence without firing, and still
counts towards `dissatisfied_score`. Similarity alone, without a cue, scores a rephrase `SCORE_REPHRASE_SIM`
(below the firing level): on real follow-ups it mostly finds templated continuations.
`label` folds the signals into one of the follow-up labels shared with the LLM check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from uxbench.mining.signals.complaint import score_complaint
from uxbench.mining.signals.config import DEFAULT_CONFIG, SignalConfig
from uxbench.mining.signals.cues import (
    anaphora_cue,
    continuation_cue,
    extends,
    quiz_next,
    relay_cue,
    rephrase_cue,
    same_instruction_new_payload,
    slot_change,
    template_fill,
    typo_fix,
)
from uxbench.mining.signals.dismiss import score_dismiss
from uxbench.mining.signals.error_report import find_error_report
from uxbench.mining.signals.feedback import find_praise
from uxbench.mining.signals.similarity import (
    TextIndex,
    Units,
    found_in,
    normalised_longer_than,
    similarity,
    unit_groups,
)

FollowupLabel = Literal["repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue", "other"]
FOLLOWUP_LABELS: tuple[FollowupLabel, ...] = (
    "repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue", "other",
)


@dataclass(frozen=True)
class Hit:
    """One signal: fired (None = could not be computed) and the evidence behind it."""

    fired: bool | None
    evidence: str | None = None
    score: float | None = 0.0
    """How sure the detector is, in [0, 1] (None when not computed); kept when it did not fire."""


_NONE = Hit(False)
NO_HIT = _NONE
"""The hit of a signal that found nothing (most of them): one shared object."""
SCORE_REPHRASE_CUE = 0.75
SCORE_REPHRASE_SIM, SCORE_REPHRASE_SIM_MAX = 0.3, 0.7
SCORE_REPEAT_MIN, SCORE_REPEAT_MAX = 0.6, 0.9
SCORE_POSITIVE = 0.9
"""Praise, continuation: explicit cues."""
SCORE_BUILDS_ON = 0.7
SCORE_TOPIC = 0.5
_QUESTION = re.compile(
    r"[?？]|[吗呢么]\s*$|^\s*(?:what|how|why|and|can|does|is|should)\b|什么|怎么|为什么|哪", re.I
)


@dataclass(frozen=True)
class Followup:
    complaint: Hit
    dismiss: Hit
    repeat: Hit
    rephrase: Hit
    continuation: Hit
    topic_change: Hit
    praise: Hit
    builds_on: Hit
    similarity: float | None
    label: FollowupLabel


_UNITS_CHARS = 1000
"""The lexical lookups read the opening of the next message: enough to see what it picks up, and a pasted
text of many thousand characters would otherwise cost more than all the rest of the follow-up."""


def _from_reply(in_reply: Units) -> list[str]:
    """Of the units found in the reply (and not in the question), those that say something."""
    return sorted(u for u in in_reply.all() if len(u) > 1 or not u.isascii())


def _strongest(*found: tuple[float, str] | None) -> tuple[float, str] | None:
    best = None
    for f in found:
        if f is not None and (best is None or f[0] > best[0]):
            best = f
    return best


def _rephrase_sim_score(sim: float, config: SignalConfig) -> float:
    """`SCORE_REPHRASE_SIM` at the rephrase threshold, rising linearly to `SCORE_REPHRASE_SIM_MAX` at the repeat
    threshold."""
    span = max(1e-9, config.repeat_threshold - config.rephrase_threshold)
    share = min(1.0, max(0.0, (sim - config.rephrase_threshold) / span))
    return SCORE_REPHRASE_SIM + (SCORE_REPHRASE_SIM_MAX - SCORE_REPHRASE_SIM) * share


def _hit(score: float, evidence: str | None, config: SignalConfig) -> Hit:
    return Hit(score >= config.fire_score, evidence, round(score, 3)) if score > 0 else _NONE


def _template_cue(prev: str, nxt: str, min_added: int) -> str | None:
    """Why `nxt` goes on from `prev` rather than asking it again, or None."""
    if continuation_cue(prev) is not None and similarity(prev, nxt) >= 0.8:
        return "repeats the earlier request to go on"
    return (same_instruction_new_payload(prev, nxt) or slot_change(prev, nxt) or quiz_next(prev, nxt)
            or typo_fix(prev, nxt) or template_fill(prev, nxt) or extends(prev, nxt, min_added))


def analyse_followup(
    prev_user: str | None, assistant: str, next_user: str, config: SignalConfig = DEFAULT_CONFIG
) -> Followup:
    """Signals carried by `next_user`, the user's message right after `assistant`."""
    prev = prev_user or ""
    sim = similarity(prev, next_user, config.similarity_method) if prev_user is not None else None
    complaint = _strongest(score_complaint(next_user, config.complaint_max_chars),
                           find_error_report(next_user, assistant))
    complaint_fired = complaint is not None and complaint[0] >= config.fire_score
    dismissed = None if complaint_fired else score_dismiss(next_user, config.dismiss_max_chars)
    dismiss = dismissed[1] if dismissed else None
    praise = None if complaint_fired or dismiss else find_praise(next_user, config.praise_max_chars)
    cont = continuation_cue(next_user) or relay_cue(next_user)
    if cont is None and sim is not None and not complaint_fired and sim >= config.rephrase_threshold:
        # the template cues guard repeats and rephrases: below the rephrase threshold there is nothing to guard
        cont = _template_cue(prev, next_user, config.extension_min_tokens)
    ana = anaphora_cue(next_user)
    reph = rephrase_cue(next_user)
    long_enough = normalised_longer_than(next_user, config.min_followup_chars)

    if sim is None:
        repeat = Hit(None, "no previous user message", None)
        rephrase = Hit(None, "no previous user message", None)
    else:
        is_repeat = long_enough and sim >= config.repeat_threshold and cont is None
        span = max(1e-9, 1.0 - config.repeat_threshold)
        repeat_score = SCORE_REPEAT_MIN + (SCORE_REPEAT_MAX - SCORE_REPEAT_MIN) * (sim - config.repeat_threshold) / span
        repeat = _hit(repeat_score, f"similarity {sim:.2f}", config) if is_repeat else _NONE
        by_sim = sim >= config.rephrase_threshold and ana is None
        is_rephrase = not is_repeat and long_enough and cont is None and (reph is not None or by_sim)
        rephrase = _NONE
        if is_rephrase:
            rephrase = (_hit(SCORE_REPHRASE_CUE, f"cue '{reph}'", config) if reph
                        else _hit(_rephrase_sim_score(sim, config), f"similarity {sim:.2f}", config))

    engaged = not (complaint_fired or dismiss or repeat.fired or rephrase.fired)
    builds_on = _NONE
    # "thanks, that fixed it" is praise: its "it" points back, but it asks nothing more
    asks = not praise or _QUESTION.search(next_user) is not None
    # the next message's content units: all of them, those in the question, those new in the reply
    lexical: tuple[Units, Units, Units] | None = None
    if engaged and ana and asks:
        builds_on = Hit(True, f"refers back: '{ana}'", SCORE_BUILDS_ON)
    elif engaged and not praise:  # the lexical lookups, only where a signal reads them
        units = unit_groups(next_user[:_UNITS_CHARS])
        in_prev = found_in(units, TextIndex(prev, tokenised=True))  # tokenised for the similarity
        in_reply = found_in(units - in_prev, TextIndex(assistant))
        lexical = units, in_prev, in_reply
        from_reply = _from_reply(in_reply)
        if from_reply:
            builds_on = Hit(True, "picks up from the reply: " + ", ".join(from_reply[:5]), SCORE_BUILDS_ON)

    topic = _NONE
    if (
        prev_user is not None and sim is not None and engaged and not praise and cont is None
        and not builds_on.fired and len(prev.strip()) >= config.topic_min_chars
        and len(next_user.strip()) >= config.topic_min_chars and sim < config.topic_change_threshold
    ):
        assert lexical is not None  # engaged, no praise, builds_on not fired
        units, in_prev, in_reply = lexical
        shared = (in_prev.count + in_reply.count) / units.count if units.count else 0.0
        if shared <= config.topic_change_max_overlap:
            topic = Hit(True, f"similarity {sim:.2f}, overlap {shared:.2f}", SCORE_TOPIC)

    complaint_hit = _hit(complaint[0], complaint[1], config) if complaint else _NONE
    dismiss_hit = Hit(True, dismissed[1], dismissed[0]) if dismissed else _NONE
    continuation = Hit(True, cont, SCORE_POSITIVE) if cont else _NONE
    return Followup(
        complaint=complaint_hit,
        dismiss=dismiss_hit,
        repeat=repeat,
        rephrase=rephrase,
        continuation=continuation,
        topic_change=topic,
        praise=Hit(True, praise, SCORE_POSITIVE) if praise else _NONE,
        builds_on=builds_on,
        similarity=sim,
        # the label from the hits before the one `Followup` is made (making a second one cost 2% of the stage)
        label=_label(complaint_hit, dismiss_hit, repeat, rephrase, continuation, builds_on, topic),
    )


def _label(complaint: Hit, dismiss: Hit, repeat: Hit, rephrase: Hit, continuation: Hit, builds_on: Hit,
           topic_change: Hit) -> FollowupLabel:
    if complaint.fired:
        return "complaint"
    if dismiss.fired:
        return "dismiss"
    if repeat.fired:
        return "repeat"
    if rephrase.fired:
        return "rephrase"
    if continuation.fired or builds_on.fired:
        return "continue"
    if topic_change.fired:
        return "topic_change"
    return "other"


def rule_label(prev_user: str | None, assistant: str, next_user: str,
               config: SignalConfig = DEFAULT_CONFIG) -> FollowupLabel:
    """The rules' follow-up label, in the label set of the LLM check (praise and thanks are `other`)."""
    return analyse_followup(prev_user, assistant, next_user, config).label
