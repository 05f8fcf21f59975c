"""What the providers share about tool calls: reading a model's arguments, and the scripted tool agent.

The scripted tool agent answers the way a tool-using model does, from markers in the conversation, so tool-call
round trips can be tested end to end without a model (the `scripted` provider and the loopback server both use
it): `[[CALL:get_order]]` or `[[CALL:get_order {"order_id": "A1"}]]` in the last user message makes it call that
tool (several markers: several calls in one message; a tool that was not offered is not called), and a
conversation that ends with tool results gets a text answer quoting them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from uxbench.data.schema import Message
from uxbench.models.api import ToolSpec

CALL_RE = re.compile(r"\[\[CALL:([A-Za-z0-9_.\-]+)(?:\s+(\{.*?\}))?\]\]", re.DOTALL)
RESULT_CHARS = 400
"""How much of each tool result the scripted agent quotes."""


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments, None) from a JSON object (text or already decoded); ({}, the text) when it is not one."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    text = raw if isinstance(raw, str) else str(raw)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}, text
    return (value, None) if isinstance(value, dict) else ({}, text)


def dump_arguments(arguments: dict[str, Any], raw: str | None = None) -> str:
    """The arguments as JSON text (OpenAI's wire format), or the model's own text when it was not JSON."""
    return raw if raw is not None else orjson.dumps(arguments).decode()


def openai_message(m: Message) -> dict[str, Any]:
    """A message with tool business in the wire format: assistant `tool_calls`, or a `tool` result."""
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    calls = [{"id": c.id, "type": "function",
              "function": {"name": c.name, "arguments": dump_arguments(c.arguments, c.raw_arguments)}}
             for c in m.tool_calls]
    # content as a string, "" when the message only calls tools: llama.cpp's server refuses null and its chat
    # templates read the key (OpenAI takes either)
    return {"role": m.role, "content": m.content or "", "tool_calls": calls}


def openai_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}} for t in tools]


@dataclass
class ScriptedReply:
    """What the scripted tool agent says: text, or tool calls (name, arguments)."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def scripted_tool_reply(messages: Sequence[dict[str, Any]], tool_names: Sequence[str]) -> ScriptedReply | None:
    """The scripted tool agent's answer to OpenAI-shaped messages (role, content, ...), or None when the
    conversation has no tool business (the caller answers as usual)."""
    if not messages:
        return None
    last = messages[-1]
    if last.get("role") == "tool":
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            content = str(message.get("content") or "")
            results.append(f"{message.get('name') or 'tool'}: {content[:RESULT_CHARS]}")
        return ScriptedReply(text="Tool results: " + " | ".join(reversed(results)))
    if last.get("role") != "user" or not tool_names:
        return None
    calls = []
    for name, raw in CALL_RE.findall(str(last.get("content") or "")):
        if name in tool_names:
            arguments, bad = parse_arguments(raw or "{}")
            calls.append((name, arguments if bad is None else {}))
    return ScriptedReply(calls=calls) if calls else None
