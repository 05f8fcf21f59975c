"""What the simulator's steps pass to each other: acts, the assessment of a reply, the policy's decision, and the
record of a finished session (what `sim.store` keeps and every report reads)."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from uxbench.sim.persona import FailureKind
from uxbench.sim.tooltask import ToolStep

Act = Literal[
    "open", "answer", "follow_up", "repeat", "rephrase", "complain", "dismiss", "abandon_topic", "leave",
    "stop_success", "free",
]
"""A user turn's behavioural act (§3.3). `leave` writes no message; `free` marks a free-mode turn (no policy)."""
ACTS: tuple[Act, ...] = (
    "open", "answer", "follow_up", "repeat", "rephrase", "complain", "dismiss", "abandon_topic", "leave",
    "stop_success", "free",
)
FAILURE_ACTS = frozenset({"repeat", "rephrase", "complain", "dismiss", "abandon_topic", "leave"})
"""Acts that react to a failed reply (when the policy chose them after one)."""
Reason = Literal["goal_complete", "patience_exhausted", "max_turns", "out_of_scope", "error"]
REASONS: tuple[Reason, ...] = ("goal_complete", "patience_exhausted", "max_turns", "out_of_scope", "error")
Mode = Literal["structured", "free"]
ChainOutcome = Literal["recovered", "failed_recovery", "user_gave_up", "no_recovery"]
CHAIN_OUTCOMES: tuple[ChainOutcome, ...] = ("recovered", "failed_recovery", "user_gave_up", "no_recovery")
Feedback = Literal["like", "dislike"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


M = TypeVar("M", bound=BaseModel)


def replaced(model: M, update: dict[str, Any]) -> M:
    """What ``model.model_copy(update=update)`` gives (same values, field order and set fields; tested) for a model
    without extra or private attributes, without pydantic's generic copy steps: the policy's state and chains are
    copied several times per reply, and those steps were most of the policy's time."""
    out = model.__class__.__new__(model.__class__)
    fields = model.__dict__.copy()
    fields.update(update)
    object.__setattr__(out, "__dict__", fields)
    object.__setattr__(out, "__pydantic_fields_set__", model.__pydantic_fields_set__.union(update))
    object.__setattr__(out, "__pydantic_extra__", None)
    object.__setattr__(out, "__pydantic_private__", None)
    return out


class Assessment(_Frozen):
    """The assessor's reading of one assistant reply, against the persona's goal."""

    completed: tuple[str, ...] = ()
    """Goal items the reply completes."""
    asked_facts: tuple[str, ...] = ()
    """Facts (ids) the reply asks the user for."""
    asked_other: bool = False
    """The reply asks for something the persona does not know."""
    failure: FailureKind | None = None
    """How the reply fails the user, when it does (None: it helps or asks a fair question)."""
    handoff: bool = False
    """The reply sends the user elsewhere (a human agent, another service): the session is out of scope."""
    note: str = ""
    """A short reason (the rule that fired, or the LLM assessor's words); never shown to the model under test."""


class Decision(_Frozen):
    """What the policy decided for the next user turn."""

    act: Act
    item: str | None = None
    """The goal item the turn is about (raised, repeated, rephrased, complained about)."""
    state_facts: tuple[str, ...] = ()
    """Facts the turn states (asked for, or volunteered with the item)."""
    allowed_facts: tuple[str, ...] = ()
    """Facts the realiser may mention (already said, opening, after_turn reached); nothing else reaches it."""
    declined_facts: tuple[str, ...] = ()
    """`never` facts the assistant asked for: the user declines to say them."""
    unknown_asked: bool = False
    """The assistant asked for something the persona does not know: the user says so."""
    feedback: Feedback | None = None
    """Thumbs on the reply this turn answers."""
    skim: bool = False
    """Answer faster than the reply can be read (synthetic timing)."""
    end: Reason | None = None
    """Set when this turn ends the session (after its message, if it has one)."""


class Chain(_Frozen):
    """A recovery chain: from a failed reply to its outcome."""

    start_turn: int
    """Index of the failed assistant turn (the canonical log's turn_index)."""
    actions: tuple[str, ...] = ()
    """The user's acts and the retries that followed."""
    retries: int = 0
    outcome: ChainOutcome | None = None


class Usage(BaseModel):
    """One party's calls and tokens in a session (cached calls apart); cost of fresh calls."""

    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cached_output_tokens: int = 0
    cost_usd: float | None = 0.0
    """None when a fresh call's price is unknown."""

    def add(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            calls=self.calls + other.calls, cached_calls=self.cached_calls + other.cached_calls,
            input_tokens=self.input_tokens + other.input_tokens, output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cached_output_tokens=self.cached_output_tokens + other.cached_output_tokens, cost_usd=cost,
        )


PARTIES = ("assistant", "simulator", "assessor", "judge")
"""Who makes model calls in a session: the model under test, the realiser, the assessor, the judge."""


class SimTurn(BaseModel):
    """One message of a simulated session, with what the simulator knew when it was written."""

    turn_index: int
    role: Literal["user", "assistant"]
    text: str
    created_at: str
    """ISO 8601, synthetic (a run's clock, reading and typing time): `synthetic_timing` in the log."""
    act: Act | None = None
    """User turns: the act realised."""
    item: str | None = None
    facts_stated: tuple[str, ...] = ()
    """User turns: facts whose values the text states."""
    satisfaction: float | None = None
    """User turns: the policy's satisfaction state (1-5) after reading the reply this turn answers."""
    patience_left: float | None = None
    feedback: Feedback | None = None
    """Assistant turns: the thumbs the user gave it."""
    skim: bool = False
    assessment: Assessment | None = None
    """Assistant turns: the assessor's reading."""
    attempts: int = 1
    """Generations tried for this message (a discarded output is retried once)."""
    discarded: tuple[str, ...] = ()
    """Why earlier generations of this message were discarded (empty, reasoning text, stop marker, ...)."""
    tool_steps: list[ToolStep] = Field(default_factory=list)
    """Assistant turns of a tool task: the tool calls made before this reply and the environment's answers."""


class Termination(_Frozen):
    reason: Reason
    detail: str = ""
    """What exactly happened (the error, the premature stop, the closing act)."""


class SessionRecord(BaseModel):
    """A finished session: the transcript with acts and states, its end, and what it cost."""

    session_id: str
    index: int
    persona_id: str
    persona_hash: str
    lang: Literal["zh", "en"]
    trial: int
    seed: int
    mode: Mode
    turns: list[SimTurn] = Field(default_factory=list)
    termination: Termination
    completed: tuple[str, ...] = ()
    abandoned: tuple[str, ...] = ()
    goal_items: tuple[str, ...] = ()
    chains: list[Chain] = Field(default_factory=list)
    final_satisfaction: float | None = None
    """The policy's satisfaction state at the end (it also reflects the last reply when the user left without a
    message); None in free mode."""
    usage: dict[str, Usage] = Field(default_factory=dict)
    """Per party (`PARTIES`)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    task_id: str | None = None
    """A tool task's id (`tau2:airline/12`); None for a persona session."""
    reward: float | None = None
    """A tool task's reward from its own evaluator (None: not evaluated, or a persona session)."""
    reward_breakdown: dict[str, float] = Field(default_factory=dict)
    reward_detail: dict[str, Any] = Field(default_factory=dict)
    """The evaluator's checks (database match, gold actions matched, information communicated) and its note."""

    @property
    def success(self) -> bool:
        """A tool task: the evaluator's reward is 1. A persona session: every goal item completed (the
        assessor's verdicts)."""
        if self.task_id is not None:
            return self.reward is not None and self.reward >= 1.0 - 1e-9
        return bool(self.goal_items) and set(self.goal_items) <= set(self.completed)

    @property
    def tool_calls(self) -> int:
        """Tool calls the agent made in the session."""
        return sum(len(step.calls) for t in self.turns for step in t.tool_steps)

    @property
    def assistant_turns(self) -> int:
        return sum(1 for t in self.turns if t.role == "assistant")

    @property
    def user_turns(self) -> list[SimTurn]:
        return [t for t in self.turns if t.role == "user"]

    def satisfaction_curve(self) -> list[float]:
        """The state after the opener and after each reply: one value per user turn, plus the final state when the
        session ended on a reply (a silent exit, the turn limit)."""
        curve = [t.satisfaction for t in self.turns if t.role == "user" and t.satisfaction is not None]
        if self.final_satisfaction is not None and self.turns and self.turns[-1].role == "assistant":
            curve.append(self.final_satisfaction)
        return curve
