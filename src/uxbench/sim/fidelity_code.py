"""The code half of the User Fidelity Score: each compiled item (`fidelity_items`) checked on one session, as far
as code can; what only a judge can decide is left `pending` for `fidelity_judge`, and a disclosure verdict of code
carries the question the judge may overturn it on (a value said in other words, a request in other words).

A request for a fact is found by the simulator's ask detector (`sim.asks.asks_for`: a request sentence of the
assistant that names the fact by its label or `ask_patterns`, in any of the wordings it knows), or by the
assessor's `asked_facts`: either one counts. The same detector drives the rules assessor, so a structured user
and its fidelity check agree on what was asked; a plainly asked question that the user does not answer is a
`fact_accuracy` violation in either mode, and the answer to it is never premature. An authored opener (the
persona's own text, sent verbatim) is checked for disclosure but not for language or length."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from uxbench.mining.signals.followup import analyse_followup
from uxbench.scoring.prompts.render import detect_lang
from uxbench.sim.asks import asks_for
from uxbench.sim.disclosure import allowed_from, check_fact, compile_value
from uxbench.sim.fidelity_items import FidelityItem, compile_items
from uxbench.sim.persona import Fact, Persona
from uxbench.sim.said import holders, without
from uxbench.sim.types import FAILURE_ACTS, SessionRecord, SimTurn

Status = Literal["satisfied", "violated", "not_applicable", "pending"]
"""pending: only a judge can decide it (unchecked without one)."""
_LETTERS_RE = re.compile("[A-Za-z\u3400-\u9fff]")
_UNPROVOKED = frozenset({"complaint", "dismiss"})
"""Follow-up labels of the mining rules that say a reply failed, clearly enough to check on any user text."""


@dataclass(frozen=True)
class ItemResult:
    item: str
    family: str
    target: str | None
    status: Status
    by: str
    """code, judge, or code+judge."""
    turn: int | None = None
    """turn_index of the evidence."""
    evidence: str = ""
    question: str = ""
    """What the judge is asked to decide or refine: pending items need it; a code verdict with a question is the
    verdict without a judge, which the judge may overturn (a paraphrase code cannot see, a request in other
    words)."""

    @property
    def checked(self) -> bool:
        return self.status in ("satisfied", "violated")


@dataclass(frozen=True)
class _Session:
    """The transcript as (role, text) pairs, with what code knows about each position."""

    record: SessionRecord
    persona: Persona
    lines: list[tuple[str, str]]
    turns: list[SimTurn]
    authored: int | None
    """Position of the authored opener, when the first user turn is it."""


def _session(record: SessionRecord, persona: Persona) -> _Session:
    turns = [t for t in record.turns if t.text or t.role == "assistant"]
    lines: list[tuple[str, str]] = [(t.role, t.text) for t in turns]
    first_user = next((i for i, t in enumerate(turns) if t.role == "user"), None)
    authored = first_user if (first_user is not None and persona.opener is not None
                              and turns[first_user].text == persona.opener) else None
    return _Session(record, persona, lines, turns, authored)


def _asks(fact: Fact, turn: SimTurn) -> bool:
    if turn.role != "assistant":
        return False
    if turn.assessment is not None and fact.id in turn.assessment.asked_facts:
        return True
    return asks_for(turn.text, fact.label, fact.ask_patterns)


def requested_at(fact: Fact, turns: list[SimTurn]) -> int | None:
    """Position of the first assistant turn asking for the fact."""
    return next((i for i, t in enumerate(turns) if _asks(fact, t)), None)


def _disclosure(s: _Session, item: FidelityItem, fact: Fact) -> ItemResult:
    asked = requested_at(fact, s.turns)
    held = holders(fact.value, [f.value for f in s.persona.facts if f.id != fact.id])
    lines = [(role, without(text, held)) for role, text in s.lines] if held else s.lines  # said inside another
    finding = check_fact(fact.id, fact.value, fact.disclose, lines, asked)
    at = s.turns[finding.first_said].turn_index if finding.first_said is not None else None
    base = ItemResult(item.id, item.family, fact.id, "satisfied", "code", at)
    if finding.verdict == "ok":
        return base
    if finding.verdict == "forbidden":
        return replace(base, status="violated", evidence=finding.evidence)
    if finding.verdict == "premature":
        said = s.turns[finding.first_said or 0]
        if fact.mode == "volunteer_if_adjacent" and said.item is not None and fact.id in \
                s.persona.goal_item(said.item).needs:
            return base  # volunteered with the goal item that needs it
        return replace(base, status="violated", evidence=finding.evidence,
                       question="asked_before")  # the judge may find a request in other words before it
    return replace(base, turn=None, question="conveyed")  # the judge may find it said in other words


def _accuracy(s: _Session, item: FidelityItem, fact: Fact) -> ItemResult:
    value = compile_value(fact.value)
    base = ItemResult(item.id, item.family, fact.id, "not_applicable", "code")
    for pos, turn in enumerate(s.turns):
        if not _asks(fact, turn) or pos + 1 >= len(s.turns) or s.turns[pos + 1].role != "user":
            continue
        allowed = allowed_from(fact.disclose, s.lines, pos)
        answer = s.turns[pos + 1]
        if allowed is None or allowed > pos + 1:
            continue
        if fact.from_turn is not None and _user_number(s, pos + 1) < fact.from_turn:
            continue  # an after_turn:K fact: the user only has it from their K-th message on
        if turn.assessment is not None and turn.assessment.handoff:
            continue  # the assistant handed the user off in the same reply: leaving is the answer
        said = any(value.find(s.lines[i][1]) is not None for i in range(pos + 2) if s.lines[i][0] == "user")
        if said:
            return replace(base, status="satisfied", turn=answer.turn_index)
        return replace(base, status="violated", turn=answer.turn_index,
                       evidence=f"asked in turn {turn.turn_index}, the answer does not state it")
    return base


def _user_number(s: _Session, pos: int) -> int:
    """The user-turn number (the opener is 1) of the user turn at `pos`."""
    return sum(1 for t in s.turns[: pos + 1] if t.role == "user")


def _language_and_length(s: _Session, item: FidelityItem) -> ItemResult:
    low, high = s.persona.profile.message_chars
    base = ItemResult(item.id, item.family, None, "not_applicable", "code")
    checked = False
    for pos, turn in enumerate(s.turns):
        if turn.role != "user" or pos == s.authored or not turn.text.strip():
            continue
        if item.family == "language":
            if len(_LETTERS_RE.findall(turn.text)) < 3:
                continue
            checked = True
            found = detect_lang([turn.text])
            if found != s.persona.lang:
                return replace(base, status="violated", turn=turn.turn_index, evidence=f"written in {found}")
        else:
            checked = True
            if not low <= len(turn.text) <= high:
                return replace(base, status="violated", turn=turn.turn_index,
                               evidence=f"{len(turn.text)} characters, outside {low}-{high}")
    return replace(base, status="satisfied") if checked else base


def _reactions(s: _Session, item: FidelityItem) -> ItemResult:
    """A failure act after a reply the assessor found fine, or a user text the mining rules read as a complaint or a
    dismissal after such a reply, without a failure act."""
    base = ItemResult(item.id, item.family, None, "satisfied", "code")
    assessed = False
    previous_user = ""
    for pos, turn in enumerate(s.turns):
        if turn.role == "user":
            previous_user = turn.text or previous_user
            continue
        if turn.assessment is None or pos + 1 >= len(s.turns) or s.turns[pos + 1].role != "user":
            continue
        assessed = True
        reply_failed = turn.assessment.failure is not None
        nxt = s.turns[pos + 1]
        if reply_failed:
            continue
        if nxt.act in FAILURE_ACTS and nxt.act != "leave":
            return replace(base, status="violated", turn=nxt.turn_index,
                           evidence=f"act {nxt.act} after a reply the assessor found fine")
        if nxt.text and (nxt.act is None or nxt.act not in FAILURE_ACTS):
            label = analyse_followup(previous_user, turn.text, nxt.text).label
            if label in _UNPROVOKED:
                return replace(base, status="violated", turn=nxt.turn_index,
                               evidence=f"the text reads as {label} after a reply the assessor found fine")
    if not assessed:
        return replace(base, status="pending", by="judge", question="unprovoked")
    return base


def _termination(s: _Session, item: FidelityItem) -> ItemResult:
    from uxbench.sim.gate import gate_flags

    base = ItemResult(item.id, item.family, None, "satisfied", "code")
    if s.record.termination.reason == "error":
        return replace(base, status="not_applicable", evidence="the session ended in an error")
    for flag in gate_flags(s.record, s.persona):
        if flag["type"] == "premature_end":
            return replace(base, status="violated", turn=flag.get("turn"), evidence=str(flag.get("evidence")))
    goal = {g.id for g in s.persona.goal}
    done: set[str] = set()
    opener = s.persona.opener or next((t.text for t in s.turns if t.role == "user"), "")
    for turn in s.turns:
        if turn.role == "assistant" and turn.assessment is not None:
            done |= set(turn.assessment.completed)
        elif turn.role == "user" and goal <= done and (turn.act == "open" or (opener and turn.text == opener)):
            return replace(base, status="violated", turn=turn.turn_index,
                           evidence="starts over after every goal item was complete")
    if s.record.mode == "free" and not any(t.assessment is not None for t in s.turns):
        return replace(base, status="pending", by="judge", question="stopped_early")
    return base


def _goal(s: _Session, item: FidelityItem) -> ItemResult:
    """Pending for the judge; not applicable when the session ended (patience, turns, error) before the item came
    up: in structured mode, no user turn was about it."""
    base = ItemResult(item.id, item.family, item.target, "pending", "judge", question="raised")
    ended_early = s.record.termination.reason in ("patience_exhausted", "max_turns", "error")
    raised_by_policy = any(t.role == "user" and t.item == item.target for t in s.turns)
    if ended_early and (s.record.mode == "free" or not raised_by_policy):
        return replace(base, status="not_applicable", question="",
                       evidence=f"the session ended ({s.record.termination.reason}) before the item came up")
    return base


def code_results(record: SessionRecord, persona: Persona) -> list[ItemResult]:
    """Every item of the persona, checked on the session as far as code can."""
    s = _session(record, persona)
    out: list[ItemResult] = []
    for item in compile_items(persona):
        fact = persona.fact(item.target) if item.target and item.family in (
            "premature_disclosure", "never_disclose", "fact_accuracy") else None
        if fact is not None and item.family in ("premature_disclosure", "never_disclose"):
            out.append(_disclosure(s, item, fact))
        elif fact is not None:
            out.append(_accuracy(s, item, fact))
        elif item.family in ("language", "length"):
            out.append(_language_and_length(s, item))
        elif item.family == "reaction_consistency":
            out.append(_reactions(s, item))
        elif item.family == "termination":
            out.append(_termination(s, item))
        elif item.family == "goal_pursuit":
            out.append(_goal(s, item))
        else:  # hallucination
            out.append(ItemResult(item.id, item.family, None, "pending", "judge", question="hallucination"))
    return out
