"""The scripted plan agents (`scripted:reference-agent`, `scripted:weak-agent`): what they ask, confirm and call,
worked out from the conversation alone."""

from __future__ import annotations

import json

import pytest

from uxbench.data.schema import Message, ToolCall
from uxbench.errors import FatalModelError
from uxbench.models.api import GenerateConfig, ToolSpec
from uxbench.models.registry import create_model_api

STEPS = [{"name": "find_user", "arguments": {"zip": "19122"}, "read_only": True},
         {"name": "cancel", "arguments": {"order_id": "#W1", "user_id": "yusuf_9"}, "read_only": False}]
SYSTEM = ("Policy.\n<resolution_steps>\n" + "\n".join(json.dumps(s) for s in STEPS) +
          "\n</resolution_steps>\n<information_to_communicate>[\"refund 10 USD\"]</information_to_communicate>")
TOOLS = GenerateConfig(tools=(ToolSpec(name="find_user"), ToolSpec(name="cancel")))


async def answer(model: str, convo: list[Message]) -> tuple[str, list[ToolCall]]:
    out = await create_model_api(model).generate([Message(role="system", content=SYSTEM), *convo], TOOLS)
    return out.text, out.tool_calls


def result(call: ToolCall, content: str) -> list[Message]:
    return [Message(role="assistant", content="", tool_calls=(call,)),
            Message(role="tool", content=content, tool_call_id=call.id, name=call.name)]


async def test_reference_agent_asks_calls_confirms_and_reports() -> None:
    convo = [Message(role="user", content="Please cancel my order #W1.")]
    text, calls = await answer("scripted:reference-agent", convo)
    assert text == "Could you please tell me your zip?" and not calls
    convo += [Message(role="assistant", content=text), Message(role="user", content="My zip code is 19122.")]
    text, calls = await answer("scripted:reference-agent", convo)
    assert [c.name for c in calls] == ["find_user"] and calls[0].arguments == {"zip": "19122"}
    convo += result(calls[0], '"yusuf_9"')
    text, calls = await answer("scripted:reference-agent", convo)
    assert text.startswith("Please give me your confirmation to proceed: I will cancel with order_id #W1")
    convo += [Message(role="assistant", content=text), Message(role="user", content="Yes, go ahead.")]
    text, calls = await answer("scripted:reference-agent", convo)
    assert [c.name for c in calls] == ["cancel"]
    convo += result(calls[0], '{"status": "cancelled"}')
    text, calls = await answer("scripted:reference-agent", convo)
    assert not calls and text.startswith("All done") and "refund 10 USD" in text


async def test_volunteered_lookups_are_skipped_and_a_no_skips_the_write() -> None:
    convo = [Message(role="assistant", content="Hi! How can I help you today?"),  # tau2's greeting asks nothing
             Message(role="user", content="Cancel order #W1. My zip code is 19122, my user id is yusuf_9.")]
    text, calls = await answer("scripted:reference-agent", convo)
    assert text.startswith("Please give me your confirmation")  # find_user left out: its input was volunteered
    convo += [Message(role="assistant", content=text), Message(role="user", content="No, I'd rather keep it.")]
    text, calls = await answer("scripted:reference-agent", convo)
    assert not calls and text.startswith("All done")


async def test_weak_agent_acts_before_asking() -> None:
    text, calls = await answer("scripted:weak-agent", [Message(role="user", content="Cancel order #W1.")])
    assert [c.name for c in calls] == ["find_user", "cancel"] and not text


async def test_without_steps_the_agent_says_what_it_needs() -> None:
    api = create_model_api("scripted:reference-agent")
    with pytest.raises(FatalModelError, match="--agent-prompt oracle"):
        await api.generate([Message(role="user", content="hi")], TOOLS)
