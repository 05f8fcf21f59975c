"""One projection function, `project`, builds every party's view of a session; nothing else does.

- `assistant` (the model under test): the conversation's texts as chat messages, nothing more: no persona text,
  no acts, no simulator reasoning, no fact a user has not said.
- `realiser` (structured mode): the public profile, this turn's act, the request of the goal item it is about,
  and the values of only the facts it may mention this turn (`Decision.allowed_facts`): a fact not yet
  disclosable is never in its prompt, so it cannot leak.
- `free` (free mode, as the tau-bench family does, for comparison): the whole persona, facts included, with the
  disclosure rules in words.
- `assessor`: goal items and their checks, fact labels (values only once said), the last user message, the reply.
- `judge` (independent satisfaction estimate): the conversation up to a reply and the user's next message.

Roles are never flipped: the realiser and the judge read the conversation as a labelled transcript, so the
user's own first message cannot drop out of its context (Toloka/tolokaforge#611, PR #905).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

from uxbench.data.schema import Message
from uxbench.sim.persona import GoalCheck, Persona, Profile
from uxbench.sim.types import Act, Decision, SimTurn

Party = Literal["assistant", "realiser", "free", "assessor", "judge"]


@dataclass(frozen=True)
class Line:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class FactView:
    id: str
    label: str
    value: str | None
    """None where the party may not see it."""
    disclose: str = ""
    """Only in the free view (the rule in words is part of its prompt)."""
    patterns: tuple[str, ...] = ()
    """How the assistant asks for it (`Fact.ask_patterns`; in the assessor's view, else the label): read by code
    (`sim.asks`), never put in a prompt."""


@dataclass(frozen=True)
class RealiserView:
    lang: str
    profile: Profile
    act: Act
    request: str | None
    """The request of the goal item the turn is about."""
    rephrasings: tuple[str, ...]
    previous_request: str | None
    """The user's last message raising this item (the repeat act repeats it)."""
    state_facts: tuple[FactView, ...]
    allowed_facts: tuple[FactView, ...]
    declined: tuple[str, ...]
    """Labels of the facts the user declines to give."""
    unknown_asked: bool
    transcript: tuple[Line, ...]
    turn: int
    """The user turn being written (the opener is 1)."""
    seed: int
    same_item: bool = False
    """follow_up on the item already being discussed (partial progress), not a new one."""


@dataclass(frozen=True)
class FreeView:
    lang: str
    profile: Profile
    goal: tuple[tuple[str, str], ...]
    """(id, request) in order."""
    facts: tuple[FactView, ...]
    opener: str | None
    transcript: tuple[Line, ...]
    turn: int
    seed: int
    system_prompt: str | None = None
    """A tool task's baseline proxy: the benchmark's own user-simulator prompt (it replaces this project's)."""
    greeting: str | None = None
    """The agent's fixed first message in the benchmark's setup (its user simulator answers it)."""


@dataclass(frozen=True)
class GoalView:
    id: str
    request: str
    check: GoalCheck
    done: bool


@dataclass(frozen=True)
class AssessorView:
    lang: str
    goal: tuple[GoalView, ...]
    facts: tuple[FactView, ...]
    last_user: str
    reply: str
    turn: int


@dataclass(frozen=True)
class JudgeView:
    lang: str
    transcript: tuple[Line, ...]
    """Up to and including the reply."""
    next_user: str | None
    """The user's message after the reply (None when the session ended there)."""
    reply_turn: int


@dataclass(frozen=True)
class SessionView:
    """What `project` reads: the session so far and, for the realiser, the policy's decision."""

    persona: Persona
    turns: Sequence[SimTurn]
    seed: int = 0
    decision: Decision | None = None
    completed: tuple[str, ...] = ()
    disclosed: tuple[str, ...] = ()
    reply_turn: int | None = None
    """judge: the turn_index of the reply to rate."""
    extra: dict[str, str] = field(default_factory=dict)
    user_messages: int | None = None
    """How many of `turns` are the user's, when the session counts them (else they are counted here)."""
    lines: list[Line] | None = None
    """The transcript's lines of `turns` made so far, kept by the session: the realiser's view adds the new turns'
    lines to it rather than making every line again at each turn (a turn's role and text never change)."""


@overload
def project(party: Literal["assistant"], view: SessionView) -> list[Message]: ...
@overload
def project(party: Literal["realiser"], view: SessionView) -> RealiserView: ...
@overload
def project(party: Literal["free"], view: SessionView) -> FreeView: ...
@overload
def project(party: Literal["assessor"], view: SessionView) -> AssessorView: ...
@overload
def project(party: Literal["judge"], view: SessionView) -> JudgeView: ...


def project(party: Party, view: SessionView) -> list[Message] | RealiserView | FreeView | AssessorView | JudgeView:
    """The view of `party` over the session `view`."""
    persona, turns = view.persona, view.turns
    if party == "assistant":  # asked at every reply: nothing else is built for it
        return _assistant_messages(view)
    users = view.user_messages
    user_turn = (sum(1 for t in turns if t.role == "user") if users is None else users) + 1
    if party in ("realiser", "free"):  # the parties that read the transcript (the assessor, asked every turn, not)
        transcript = _transcript(view)
    if party == "realiser":
        decision = view.decision
        if decision is None:
            raise ValueError("the realiser's view needs the policy's decision")
        facts = _persona_parts(persona).fact_views
        allowed = set(decision.allowed_facts) | set(decision.state_facts)
        state = tuple(facts[f] for f in decision.state_facts)
        may = tuple(facts[f] for f in decision.allowed_facts if f not in decision.state_facts)
        assert all(f.id in allowed for f in state + may)
        item = persona.goal_item(decision.item) if decision.item is not None else None
        previous = next((t.text for t in reversed(turns) if t.role == "user" and t.item == decision.item
                         and t.act in ("open", "follow_up", "abandon_topic")), None)
        return RealiserView(
            lang=persona.lang, profile=persona.profile, act=decision.act,
            request=item.request if item is not None else None,
            rephrasings=item.rephrasings if item is not None else (), previous_request=previous,
            state_facts=state, allowed_facts=may,
            declined=tuple(facts[f].label for f in decision.declined_facts),
            unknown_asked=decision.unknown_asked, transcript=transcript, turn=user_turn, seed=view.seed,
            same_item=decision.act == "follow_up" and previous is not None,
        )
    if party == "free":
        return FreeView(
            lang=persona.lang, profile=persona.profile, goal=tuple((g.id, g.request) for g in persona.goal),
            facts=tuple(FactView(f.id, f.label, f.value, f.disclose, f.ask_patterns) for f in persona.facts),
            opener=persona.opener, transcript=transcript, turn=user_turn, seed=view.seed,
            system_prompt=view.extra.get("user_system"), greeting=view.extra.get("greeting"),
        )
    if party == "assessor":
        last_user = next((t.text for t in reversed(turns) if t.role == "user"), "")
        reply = turns[-1].text if turns and turns[-1].role == "assistant" else ""
        goal, known = _assessor_parts(persona, view.completed, view.disclosed)
        return AssessorView(lang=persona.lang, goal=goal, facts=known, last_user=last_user, reply=reply,
                            turn=user_turn)
    if party == "judge":
        if view.reply_turn is None:
            raise ValueError("the judge's view needs the reply to rate")
        upto = tuple(Line(t.role, t.text) for t in turns if t.turn_index <= view.reply_turn)
        nxt = next((t.text for t in turns if t.turn_index > view.reply_turn and t.role == "user"), None)
        return JudgeView(lang=persona.lang, transcript=upto, next_user=nxt, reply_turn=view.reply_turn)
    raise ValueError(f"unknown party {party!r}")


def _transcript(view: SessionView) -> tuple[Line, ...]:
    lines = view.lines
    if lines is None:
        return tuple(Line(t.role, t.text) for t in view.turns)
    lines.extend(Line(t.role, t.text) for t in view.turns[len(lines):])
    return tuple(lines)


def _assistant_messages(view: SessionView) -> list[Message]:
    """The model under test's messages: the texts; for a tool task, its system prompt and greeting first and its
    own tool calls and their results before each of its replies (it made them; the user never sees them)."""
    out = _opening_messages(view)
    for t in view.turns:
        out.extend(_turn_messages(t))
    return out


def _opening_messages(view: SessionView) -> list[Message]:
    out: list[Message] = []
    if "agent_system" in view.extra:
        out.append(Message(role="system", content=view.extra["agent_system"]))
    if "greeting" in view.extra:
        out.append(Message(role="assistant", content=view.extra["greeting"]))
    return out


def _turn_messages(turn: SimTurn) -> list[Message]:
    if not turn.tool_steps:  # a persona session's turn: its text alone
        return [Message(role=turn.role, content=turn.text)]
    from uxbench.sim.tooltask import step_messages

    out: list[Message] = []
    for step in turn.tool_steps:
        out.extend(step_messages(step))
    out.append(Message(role=turn.role, content=turn.text))
    return out


class AssistantTranscript:
    """`project("assistant", view)` for one session, extended as turns are added rather than rebuilt at every
    reply (that is quadratic in the session's length, and it was a tenth of the harness's time per reply). A
    turn's role, text and tool steps never change once it is added, so its messages are made once."""

    def __init__(self) -> None:
        self._messages: list[Message] | None = None
        self._turns = 0

    def messages(self, view: SessionView) -> list[Message]:
        if self._messages is None:
            self._messages = _opening_messages(view)
        for t in view.turns[self._turns:]:
            self._messages.extend(_turn_messages(t))
        self._turns = len(view.turns)
        return list(self._messages)


@dataclass
class _PersonaParts:
    """What the views take from a persona alone, made once per persona (they are made at every reply)."""

    persona: Persona
    """Held, so that its id (the cache's key) is not reused while the entry lives."""
    fact_views: dict[str, FactView]
    """Fact id -> the fact with its value (the realiser's view of a fact it may mention)."""
    patterns: tuple[tuple[str, ...], ...]
    """Per fact, how the assistant asks for it: `ask_patterns`, else the label as a literal."""
    assessor: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[tuple[GoalView, ...], tuple[FactView, ...]]] = \
        field(default_factory=dict)
    """(completed, disclosed) -> the assessor's goal and facts (a session passes through a few of these states)."""


_PARTS: dict[int, _PersonaParts] = {}
_PARTS_MAX = 4096
_STATES_MAX = 256


def _persona_parts(persona: Persona) -> _PersonaParts:
    parts = _PARTS.get(id(persona))
    if parts is None or parts.persona is not persona:
        if len(_PARTS) >= _PARTS_MAX:
            _PARTS.clear()
        parts = _PARTS[id(persona)] = _PersonaParts(
            persona, {f.id: FactView(f.id, f.label, f.value) for f in persona.facts},
            tuple(f.ask_patterns or (re.escape(f.label),) for f in persona.facts))
    return parts


def _assessor_parts(persona: Persona, completed: tuple[str, ...],
                    disclosed: tuple[str, ...]) -> tuple[tuple[GoalView, ...], tuple[FactView, ...]]:
    """The assessor's goal items and facts: the same for the same persona, completed items and facts said."""
    parts = _persona_parts(persona)
    made = parts.assessor.get((completed, disclosed))
    if made is None:
        if len(parts.assessor) >= _STATES_MAX:
            parts.assessor.clear()
        made = parts.assessor[(completed, disclosed)] = (
            tuple(GoalView(g.id, g.request, g.check, g.id in completed) for g in persona.goal),
            tuple(FactView(f.id, f.label, f.value if f.id in disclosed else None, patterns=patterns)
                  for f, patterns in zip(persona.facts, parts.patterns, strict=True)))
    return made


def render_transcript(lines: Sequence[Line], lang: str, *, mark_last: bool = False) -> str:
    """'User: ...' / 'Assistant: ...' (用户 / 助手), one block per message; the last one marked [REPLY]."""
    names = {"user": "用户", "assistant": "助手"} if lang == "zh" else {"user": "User", "assistant": "Assistant"}
    out = []
    for i, line in enumerate(lines):
        tag = " [REPLY]" if mark_last and i == len(lines) - 1 else ""
        out.append(f"{names[line.role]}{tag}: {line.text}")
    return "\n\n".join(out)
