"""The scripted plan agents (`models/providers/_plan_agent.py`) behind the loopback server: a tool-task agent served
over HTTP in the OpenAI format, for tests and benchmarks of tool tasks with the `openai` provider.

    with LoopbackServer(LoopbackConfig(responder=plan_agent_responder("reference"), latency_ms=100)) as srv:
        ...  uxbench sim run --tasks tau2:airline --agent-prompt oracle -m openai:agent -M base_url=<srv.base_url>
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from uxbench.models.providers._plan_agent import AgentStyle, plan_reply


def plan_agent_responder(
    style: AgentStyle = "reference",
) -> Callable[[list[dict[str, Any]], dict[str, Any]], str | dict[str, Any]]:
    """A `LoopbackConfig.responder` answering as the scripted plan agent of `style`."""

    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str | dict[str, Any]:
        names = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        reply = plan_reply(messages, names, style)
        if reply.calls:
            return {"content": None, "tool_calls": [{"name": n, "arguments": a} for _id, n, a in reply.calls]}
        return reply.text

    return respond
