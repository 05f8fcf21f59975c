"""Assessors: how a reply is read against the persona's goal (step 1 of a user turn).

- `RulesAssessor` (`--assessor rules`, the default): code. A goal item is complete when the reply contains one of
  its `check.any_of` phrases or matches its `check.pattern` (`check_met`: case, width, spacing, hyphens and
  -ise/-ize spellings do not matter); a fact is asked for when a request sentence of the reply names it by its
  label or `ask_patterns` (`sim.asks`, the simulator's one ask detector, measured on real assistant turns); a
  reply that does neither fails, as a refusal, a redundant question, a wrong answer (it shares content words with
  the request) or an irrelevant one.
  Items with only a judge `question` cannot be decided this way (`uxbench sim run` says so before running).
- `ModelAssessor` (`--assessor PROVIDER:MODEL`): an LLM reads the same view and answers one JSON object, checked
  against a schema; an invalid answer is retried once, then the session ends with reason `error`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, Protocol

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.sim.asks import AskTarget, asked_facts
from uxbench.sim.literal_gate import GateSet, LiteralGate
from uxbench.sim.markers import content_tokens
from uxbench.sim.persona import FailureKind
from uxbench.sim.projection import AssessorView
from uxbench.sim.types import Assessment

TEMPLATES = PackageTemplates("uxbench.sim", "Simulator")

_REFUSAL_RE = LiteralGate(re.compile(
    r"\bi (can ?not|can't|am unable to|won't|am not able to)\b|\bi'm (unable|not able) to\b|\bunable to help\b|"
    r"\bsorry, (but )?i can|无法(帮|为|处理|提供|回答)|不能(帮|为|处理|提供|回答)|抱歉，?我(不能|无法|没办法)|我没办法",
    re.IGNORECASE,
))
_HANDOFF_RE = LiteralGate(re.compile(
    r"\b(contact|call|reach out to) (our |the )?(customer (service|support)|support team|a human|an agent)\b|"
    r"\btransfer(ring)? you to\b|\bhuman agent\b|转(接)?人工|联系人工|联系客服|拨打客服|转接(到|给)",
    re.IGNORECASE,
))

_REPLY_GATES = GateSet(_REFUSAL_RE, _HANDOFF_RE)


class Assessor(Protocol):
    """Reads one reply. `spec` names it in the manifest."""

    spec: str

    async def assess(self, view: AssessorView, *, seed: int, record: Record) -> Assessment:
        """The assessment; every model output it cost goes to `record` (for the session's usage)."""
        ...


Record = Callable[[ModelOutput], None]


class AssessorFailed(Exception):
    """The assessor gave no usable answer (after its retry); the session ends with reason `error`."""


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


_SEPARATORS_RE = re.compile(r"[\s\-_/·・]+")
_ISE_RE = re.compile(r"(?<=[a-z])is(e|ed|es|ing|ation|ations)\b")
_CJK_SPACE_RE = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")


def check_fold(text: str) -> str:
    """A text as goal checks compare it: NFKC, case-folded, spaces between Chinese characters dropped, runs of
    spaces, hyphens and slashes as one space, -ise spellings as -ize ("small-claims" = "small claims",
    "itemised" = "itemized", "押 金" = "押金")."""
    folded = fold(text)
    if not folded.isascii():  # the spaces dropped are between Chinese characters
        folded = _CJK_SPACE_RE.sub("", folded)
    return _ISE_RE.sub(r"iz\1", _SEPARATORS_RE.sub(" ", folded)).strip()


@lru_cache(maxsize=4096)
def _pattern(text: str) -> re.Pattern[str]:
    """Persona patterns compiled once (re's own cache holds 512, fewer than a large persona set has)."""
    return re.compile(text, re.IGNORECASE)


@lru_cache(maxsize=8192)
def _folded(phrase: str) -> str:
    return check_fold(phrase)


def check_met(view_goal_check: Any, reply: str, folded: str | None = None) -> bool:
    """Whether a reply meets a goal check by code (literal phrases, compared after `check_fold`, or the pattern);
    `folded`: the reply's `check_fold`, when the caller checks several goals against it."""
    if folded is None:
        folded = check_fold(reply)
    _, phrases, pattern = _check_parts(view_goal_check)
    for phrase in phrases:
        if phrase in folded:
            return True
    return bool(pattern and pattern.search(reply))


_CHECKS: dict[int, tuple[Any, tuple[str, ...], re.Pattern[str] | None]] = {}
_CHECKS_MAX = 8192


def _check_parts(check: Any) -> tuple[Any, tuple[str, ...], re.Pattern[str] | None]:
    """(the check, its phrases folded, its pattern compiled), made once per check (a persona's `GoalCheck`, frozen;
    held in the entry, so its id is not reused while the entry lives): each reply is checked against them."""
    parts = _CHECKS.get(id(check))
    if parts is None or parts[0] is not check:
        if len(_CHECKS) >= _CHECKS_MAX:
            _CHECKS.clear()
        parts = _CHECKS[id(check)] = (check, tuple(_folded(phrase) for phrase in check.any_of),
                                      _pattern(check.pattern) if check.pattern else None)
    return parts


class RulesAssessor:
    spec = "rules"

    async def assess(self, view: AssessorView, *, seed: int, record: Record) -> Assessment:
        return rules_assessment(view)


def rules_assessment(view: AssessorView) -> Assessment:
    """The code reading of a reply (pure)."""
    reply = view.reply
    folded = check_fold(reply)
    completed = tuple(g.id for g in view.goal if not g.done and g.check.by_code and check_met(g.check, reply, folded))
    asked = asked_facts(reply, (AskTarget(f.id, f.label, f.patterns) for f in view.facts))
    could = _REPLY_GATES.could(reply)  # (refusal, handoff)
    handoff = bool(could[1] and _HANDOFF_RE.regex.search(reply))
    if completed:
        return Assessment(completed=completed, asked_facts=asked, note="check met")
    if handoff:
        return Assessment(handoff=True, note="hands the user off")
    given = {f.id for f in view.facts if f.value is not None}
    if asked and not set(asked) <= given:
        return Assessment(asked_facts=asked, note="asks for a fact")
    failure: FailureKind
    if asked:
        failure, note = "redundant_question", "asks again for a fact already given"
    elif could[0] and _REFUSAL_RE.regex.search(reply):
        failure, note = "refusal", "declines"
    else:
        pending = [g for g in view.goal if not g.done]
        words = set().union(*(content_tokens(g.request) for g in pending)) if pending else set()
        on_topic = bool(words & content_tokens(reply))
        failure, note = ("wrong", "on topic, but no check met") if on_topic else ("irrelevant", "off the request")
    return Assessment(asked_facts=asked, failure=failure, note=note)


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    completed: list[str] = []
    asked_facts: list[str] = []
    asked_other: bool = False
    failure: Literal["wrong", "irrelevant", "refusal", "redundant_question", "ignored_fact"] | None = None
    handoff: bool = False


_JSON_RE = re.compile(r"\{.*\}", re.DOTALL)


def parse_assessment(text: str, view: AssessorView) -> Assessment:
    """The LLM assessor's JSON answer as an Assessment; unknown ids are dropped. Raises ValueError."""
    found = _JSON_RE.search(text)
    if found is None:
        raise ValueError("no JSON object in the answer")
    try:
        verdict = _Verdict.model_validate(orjson.loads(found.group(0)))
    except (orjson.JSONDecodeError, ValidationError) as err:
        raise ValueError(f"the JSON does not match the schema: {str(err).splitlines()[0]}") from None
    items = {g.id for g in view.goal if not g.done}
    facts = {f.id for f in view.facts}
    completed = tuple(i for i in verdict.completed if i in items)
    return Assessment(
        completed=completed, asked_facts=tuple(f for f in verdict.asked_facts if f in facts),
        asked_other=verdict.asked_other, failure=None if completed else verdict.failure,
        handoff=verdict.handoff and not completed, note="model assessor",
    )


def assessor_prompt(view: AssessorView) -> str:
    lang = view.lang
    goal = "\n".join(
        f"- {g.id}: {g.request} — {g.check.question or ' / '.join(g.check.any_of) or g.check.pattern}"
        + (" (done)" if g.done else "") for g in view.goal)
    facts = "\n".join(f"- {f.id}: {f.label}" + (f" = {f.value}" if f.value is not None else "")
                      for f in view.facts) or "-"
    return TEMPLATES.text(f"{lang}/assess.txt", {"goal": goal, "facts": facts, "last_user": view.last_user,
                                                 "reply": view.reply})


class ModelAssessor:
    """An LLM assessor through the model layer (limiter, retries, cache)."""

    def __init__(self, model: Any, *, temperature: float = 0.0, max_tokens: int = 300) -> None:
        self.model = model
        self.spec = str(model.spec)
        self.temperature = temperature
        self.max_tokens = max_tokens

    async def assess(self, view: AssessorView, *, seed: int, record: Record) -> Assessment:
        from uxbench.data.schema import Message

        prompt = assessor_prompt(view)
        config = GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens, seed=seed)
        messages = [Message(role="user", content=prompt)]
        problem = ""
        for attempt in range(2):
            out: ModelOutput = await self.model.generate(messages, config, cache_salt=f"assess:{attempt}")
            record(out)
            try:
                return parse_assessment(out.text, view)
            except ValueError as err:
                problem = str(err)
        raise AssessorFailed(f"the assessor's answer was unusable twice ({problem})")
