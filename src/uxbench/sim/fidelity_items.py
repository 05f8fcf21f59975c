"""The User Fidelity Score's items, compiled from a persona by code: the same persona always yields the same
rubric, and editing the persona changes it (its hash is the persona's).

- `premature_disclosure`, one per hidden fact (on_request, after_turn:K, volunteer_if_adjacent): the value first
  appears only once allowed. Code (`sim.disclosure`), then the judge for paraphrases.
- `never_disclose`, one per never fact: the value never appears. Code, then the judge.
- `fact_accuracy`, one per fact that may be said: asked for it while it may be said, the user's next turn states
  the persona's value. Code.
- `hallucination`, one per session: no user turn states a personal detail the persona does not hold. Judge.
- `goal_pursuit`, one per goal item: the user raises the item (not applicable when patience, the turn limit or an
  error ended the session before it came up). Judge.
- `termination`, one per session: no stop while an item is pending and patience is left, no restart after
  completion. Code (acts and the assessor), the judge in free mode.
- `reaction_consistency`, one per session: every repeat, rephrase, complaint or dismissal follows a reply the
  assessor marked failed. Code (structured), the judge (free).
- `language`, one per session: every user turn is in the persona's language. Code.
- `length`, one per session: every user turn is within the persona's message length range. Code.

An authored opener is the persona's own text, sent verbatim: it is checked for disclosure (the schema already
refuses a hidden fact in it) but not for language or length, which measure the realiser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from uxbench.sim.persona import Persona

Family = Literal["premature_disclosure", "never_disclose", "fact_accuracy", "hallucination", "goal_pursuit",
                 "termination", "reaction_consistency", "language", "length"]
FAMILIES: tuple[Family, ...] = ("premature_disclosure", "never_disclose", "fact_accuracy", "hallucination",
                                "goal_pursuit", "termination", "reaction_consistency", "language", "length")
Checker = Literal["code", "judge", "code+judge"]
DISCLOSURE_FAMILIES: frozenset[Family] = frozenset({"premature_disclosure", "never_disclose"})
"""The families the premature-disclosure rate counts."""


@dataclass(frozen=True)
class FidelityItem:
    """One item of a persona's fidelity rubric."""

    id: str
    """Stable within the persona: `<family>` or `<family>:<fact or goal item id>`."""
    family: Family
    target: str | None
    """The fact or goal item the item is about; None for session-wide items."""
    checked_by: Checker
    text: str
    """What the item asks, in English (shown in reports and to the judge)."""


def compile_items(persona: Persona) -> tuple[FidelityItem, ...]:
    """The persona's fidelity items, in a fixed order (families as in `FAMILIES`, then persona order)."""
    items: list[FidelityItem] = []
    for fact in persona.facts:
        if fact.mode in ("on_request", "after_turn", "volunteer_if_adjacent"):
            when = {"on_request": "only after the assistant asks for it",
                    "after_turn": f"only from user turn {fact.from_turn} on, or after the assistant asks for it",
                    "volunteer_if_adjacent": "only with the goal item that needs it, or after the assistant asks"
                    }[fact.mode]
            items.append(FidelityItem(f"premature_disclosure:{fact.id}", "premature_disclosure", fact.id,
                                      "code+judge", f"The {fact.label} is stated {when}."))
    for fact in persona.facts:
        if fact.mode == "never":
            items.append(FidelityItem(f"never_disclose:{fact.id}", "never_disclose", fact.id, "code+judge",
                                      f"The {fact.label} is never stated, even when asked."))
    for fact in persona.facts:
        if fact.mode != "never":
            items.append(FidelityItem(f"fact_accuracy:{fact.id}", "fact_accuracy", fact.id, "code",
                                      f"When asked for the {fact.label} while it may be said, the user gives the "
                                      "persona's value."))
    items.append(FidelityItem("hallucination", "hallucination", None, "judge",
                              "No user turn states a personal detail (a number, a name, a date, a past event) that "
                              "the persona does not hold."))
    for goal in persona.goal:
        items.append(FidelityItem(f"goal_pursuit:{goal.id}", "goal_pursuit", goal.id, "judge",
                                  f"The user raises this goal: {goal.request}"))
    items.append(FidelityItem("termination", "termination", None, "code+judge",
                              "The user does not stop while a goal item is pending and patience is left, and does "
                              "not start over after the goal is complete."))
    items.append(FidelityItem("reaction_consistency", "reaction_consistency", None, "code+judge",
                              "Every repeat, rephrasing, complaint or dismissal follows a reply that failed."))
    items.append(FidelityItem("language", "language", None, "code",
                              f"Every user turn is in {'Chinese' if persona.lang == 'zh' else 'English'}."))
    low, high = persona.profile.message_chars
    items.append(FidelityItem("length", "length", None, "code",
                              f"Every user turn is {low}-{high} characters long."))
    return tuple(items)
