"""The agent's turn on a tool task: it calls tools until it answers the user with text.

Each model output with tool calls is one `ToolStep`: the calls go to the session's environment (which answers
every call, an error included, as a result the agent reads), and the conversation grows by the calls and their
results before the next generation. Every generation goes through the model layer (limiter, retries, cache;
counted in the session's usage). Too many calls in one reply end the session (`ToolLimit`), as the benchmark's
step limit does.
"""

from __future__ import annotations

from collections.abc import Callable

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.sim.tooltask import ToolEnvironment, ToolResult, ToolStep, ToolStepCall, step_messages
from uxbench.sim.types import Assessment


class ToolLimit(Exception):
    """The agent made more tool calls in one reply than allowed."""

    def __init__(self, steps: list[ToolStep], limit: int) -> None:
        super().__init__(f"the agent made more than {limit} tool calls before answering the user")
        self.steps = steps


async def agent_turn(model: object, messages: list[Message], config: GenerateConfig, env: ToolEnvironment, *,
                     max_calls: int, record: Callable[[ModelOutput], None]) -> tuple[str, list[ToolStep]]:
    """(the reply's text, the tool steps before it). Model errors propagate (the session ends `error`)."""
    steps: list[ToolStep] = []
    convo = list(messages)
    calls = 0
    while True:
        out: ModelOutput = await model.generate(convo, config)  # type: ignore[attr-defined]
        record(out)
        if not out.tool_calls:
            return out.text, steps
        if calls + len(out.tool_calls) > max_calls:
            raise ToolLimit(steps, max_calls)
        calls += len(out.tool_calls)
        made = []
        for call in out.tool_calls:
            if call.raw_arguments is not None:
                result = ToolResult(content=f"Error: the arguments are not a JSON object: {call.raw_arguments[:200]}",
                                    error=True)
            else:
                result = env.call(call.name, call.arguments, call.id)
            made.append(ToolStepCall(id=call.id, name=call.name, arguments=call.arguments,
                                     raw_arguments=call.raw_arguments, result=result.content, error=result.error))
        step = ToolStep(text=out.text, calls=tuple(made))
        steps.append(step)
        convo += step_messages(step)


def tool_task_reading(assessment: Assessment, reply: str) -> Assessment:
    """The rules assessor's reading of a tool task's reply: a question that names none of the user's compiled
    facts asks for something the user was not given as a fact (an order's item ids, a cabin, a date in the
    scenario's prose), and the user says so (`asked_other`), as the benchmark's own user does, instead of taking
    it as a wrong answer that costs patience. The compiled facts are the few values code can find in a scenario;
    an agent that collects the rest by asking is not failing the user."""
    if assessment.failure in ("wrong", "irrelevant") and not assessment.asked_facts and "?" in reply:
        return assessment.model_copy(update={"failure": None, "asked_other": True,
                                             "note": "asks for something the user has no fact for"})
    return assessment
