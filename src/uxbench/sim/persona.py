"""The persona: who a simulated user is, what they want, what they know and how they react (schema version 1).

A persona is one YAML mapping or one JSON Lines row (`sim.persona_io` reads both). Its content hash
(`content_hash`) identifies it in run manifests: editing any field gives another hash, so runs made with
different versions of a persona are never compared silently.

Who sees what (enforced by `sim.projection`, not by asking a model to hold back):
- the model under test sees none of this, only the conversation;
- the realiser sees the profile, the current goal item's request and the facts it may state this turn;
- the assessor sees goal items, checks and fact labels (values only once disclosed).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION: Literal[1] = 1
"""Version of this schema; a persona file declares it as `schema_version` (default: this version)."""

Lang = Literal["zh", "en"]
Expertise = Literal["novice", "intermediate", "expert"]
Verbosity = Literal["terse", "normal", "verbose"]
TypingHabit = Literal["short_messages", "no_punctuation", "lowercase", "typos", "emoji"]
FailureKind = Literal["wrong", "irrelevant", "refusal", "redundant_question", "ignored_fact"]
"""How an assistant reply can fail the user (the assessor's verdicts that cost patience)."""
ReactionAct = Literal["repeat", "rephrase", "complain", "dismiss", "abandon"]
"""What a user can do after a failed reply (`abandon`: drop the goal item, or leave when none is left)."""
DISCLOSE_MODES = ("opening", "on_request", "after_turn", "volunteer_if_adjacent", "never")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$")
_DISCLOSE_RE = re.compile(r"^(opening|on_request|volunteer_if_adjacent|never|after_turn:([1-9][0-9]{0,2}))$")
_SOURCE_RE = re.compile(r"^(hand|mined:[0-9a-f]{8,64})$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def _check_id(value: str, what: str) -> str:
    if not _ID_RE.match(value):
        raise ValueError(f"{what} must be 1-80 letters, digits or _ . : - (starting with a letter or digit)")
    return value


def _text_only(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError("must be text: write it in quotes (YAML reads 0012 as the number 10 and 1e3 as 1000)")
    return value


class Traits(_Model):
    """Trait intensities in [0, 1] (as in tau-trait): they shape the wording, not the policy."""

    impatience: float = Field(default=0.0, ge=0, le=1)
    """Pushes for a quick answer, short temper in the wording."""
    skepticism: float = Field(default=0.0, ge=0, le=1)
    """Doubts answers, asks for proof."""
    confusion: float = Field(default=0.0, ge=0, le=1)
    """Unsure of terms, asks what things mean."""


class Profile(_Model):
    """Public traits: what the realiser may know about who it plays."""

    description: str = ""
    """Who the user is, in the persona's language (never shown to the model under test)."""
    expertise: Expertise = "intermediate"
    verbosity: Verbosity = "normal"
    tone: str = Field(default="neutral", max_length=80)
    """One or a few words: polite, blunt, anxious, friendly ..."""
    typing: tuple[TypingHabit, ...] = ()
    """Typing habits: short_messages, no_punctuation, lowercase, typos, emoji."""
    traits: Traits = Field(default_factory=Traits)
    message_chars: tuple[int, int] = (1, 600)
    """The range of a user message's length in characters (a fidelity item checks it)."""

    @field_validator("message_chars")
    @classmethod
    def _range(cls, value: tuple[int, int]) -> tuple[int, int]:
        low, high = value
        if low < 1 or high < low:
            raise ValueError("must be [low, high] with 1 <= low <= high")
        return value


class GoalCheck(_Model):
    """How the assessor decides that a reply completes a goal item: literal phrases and a regex (checked by code,
    the `rules` assessor), a question for an LLM assessor, or several of these."""

    any_of: tuple[str, ...] = ()
    """The reply completes the item when it contains one of these (case- and width-insensitive)."""
    pattern: str | None = None
    """...or matches this regular expression."""
    question: str | None = None
    """A yes/no question an LLM assessor answers about the reply ("Does the reply give the refund deadline?")."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as err:
                raise ValueError(f"is not a valid regular expression: {err}") from None
        return value

    @model_validator(mode="after")
    def _something(self) -> GoalCheck:
        if not self.any_of and self.pattern is None and not self.question:
            raise ValueError("a check needs any_of, pattern or question")
        if any(not phrase.strip() for phrase in self.any_of):
            raise ValueError("any_of holds an empty phrase")
        return self

    @property
    def by_code(self) -> bool:
        """Whether the `rules` assessor can decide it (a literal or a pattern is given)."""
        return bool(self.any_of) or self.pattern is not None


class GoalItem(_Model):
    """One thing the user wants, in order; `after` names the items that must be complete first."""

    id: str
    request: str = Field(min_length=1)
    """What the user asks for, in the persona's language (the realiser words it; never a private fact value)."""
    rephrasings: tuple[str, ...] = ()
    """Authored other wordings of the request (the scripted realiser's rephrase act uses them)."""
    check: GoalCheck
    after: tuple[str, ...] = ()
    """Ids of goal items that must be complete before this one is raised ("after X, then this")."""
    needs: tuple[str, ...] = ()
    """Ids of the facts the assistant needs for this item (a `volunteer_if_adjacent` fact comes with it)."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_id(value, "a goal item id")


class Fact(_Model):
    """A private fact and when the user may say it."""

    id: str
    label: str = Field(min_length=1)
    """What the fact is, in the persona's language ("order number", "订单号"); models may see the label, never
    the value before it may be said."""
    value: str = Field(min_length=1)
    disclose: str = "on_request"
    """opening (may be said from the first message) | on_request (only after the assistant asks for it) |
    after_turn:K (from user turn K on, counting the opener as 1) | volunteer_if_adjacent (with the goal item
    that needs it) | never."""
    ask_patterns: tuple[str, ...] = ()
    """Regular expressions telling that the assistant asks for this fact (the `rules` assessor); default: the
    label itself."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_id(value, "a fact id")

    @field_validator("value", "label", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _text_only(value)

    @field_validator("disclose")
    @classmethod
    def _mode(cls, value: str) -> str:
        if not _DISCLOSE_RE.match(value):
            raise ValueError("must be opening, on_request, after_turn:K (K from 1), volunteer_if_adjacent or never")
        return value

    @field_validator("ask_patterns")
    @classmethod
    def _patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {err}") from None
        return value

    @property
    def mode(self) -> str:
        """The disclosure mode without its turn: opening, on_request, after_turn, volunteer_if_adjacent, never."""
        return self.disclose.split(":", 1)[0]

    @property
    def from_turn(self) -> int | None:
        """K of `after_turn:K`, else None."""
        return int(self.disclose.split(":", 1)[1]) if self.mode == "after_turn" else None


class FailureCosts(_Model):
    """Patience each kind of failed reply costs."""

    wrong: float = Field(default=1.0, ge=0)
    irrelevant: float = Field(default=1.0, ge=0)
    refusal: float = Field(default=1.0, ge=0)
    redundant_question: float = Field(default=0.5, ge=0)
    """Asks again for a fact already given."""
    ignored_fact: float = Field(default=1.0, ge=0)
    """Answers as if a fact the user gave had not been said."""

    def of(self, kind: FailureKind) -> float:
        return float(getattr(self, kind))


class Patience(_Model):
    """Failure budgets: the session ends (patience exhausted) when the failures' costs exceed `session`."""

    session: float = Field(default=3.0, ge=0)
    """Failure cost the user tolerates in the whole session; the failure that goes beyond it ends the session."""
    per_item: float | None = Field(default=None, ge=0)
    """Failure cost tolerated on one goal item before the user abandons that item (None: the session budget
    only)."""
    costs: FailureCosts = Field(default_factory=FailureCosts)


class ReactionWeights(_Model):
    """Relative weights of the reactions to a failed reply (normalised by the policy)."""

    repeat: float = Field(default=0.0, ge=0)
    rephrase: float = Field(default=0.0, ge=0)
    complain: float = Field(default=0.0, ge=0)
    dismiss: float = Field(default=0.0, ge=0)
    abandon: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _positive(self) -> ReactionWeights:
        if sum(self.items().values()) <= 0:
            raise ValueError("at least one weight must be above 0")
        return self

    def items(self) -> dict[ReactionAct, float]:
        return {"repeat": self.repeat, "rephrase": self.rephrase, "complain": self.complain,
                "dismiss": self.dismiss, "abandon": self.abandon}


class ClosingWeights(_Model):
    """How a user whose patience ran out ends the session: a short give-up message, or leaving silently."""

    dismiss: float = Field(default=0.5, ge=0)
    leave: float = Field(default=0.5, ge=0)

    @model_validator(mode="after")
    def _positive(self) -> ClosingWeights:
        if self.dismiss + self.leave <= 0:
            raise ValueError("dismiss or leave must be above 0")
        return self


def _default_failure() -> ReactionWeights:
    return ReactionWeights(rephrase=0.5, repeat=0.2, complain=0.3)


def _default_failure_low() -> ReactionWeights:
    return ReactionWeights(complain=0.6, rephrase=0.2, repeat=0.2)


class Reactions(_Model):
    """How the user reacts, as a function of the patience left; feedback propensities; reading speed."""

    failure: ReactionWeights = Field(default_factory=_default_failure)
    """Weights after a failed reply while the share of patience left is at least `low_below`."""
    failure_low: ReactionWeights = Field(default_factory=_default_failure_low)
    """Weights after a failed reply once less than `low_below` of the patience is left."""
    low_below: float = Field(default=0.5, ge=0, le=1)
    exhausted: ClosingWeights = Field(default_factory=ClosingWeights)
    like: float = Field(default=0.2, ge=0, le=1)
    """Probability of a thumbs-up on a reply that completes a goal item."""
    dislike: float = Field(default=0.3, ge=0, le=1)
    """Probability of a thumbs-down on a failed reply."""
    skim: float = Field(default=0.0, ge=0, le=1)
    """Probability of answering faster than the reply can be read (synthetic timing, marked as such)."""
    reading_cps: float = Field(default=15.0, gt=0)
    """Reading speed in characters per second, for the synthetic timestamps."""
    provenance: str = "hand"
    """Where the weights come from: hand, or fitted:<what> for personas built from mined sessions."""


class RubricItem(_Model):
    """One item of the persona's own rubric (what this user cares about)."""

    id: str
    text: str = Field(min_length=1)
    provenance: str = "hand"
    """hand (written by a person) or derived:<rule> (compiled from another field)."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_id(value, "a rubric item id")


class Persona(_Model):
    """One simulated user."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str
    lang: Lang
    source: str = "hand"
    """hand, or mined:<digest> for a persona built from a mined session (the digest, never the conversation)."""
    profile: Profile = Field(default_factory=Profile)
    goal: tuple[GoalItem, ...] = Field(min_length=1)
    facts: tuple[Fact, ...] = ()
    opener: str | None = None
    """An authored first message, sent verbatim (no model rewrites it)."""
    patience: Patience = Field(default_factory=Patience)
    reactions: Reactions = Field(default_factory=Reactions)
    rubric: tuple[RubricItem, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free provenance notes (a mined persona's hold-out split, the extraction model ...); shown to no model."""

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_id(value, "a persona id")

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        if not _SOURCE_RE.match(value):
            raise ValueError("must be hand or mined:<hex digest>")
        return value

    @field_validator("opener")
    @classmethod
    def _opener(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is empty: leave it out to let the realiser write the first message")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Persona:
        _unique([g.id for g in self.goal], "goal item")
        _unique([f.id for f in self.facts], "fact")
        _unique([r.id for r in self.rubric], "rubric item")
        items = {g.id for g in self.goal}
        facts = {f.id for f in self.facts}
        for item in self.goal:
            for dep in item.after:
                if dep not in items:
                    raise ValueError(f"goal item '{item.id}' comes after '{dep}', which is not a goal item")
            for need in item.needs:
                if need not in facts:
                    raise ValueError(f"goal item '{item.id}' needs fact '{need}', which is not a fact")
        _no_cycle({g.id: g.after for g in self.goal})
        for fact in self.facts:
            if fact.mode == "volunteer_if_adjacent" and not any(fact.id in g.needs for g in self.goal):
                raise ValueError(f"fact '{fact.id}' is volunteer_if_adjacent but no goal item lists it in needs")
            hidden = fact.mode in ("on_request", "never", "after_turn", "volunteer_if_adjacent")
            if hidden and self.opener and fact.value in self.opener:
                raise ValueError(f"the opener states fact '{fact.id}', which is {fact.mode}: only opening facts "
                                 "may be in the opener")
            for item in self.goal:
                if hidden and fact.value in item.request + "".join(item.rephrasings):
                    raise ValueError(f"goal item '{item.id}' states fact '{fact.id}' in its request: name the fact "
                                     "in needs instead")
        return self

    def goal_item(self, item_id: str) -> GoalItem:
        return next(g for g in self.goal if g.id == item_id)

    def fact(self, fact_id: str) -> Fact:
        return next(f for f in self.facts if f.id == fact_id)

    def content_hash(self) -> str:
        """sha256 (16 hex digits) of the persona's content: every field, sorted keys."""
        return persona_hash(self)


def persona_hash(persona: Persona) -> str:
    raw = orjson.dumps(persona.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(raw).hexdigest()[:16]


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for value in ids:
        if value in seen:
            raise ValueError(f"two {what}s have the id '{value}'")
        seen.add(value)


def _no_cycle(after: dict[str, tuple[str, ...]]) -> None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            raise ValueError(f"goal items depend on each other in a cycle: {' -> '.join([*path, node])}")
        state[node] = 1
        for dep in after.get(node, ()):
            visit(dep, [*path, node])
        state[node] = 2

    for node in after:
        visit(node, [])
