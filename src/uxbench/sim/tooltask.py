"""Tool tasks: a task whose assistant works with tools in an environment and gets a reward from the task's own
evaluator (the tau-bench family; `sim/tau2_adapter.py` reads tau2's). These types are what the rest of `sim`
sees; only the adapter knows the third-party package.

- `ToolTask`: the user scenario (reason for call, known and unknown info, task instructions), the agent's policy
  and tools, the gold actions and what the agent must communicate;
- `ToolEnvironment`: one session's environment: it executes a tool call and answers with the tool's output;
- `TaskSource`: where tasks come from, the environments, the prompts of the agent and of the source's own user
  simulator, and the reward of a finished session.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from uxbench.data.schema import Message, ToolCall, ToolSpec

AgentPrompt = Literal["policy", "oracle"]
"""policy: the agent gets the domain policy (the benchmark's own setup); oracle: the policy plus the task's
resolution steps and what to communicate (tau2's oracle setup; the scripted plan agents need it)."""
Ending = Literal["user_stop", "agent_stop", "max_steps", "error"]
"""How a session ended, in the benchmark's terms (only the first two are evaluated; the others score 0)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GoldAction(_Frozen):
    """One action of the task's reference solution."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Literal["assistant", "user"] = "assistant"
    read_only: bool = False
    """The tool only reads (a lookup); a write changes the environment's database."""


class Scenario(_Frozen):
    """The user side of a task, as the benchmark writes it (second person: "You want to ...")."""

    persona: str | None = None
    reason_for_call: str = ""
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str | None = None
    free_text: str | None = None
    """Instructions given as one text, not structured (tau2's mock domain): the request and everything else."""

    def text(self) -> str:
        """Every field, one after another: what a compiled value must occur in."""
        parts = [self.persona, self.reason_for_call, self.known_info, self.unknown_info, self.task_instructions,
                 self.free_text]
        return "\n".join(p for p in parts if p)


class ToolTask(_Frozen):
    id: str
    """`<source>:<domain>/<task id>`, e.g. `tau2:airline/12`."""
    domain: str
    task_id: str
    scenario: Scenario
    gold: tuple[GoldAction, ...] = ()
    communicate: tuple[str, ...] = ()
    """Information the agent must give the user (checked by the evaluator when it is in the reward basis)."""
    reward_basis: tuple[str, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    """The agent's tools (the user's, in a dual-control domain, are not supported)."""
    digest: str
    """sha256 of the task as the source holds it (enters the run id: an edited task is another run)."""


class ToolResult(_Frozen):
    content: str
    error: bool = False


class ToolEnvironment(Protocol):
    def call(self, name: str, arguments: dict[str, Any], call_id: str) -> ToolResult:
        """Execute one tool call of the agent; a failing call is a result with `error`, never an exception."""
        ...


class Reward(_Frozen):
    reward: float
    breakdown: dict[str, float] = Field(default_factory=dict)
    """Per component of the task's reward basis (DB, COMMUNICATE, ACTION, ENV_ASSERTION ...)."""
    detail: dict[str, Any] = Field(default_factory=dict)
    """The evaluator's checks: DB match, each gold action matched, each piece of information communicated."""
    note: str = ""


class ToolStepCall(_Frozen):
    """One tool call of the agent and the environment's answer."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    result: str
    error: bool = False


class ToolStep(_Frozen):
    """One model output that made tool calls (and the text it came with), with the results it got back."""

    text: str = ""
    calls: tuple[ToolStepCall, ...]


def step_messages(step: ToolStep) -> list[Message]:
    """A tool step as the agent's conversation holds it: its message with the calls, then one result each."""
    calls = tuple(ToolCall(id=c.id, name=c.name, arguments=c.arguments, raw_arguments=c.raw_arguments)
                  for c in step.calls)
    out = [Message(role="assistant", content=step.text, tool_calls=calls)]
    out += [Message(role="tool", content=c.result, tool_call_id=c.id, name=c.name) for c in step.calls]
    return out


def trajectory(turns: list[Any], greeting: str | None) -> list[dict[str, Any]]:
    """A session's turns (`SimTurn`) as neutral message dicts, tool steps included, for an evaluator."""
    out: list[dict[str, Any]] = [{"role": "assistant", "content": greeting}] if greeting else []
    for t in turns:
        for step in t.tool_steps:
            out.append({"role": "assistant", "content": step.text, "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in step.calls]})
            out += [{"role": "tool", "tool_call_id": c.id, "content": c.result, "error": c.error} for c in step.calls]
        out.append({"role": t.role, "content": t.text})
    return out


class TaskSource(Protocol):
    name: str
    version: str

    def load(self, selector: str) -> list[ToolTask]:
        """The tasks of `selector` (a domain, `domain:split`, `domain:id,id`)."""
        ...

    def environment(self, task: ToolTask) -> ToolEnvironment:
        """A fresh environment for one session of the task."""
        ...

    def agent_prompt(self, task: ToolTask, kind: AgentPrompt) -> str:
        """The agent's system prompt (the benchmark's own, with the resolution steps for `oracle`)."""
        ...

    def user_prompt(self, task: ToolTask) -> str:
        """The system prompt of the source's own user simulator for this task (the free-mode baseline proxy)."""
        ...

    def evaluate(self, task: ToolTask, steps: list[dict[str, Any]], ending: Ending,
                 env: ToolEnvironment | None = None) -> Reward:
        """The source's evaluator on a finished session (`steps`: the conversation as neutral message dicts;
        `env`: the session's environment, in its final state)."""
        ...

    def gold_reward(self, task: ToolTask) -> Reward:
        """What the evaluator gives the task's gold trajectory (its actions, then the information to give)."""
        ...
