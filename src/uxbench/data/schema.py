"""Typed schema for conversations and the three UXBench task cases.

Loaders normalise every field variant of the official files into these models (see `normalize.py`);
everything above the data layer sees only these types.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]
"""`tool`: the result of a tool call, sent back to the model that made it (`Message.tool_call_id`)."""
TaskName = Literal["judge", "eval", "recovery"]
JudgeLabel = Literal["good", "bad"]


class ToolCall(BaseModel):
    """A tool call a model made: the call's id (to match its result), the tool's name and its arguments."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    """The arguments as the model wrote them, when they were not a JSON object (then `arguments` is empty and
    the tool answers with an error naming the problem)."""


class ToolSpec(BaseModel):
    """A tool the model may call: a name, what it does, and its arguments as a JSON Schema object."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments (`{"type": "object", "properties": {...}, "required": [...]}`)."""


class Message(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    """Who spoke."""
    content: str
    """The final text (product JSON payloads are unwrapped by the loaders)."""
    reasoning: str | None = None
    """Reasoning / "deep thinking" text shown with the reply, when the source keeps it apart."""
    created_at: datetime | None = None
    """When the message was sent, if known."""
    turn_index: int | None = None
    """Position in the original conversation, if the source numbers turns."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Assistant messages: the tool calls the model made (its text may then be empty)."""
    tool_call_id: str | None = None
    """Tool messages: the id of the call this message answers."""
    name: str | None = None
    """Tool messages: the tool's name (Gemini's function responses are matched by name)."""


class CaseLabels(BaseModel):
    """Labels carried by a case. Names are kept as given (often Chinese); `*_key` are taxonomy keys."""

    model_config = ConfigDict(extra="allow")

    scenario: str | None = None
    """Interaction scenario as given in the source."""
    scenario_key: str | None = None
    """English taxonomy key of the scenario, when it maps onto the taxonomy."""
    failure_dimension: str | None = None
    """Failure dimension of a bad case, as given."""
    failure_dimension_key: str | None = None
    """English key among the 10 released failure dimensions, when it maps."""
    success_dimension: str | None = None
    """Success dimension of a good case, as given."""
    success_dimension_key: str | None = None
    """English key among the 8 success dimensions, when it maps."""
    difficulty: str | None = None
    """easy / medium / hard / very_hard, when given."""
    signal_type: str | None = None
    """Behavioural signal that marked the case (dislike, explicit_complaint, repeat_query, like, ...)."""


class BaseCase(BaseModel):
    """Fields common to every task case."""

    id: str
    """Case id (the dataset's `cid`)."""
    history: list[Message] = Field(default_factory=list)
    """Messages before the turn under test, oldest first."""
    labels: CaseLabels = Field(default_factory=CaseLabels)
    """Dimension, scenario, difficulty and signal labels."""
    lang: Literal["zh", "en"] | None = None
    """Language of the conversation when known (demo data sets it; loaders may guess)."""
    source: str | None = None
    """Where the case came from: a file path, `hf:<repo>/<config>`, or `demo`."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Every other field of the source row, kept for reference (never used for scoring)."""

    @property
    def n_turns(self) -> int:
        """Number of user turns including the one under test."""
        return sum(1 for m in self.history if m.role == "user") + 1


class JudgeCase(BaseCase):
    """Task 1, UX Judge: did the real user like `response` to `query`?"""

    task: Literal["judge"] = "judge"
    query: str
    """The user message the reply answers."""
    response: str
    """The assistant reply under judgement (final text)."""
    response_reasoning: str | None = None
    """Reasoning text the product showed with the reply, if any."""
    label: JudgeLabel
    """Ground truth from the user's feedback: good (liked) or bad (disliked)."""


class EvalCase(BaseCase):
    """Task 2, UX Eval: generate a reply to `query` after `history`."""

    task: Literal["eval"] = "eval"
    query: str
    """The user message to answer."""
    reference_response: str | None = None
    """The original (usually disliked) reply, when the source keeps it."""


class RecoveryCase(BaseCase):
    """Task 3, UX Recovery: after `failed_response` and the user's `complaint`, repair the conversation."""

    task: Literal["recovery"] = "recovery"
    failed_response: str
    """The assistant reply the user complained about."""
    complaint: str
    """The user's complaint, the turn to answer."""


AnyCase = JudgeCase | EvalCase | RecoveryCase
