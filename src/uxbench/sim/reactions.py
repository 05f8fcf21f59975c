"""One reaction label per assistant turn, read from the mining pipeline's signal rows: the vocabulary in which real
and simulated users are compared (`sim.validate`) and in which mined personas' reactions are fitted (`sim.build`).

The label is the rules' follow-up label (`followup_label` of `signals.parquet`, the same detectors on both sides),
mapped onto the simulator's acts: repeat, rephrase, complaint -> complain, dismiss, topic_change -> abandon_topic,
continue / other -> continue; a reply with no user message after it is `end`. Thumbs are read apart
(`thumbs_up`, `thumbs_down`). `DISSATISFIED` are the reactions that say a reply failed; a topic change alone does
not (the mining rules do not count it either: it is as often a satisfied user moving on).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Reaction = Literal["continue", "repeat", "rephrase", "complain", "dismiss", "abandon_topic", "end"]
REACTIONS: tuple[Reaction, ...] = ("continue", "repeat", "rephrase", "complain", "dismiss", "abandon_topic", "end")
DISSATISFIED: frozenset[str] = frozenset({"repeat", "rephrase", "complain", "dismiss"})
_FROM_LABEL: dict[str, Reaction] = {
    "repeat": "repeat", "rephrase": "rephrase", "complaint": "complain", "dismiss": "dismiss",
    "topic_change": "abandon_topic", "continue": "continue", "other": "continue",
}


def reaction_of(row: Mapping[str, Any]) -> Reaction:
    """The reaction label of one signal row (one assistant turn)."""
    if row.get("next_user_turn") is None:
        return "end"
    label = row.get("followup_label")
    return _FROM_LABEL.get(str(label), "continue") if label is not None else "continue"


def thumbs_of(row: Mapping[str, Any]) -> Literal["like", "dislike"] | None:
    """The explicit feedback on the turn, if any (a thumbs-down wins)."""
    if row.get("thumbs_down"):
        return "dislike"
    if row.get("thumbs_up"):
        return "like"
    return None
