"""What the user's next message says about the reply before it: the text-based signals of one follow-up.

Each detector runs on its own and keeps its evidence; the guards between them are explicit:
- a continuation (cue, same instruction with a new text, a changed chapter number, an extended request)
  is never a repeat or a rephrase;
- a message that points back at the reply ("what about", "那…") is not a rephrase by similarity alone;
- a topic change needs low similarity, little lexical overlap with the question and the reply, and no cue.
`label` folds the signals into one of the follow-up labels shared with the LLM check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from uxbench.mining.signals.complaint import find_complaint
from uxbench.mining.signals.config import DEFAULT_CONFIG, SignalConfig
from uxbench.mining.signals.cues import (
    anaphora_cue,
    continuation_cue,
    extends,
    rephrase_cue,
    same_instruction_new_payload,
    slot_change,
)
from uxbench.mining.signals.dismiss import find_dismiss
from uxbench.mining.signals.feedback import find_praise
from uxbench.mining.signals.similarity import content_units, normalise, overlap, similarity, units_in

FollowupLabel = Literal["repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue", "other"]
FOLLOWUP_LABELS: tuple[FollowupLabel, ...] = (
    "repeat", "rephrase", "complaint", "dismiss", "topic_change", "continue", "other",
)


@dataclass(frozen=True)
class Hit:
    """One signal: fired (None = could not be computed) and the evidence behind it."""

    fired: bool | None
    evidence: str | None = None


_NONE = Hit(False)
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


def _new_from_reply(nxt: str, prev: str, reply: str) -> list[str]:
    """Content units of `nxt` that come from the reply and were not in the question."""
    fresh = content_units(nxt) - content_units(prev)
    return sorted(u for u in units_in(fresh, reply) if len(u) > 1 or not u.isascii())


def analyse_followup(
    prev_user: str | None, assistant: str, next_user: str, config: SignalConfig = DEFAULT_CONFIG
) -> Followup:
    """Signals carried by `next_user`, the user's message right after `assistant`."""
    prev = prev_user or ""
    sim = similarity(prev, next_user, config.similarity_method) if prev_user is not None else None
    complaint = find_complaint(next_user, config.complaint_max_chars)
    dismiss = find_dismiss(next_user, config.dismiss_max_chars)
    praise = None if complaint or dismiss else find_praise(next_user, config.praise_max_chars)
    cont = continuation_cue(next_user)
    if cont is None and prev_user is not None:
        cont = (same_instruction_new_payload(prev, next_user) or slot_change(prev, next_user)
                or extends(prev, next_user, config.extension_min_tokens))
    ana = anaphora_cue(next_user)
    reph = rephrase_cue(next_user)
    long_enough = len(normalise(next_user)) > config.min_followup_chars

    if sim is None:
        repeat, rephrase = Hit(None, "no previous user message"), Hit(None, "no previous user message")
    else:
        is_repeat = long_enough and sim >= config.repeat_threshold and cont is None
        repeat = Hit(True, f"similarity {sim:.2f}") if is_repeat else _NONE
        by_sim = sim >= config.rephrase_threshold and ana is None
        is_rephrase = not is_repeat and long_enough and cont is None and (reph is not None or by_sim)
        rephrase = Hit(True, f"cue '{reph}'" if reph else f"similarity {sim:.2f}") if is_rephrase else _NONE

    engaged = not (complaint or dismiss or repeat.fired or rephrase.fired)
    from_reply = _new_from_reply(next_user, prev, assistant) if engaged and not praise else []
    builds_on = _NONE
    # "thanks, that fixed it" is praise: its "it" points back, but it asks nothing more
    asks = not praise or _QUESTION.search(next_user) is not None
    if engaged and ana and asks:
        builds_on = Hit(True, f"refers back: '{ana}'")
    elif from_reply:
        builds_on = Hit(True, "picks up from the reply: " + ", ".join(from_reply[:5]))

    topic = _NONE
    if (
        prev_user is not None and sim is not None and engaged and not praise and cont is None
        and not builds_on.fired and len(prev.strip()) >= config.topic_min_chars
        and len(next_user.strip()) >= config.topic_min_chars and sim < config.topic_change_threshold
    ):
        shared = overlap(next_user, prev + "\n" + assistant)
        if shared <= config.topic_change_max_overlap:
            topic = Hit(True, f"similarity {sim:.2f}, overlap {shared:.2f}")

    out = Followup(
        complaint=Hit(True, complaint) if complaint else _NONE,
        dismiss=Hit(True, dismiss) if dismiss else _NONE,
        repeat=repeat,
        rephrase=rephrase,
        continuation=Hit(True, cont) if cont else _NONE,
        topic_change=topic,
        praise=Hit(True, praise) if praise else _NONE,
        builds_on=builds_on,
        similarity=sim,
        label="other",
    )
    return _with_label(out)


def _with_label(f: Followup) -> Followup:
    label: FollowupLabel = "other"
    if f.complaint.fired:
        label = "complaint"
    elif f.dismiss.fired:
        label = "dismiss"
    elif f.repeat.fired:
        label = "repeat"
    elif f.rephrase.fired:
        label = "rephrase"
    elif f.continuation.fired or f.builds_on.fired:
        label = "continue"
    elif f.topic_change.fired:
        label = "topic_change"
    return Followup(**{**f.__dict__, "label": label})


def rule_label(prev_user: str | None, assistant: str, next_user: str,
               config: SignalConfig = DEFAULT_CONFIG) -> FollowupLabel:
    """The rules' follow-up label, in the label set of the LLM check (praise and thanks are `other`)."""
    return analyse_followup(prev_user, assistant, next_user, config).label
