"""Scripted tool agents that follow the resolution steps written in their system prompt (`scripted:reference-agent`,
`scripted:weak-agent`), for tests and benchmarks of simulated users on tool tasks without a model.

The steps come in the prompt as `<resolution_steps>` holding one JSON object per line (`name`, `arguments`,
`read_only`), and what the agent must tell the user as a JSON list in `<information_to_communicate>`: the oracle
prompt of `uxbench sim run --agent-prompt oracle` (tau2's own oracle agent is given the steps the same way). The
agent is stateless: every answer is worked out from the conversation it is sent, as an API model's would be.

The reference agent, for the next step in order:
1. asks the user, one question per message ("Could you please tell me your first name?"), for each argument value
   that neither the user nor a tool result has said yet; a value the user cannot give after being asked is taken
   from the step itself (an oracle's knowledge: the call is still made with the right value);
2. before a step that changes something (`read_only` false), asks for the user's confirmation and waits for it; a
   reply that starts with "no" (or "don't", "I'd rather not") skips the step;
3. makes the call. A read-only step whose every argument the user gave *before being asked* (volunteered) is
   treated as already verified and left out, unless a later step needs a value not yet known (then it is made,
   in order, as a lookup). This is the mechanism behind "premature disclosure changes the interaction": users who
   volunteer everything get fewer questions and fewer lookups, and the reward does not change.
When no step is left it says it is done, with the information to communicate.

The weak agent acts before asking: no question, no confirmation; it makes every step's call in order at once.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from uxbench.errors import FatalModelError

AgentStyle = Literal["reference", "weak"]
STEPS_RE = re.compile(r"<resolution_steps>(.*?)</resolution_steps>", re.DOTALL)
COMMUNICATE_RE = re.compile(r"<information_to_communicate>(.*?)</information_to_communicate>", re.DOTALL)
ASK_TEXT = "Could you please tell me your {words}?"
_ASKED_RE = re.compile(r"Could you please tell me your (.+?)\?")
CONFIRM_TEXT = "Please give me your confirmation to proceed: I will {action}. Shall I go ahead (yes/no)?"
_NEGATIVE_RE = re.compile(r"^\W*(no\b|nope\b|don'?t\b|do not\b|not now\b|i'?d rather not\b)", re.IGNORECASE)
DONE_TEXT = "All done: I have completed every step of your request."
DONE_TAIL = "Is there anything else I can help you with?"


@dataclass(frozen=True)
class Step:
    name: str
    arguments: dict[str, Any]
    read_only: bool = False

    @property
    def key(self) -> str:
        return self.name + orjson.dumps(self.arguments, option=orjson.OPT_SORT_KEYS).decode()

    def action_text(self) -> str:
        args = ", ".join(f"{k} {_show(v)}" for k, v in self.arguments.items())
        return f"{self.name.replace('_', ' ')}" + (f" with {args}" if args else "")


@dataclass
class PlanReply:
    """The agent's answer: text, or tool calls (id, name, arguments)."""

    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)


def _show(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace(",", "")


def parse_plan(system: str) -> tuple[list[Step], list[str]]:
    found = STEPS_RE.search(system)
    if found is None:
        raise FatalModelError("A scripted plan agent needs <resolution_steps> in its system prompt: run the tool "
                              "tasks with --agent-prompt oracle.")
    steps = []
    for line in found.group(1).splitlines():
        line = line.strip()
        if line.startswith("{"):
            row = orjson.loads(line)
            steps.append(Step(str(row["name"]), dict(row.get("arguments") or {}), bool(row.get("read_only"))))
    said = COMMUNICATE_RE.search(system)
    communicate = [str(x) for x in orjson.loads(said.group(1))] if said and said.group(1).strip() else []
    return steps, communicate


def leaf_values(arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """(argument name, value as text) for every scalar in the arguments (list items one by one)."""
    out: list[tuple[str, str]] = []
    for name, value in arguments.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool) and str(item).strip():
                out.append((name, str(item)))
    return out


def plan_reply(messages: Sequence[dict[str, Any]], tool_names: Sequence[str], style: AgentStyle) -> PlanReply:
    """The next answer of the agent to OpenAI-shaped messages (role, content, tool_calls, tool_call_id)."""
    system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    steps, communicate = parse_plan(system)
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    convo = [m for m in messages if m.get("role") != "system"]
    made = Counter(_call_key(call) for m in convo if m.get("role") == "assistant" for call in m.get("tool_calls") or [])
    if style == "weak":
        pending = _pending(steps, made)
        if pending:
            return _calls(turn, pending, tool_names)
        return PlanReply(text=_done(communicate))
    known = _fold(" ".join(str(m.get("content") or "") for m in convo if m.get("role") in ("user", "tool")))
    volunteered = _fold(" ".join(str(m.get("content") or "") for m in _before_first_question(convo)))
    asked = {found for m in convo if m.get("role") == "assistant" for found in _ASKED_RE.findall(str(m.get("content")
                                                                                                   or ""))}
    deferred: list[Step] = []
    for step in _pending(steps, made):
        values = leaf_values(step.arguments)
        if step.read_only and values and all(_fold(v) in volunteered for _, v in values):
            deferred.append(step)
            continue
        missing = [(name, v) for name, v in values if _fold(v) not in known]
        if missing and deferred:
            return _calls(turn, [deferred[-1]], tool_names)  # the nearest lookup before: it may hold it
        for name, _value in missing:
            words = name.replace("_", " ")
            if words not in asked:
                return PlanReply(text=ASK_TEXT.format(words=words))
        if not step.read_only:
            answer = _confirmation(convo, step)
            if answer is None:
                return PlanReply(text=CONFIRM_TEXT.format(action=step.action_text()))
            if answer is False:
                continue  # the user said no: not made
        return _calls(turn, [step], tool_names)
    return PlanReply(text=_done(communicate))


def _call_key(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments = raw if isinstance(raw, dict) else orjson.loads(raw or "{}")
    except orjson.JSONDecodeError:
        arguments = {}
    return str(function.get("name")) + orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()


def _pending(steps: list[Step], made: Counter[str]) -> list[Step]:
    left = Counter(made)
    out = []
    for step in steps:
        if left[step.key] > 0:
            left[step.key] -= 1
        else:
            out.append(step)
    return out


def _before_first_question(convo: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user's messages before the agent first asked them something (a greeting before the user's first
    message, "How can I help you today?", asks for nothing in particular)."""
    out: list[dict[str, Any]] = []
    for m in convo:
        if m.get("role") == "assistant" and out and "?" in str(m.get("content") or ""):
            break
        if m.get("role") == "user":
            out.append(m)
    return out


def _confirmation(convo: list[dict[str, Any]], step: Step) -> bool | None:
    """None: not asked yet (or not answered); True: confirmed; False: the user said no."""
    question = CONFIRM_TEXT.format(action=step.action_text())
    for i, m in enumerate(convo):
        if m.get("role") == "assistant" and str(m.get("content") or "") == question:
            reply = next((str(r.get("content") or "") for r in convo[i + 1:] if r.get("role") == "user"), None)
            if reply is None:
                return None
            return not _NEGATIVE_RE.search(reply)
    return None


def _calls(turn: int, steps: list[Step], tool_names: Sequence[str]) -> PlanReply:
    for step in steps:
        if step.name not in tool_names:
            raise FatalModelError(f"The resolution steps call {step.name}, which is not among the tools offered "
                                  f"({', '.join(tool_names) or 'none'}).")
    return PlanReply(calls=[(f"call_{turn}_{i}", s.name, s.arguments) for i, s in enumerate(steps)])


def _done(communicate: list[str]) -> str:
    parts = [DONE_TEXT]
    if communicate:
        parts.append("For your information: " + "; ".join(communicate) + ".")
    parts.append(DONE_TAIL)
    return " ".join(parts)
