"""The corruption gate: code checks that flag a session the simulator spoiled, run on every session.

Types (`GATE_TYPES`):
- `premature_end`: the user ended the session (a thank-you, or a free-mode ###STOP###) while a goal item was
  neither complete nor abandoned;
- `looping`: the same user text (normalised: width, case, punctuation) twice, outside a `repeat` act;
- `off_goal`: a user request that shares no content word with any goal item, fact label or value;
- `item_never_raised`: a goal item that no user message mentions, neither completed nor abandoned, in a session
  the user ended on their own terms (not patience, turns, an error or a hand-off);
- `role_flip`: a user message that talks as the assistant ("how can I help you?", "I'm sorry for any
  inconvenience. I'm here to assist you"), writes the assistant's lines of a transcript ("...\nAssistant: ...")
  or asks the assistant for the user's own facts ("what is your order number?");
- `leaked_state`: reasoning text, the simulator's state (acts, patience, persona fields, markers) or its prompt
  ("... Write the user's next message now.", `markers.prompt_echo`) in a user message.

A flagged session stays in the run; headline metrics are reported with and without flagged sessions.
"""

from __future__ import annotations

from typing import Any

from uxbench.sim import markers
from uxbench.sim.persona import Persona
from uxbench.sim.types import SessionRecord

GATE_TYPES = ("premature_end", "looping", "off_goal", "item_never_raised", "role_flip", "leaked_state")
_REQUEST_ACTS = ("open", "follow_up", "rephrase", "abandon_topic", "free")
_MIN_OFF_GOAL_CHARS = 12


def _mentions(text: str, words: set[str]) -> bool:
    return bool(markers.content_tokens(text) & words)


def _item_words(persona: Persona, item_id: str) -> set[str]:
    item = persona.goal_item(item_id)
    words: set[str] = set()
    for text in (item.request, *item.rephrasings):
        words |= markers.content_tokens(text)
    return words


RAISED_SHARE = 0.5
"""A user message raises a goal item when it holds at least this share of the content words of the item's request
(or of one of its rephrasings)."""


def raises(text: str, persona: Persona, item_id: str) -> bool:
    said = markers.content_tokens(text)
    item = persona.goal_item(item_id)
    for wording in (item.request, *item.rephrasings):
        words = markers.content_tokens(wording)
        if words and len(words & said) / len(words) >= RAISED_SHARE:
            return True
    return False


def _goal_words(persona: Persona) -> set[str]:
    words: set[str] = set()
    for item in persona.goal:
        words |= _item_words(persona, item.id)
    for fact in persona.facts:
        words |= markers.content_tokens(fact.label) | markers.content_tokens(fact.value)
    return words


def gate_flags(record: SessionRecord, persona: Persona) -> list[dict[str, Any]]:
    """Every corruption found in one session: {type, turn, evidence}."""
    flags: list[dict[str, Any]] = []
    users = record.user_turns
    reason, detail = record.termination.reason, record.termination.detail
    resolved = set(record.completed) | set(record.abandoned)
    pending = [g.id for g in persona.goal if g.id not in resolved]
    user_ended = (users and users[-1].act == "stop_success") or detail.startswith(("premature stop", "###STOP###"))
    if pending and user_ended:
        flags.append({"type": "premature_end", "turn": users[-1].turn_index if users else None,
                      "evidence": f"ended with {', '.join(pending)} pending"})
    seen: dict[str, int] = {}
    goal_words = _goal_words(persona)
    labels = [f.label for f in persona.facts]
    for turn in users:
        norm = markers.normalize(turn.text)
        if norm and norm in seen and turn.act != "repeat":
            flags.append({"type": "looping", "turn": turn.turn_index,
                          "evidence": f"same text as turn {seen[norm]}"})
        seen.setdefault(norm, turn.turn_index)
        if turn.act in _REQUEST_ACTS and len(norm) >= _MIN_OFF_GOAL_CHARS and not _mentions(turn.text, goal_words):
            flags.append({"type": "off_goal", "turn": turn.turn_index, "evidence": turn.text[:80]})
        own = markers.asks_own_fact(turn.text, labels)
        line = markers.ASSISTANT_LINE_RE.search(turn.text)
        if markers.ROLE_FLIP_RE.search(turn.text) or own or line:
            evidence = f"asks for its own {own}" if own else \
                f"writes the assistant's line ({line.group(0).strip()} ...)" if line else turn.text[:80]
            flags.append({"type": "role_flip", "turn": turn.turn_index, "evidence": evidence})
        leak = markers.REASONING_RE.search(turn.text) or markers.POLICY_RE.search(turn.text) or \
            markers.MARKER_RE.search(turn.text)
        echo = markers.prompt_echo(turn.text)
        if leak or echo:
            flags.append({"type": "leaked_state", "turn": turn.turn_index,
                          "evidence": leak.group(0) if leak else f"repeats the simulator's prompt ({echo})"})
    ended_freely = reason in ("goal_complete",) or user_ended
    if ended_freely:
        for item in persona.goal:
            if item.id in resolved:
                continue
            if not any(raises(t.text, persona, item.id) for t in users):
                flags.append({"type": "item_never_raised", "turn": None, "evidence": item.id})
    return flags
