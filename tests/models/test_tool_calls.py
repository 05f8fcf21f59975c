"""Tool calls through the model layer: a round trip (the model calls a tool, gets its result, answers) in each
provider's own wire format, against real HTTP servers on loopback; the scripted tool agent; caching and usage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from extra_skip import require_extra
from uxbench.data.schema import Message, ToolCall
from uxbench.models.api import GenerateConfig, ToolSpec
from uxbench.models.model import Model, create_model
from uxbench.models.registry import create_model_api
from uxbench.runtime.cache import ResponseCache
from uxbench.testing import LoopbackServer
from uxbench.testing.server import BackgroundServer

ORDER_TOOL = ToolSpec(name="get_order", description="Look an order up by its id.",
                      parameters={"type": "object", "properties": {"order_id": {"type": "string"}},
                                  "required": ["order_id"]})
TOOLS = GenerateConfig(tools=(ORDER_TOOL,), tool_choice="auto")
ASK = Message(role="user", content='Where is my order? [[CALL:get_order {"order_id": "A1"}]]')
RESULT = '{"order_id": "A1", "status": "shipped"}'


def follow_up(call: ToolCall) -> list[Message]:
    """The conversation after the model's call: its message, then the tool's result."""
    return [ASK, Message(role="assistant", content="", tool_calls=(call,)),
            Message(role="tool", content=RESULT, tool_call_id=call.id, name=call.name)]


# -- OpenAI-compatible (the loopback server) ----------------------------------------------------------------
async def test_openai_round_trip_in_the_wire_format() -> None:
    with LoopbackServer() as srv:
        api = create_model_api("openai:loopback", {"base_url": srv.base_url})
        out = await api.generate([ASK], TOOLS)
        body = srv.stats.last_body
        assert body["tools"] == [{"type": "function", "function": {
            "name": "get_order", "description": "Look an order up by its id.", "parameters": ORDER_TOOL.parameters}}]
        assert body["tool_choice"] == "auto"
        assert out.finish_reason == "tool_calls" and out.text == ""
        [call] = out.tool_calls
        assert call.name == "get_order" and call.arguments == {"order_id": "A1"} and call.id
        final = await api.generate(follow_up(call), TOOLS)
        sent = srv.stats.last_body["messages"]
        assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": "get_order", "arguments": '{"order_id":"A1"}'}}]}
        assert sent[2] == {"role": "tool", "tool_call_id": call.id, "content": RESULT}
        assert final.tool_calls == [] and "shipped" in final.text
        await api.aclose()


async def test_unparseable_arguments_are_kept_for_the_error() -> None:
    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
        return {"content": None, "tool_calls": [{"name": "get_order", "arguments": '{"order_id": A1'}]}

    from uxbench.testing import LoopbackConfig

    with LoopbackServer(LoopbackConfig(responder=respond)) as srv:
        api = create_model_api("openai:loopback", {"base_url": srv.base_url})
        out = await api.generate([ASK], TOOLS)
        await api.aclose()
    [call] = out.tool_calls
    assert call.arguments == {} and call.raw_arguments == '{"order_id": A1'


async def test_tool_calls_are_cached_counted_and_keyed_by_the_tools(tmp_path: Path) -> None:
    with LoopbackServer() as srv:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        model: Model = create_model("openai:loopback", {"base_url": srv.base_url}, cache=cache)
        first = await model.generate([ASK], TOOLS)
        again = await model.generate([ASK], TOOLS)
        assert srv.stats.requests == 1 and again.cached and again.tool_calls == first.tool_calls
        other = GenerateConfig(tools=(ORDER_TOOL.model_copy(update={"description": "another"}),))
        await model.generate([ASK], other)  # other tools: another request
        assert srv.stats.requests == 2
        # the tool result enters the key: another result, another answer
        call = first.tool_calls[0]
        answer = await model.generate(follow_up(call), TOOLS)
        changed = [*follow_up(call)[:2], Message(role="tool", content="{}", tool_call_id=call.id, name=call.name)]
        answer2 = await model.generate(changed, TOOLS)
        assert srv.stats.requests == 4 and answer.text != answer2.text
        stats = model.usage.models[model.spec]
        assert stats.calls == 4 and stats.output_tokens > 0 and stats.cache_hits == 1
        await model.aclose()
        cache.close()


async def test_text_conversations_keep_their_cache_keys() -> None:
    """Adding the tool fields to messages changed no key of a plain conversation (caches stay warm)."""
    from uxbench.models.model import message_key_dict

    assert message_key_dict(Message(role="user", content="hi")) == {"role": "user", "content": "hi"}


# -- scripted tool agent ---------------------------------------------------------------------------------------
async def test_scripted_tool_agent() -> None:
    api = create_model_api("scripted:echo")
    out = await api.generate([ASK], TOOLS)
    [call] = out.tool_calls
    assert call.name == "get_order" and call.arguments == {"order_id": "A1"}
    final = await api.generate(follow_up(call), TOOLS)
    assert "shipped" in final.text and not final.tool_calls
    no_tool = await api.generate([Message(role="user", content="[[CALL:delete_all]] hi")], TOOLS)
    assert not no_tool.tool_calls  # a tool that was not offered is never called


# -- Anthropic tool use (the SDK against a loopback Messages API) ----------------------------------------------
class AnthropicFake:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        last = body["messages"][-1]
        if isinstance(last["content"], list) and last["content"][0]["type"] == "tool_result":
            content = [{"type": "text", "text": "Your order is " + last["content"][0]["content"]}]
            stop = "end_turn"
        else:
            content = [{"type": "text", "text": "Let me look."},
                       {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": "A1"}}]
            stop = "tool_use"
        return web.json_response({"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                                  "content": content, "stop_reason": stop, "stop_sequence": None,
                                  "usage": {"input_tokens": 30, "output_tokens": 12}})


@pytest.fixture
def anthropic_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[AnthropicFake, str]]:
    require_extra("anthropic")
    monkeypatch.setenv("UXBENCH_TEST_ANTHROPIC", "ak-test-key-0001")
    handler = AnthropicFake()
    app = web.Application()
    app.router.add_post("/v1/messages", handler.messages)
    with BackgroundServer(app) as srv:
        yield handler, srv.url


async def test_anthropic_tool_use_round_trip(anthropic_fake: tuple[AnthropicFake, str]) -> None:
    handler, url = anthropic_fake
    api = create_model_api("anthropic:claude-test", {"base_url": url, "api_key_env": "UXBENCH_TEST_ANTHROPIC"})
    out = await api.generate([Message(role="system", content="Be brief."), ASK], TOOLS)
    sent = handler.bodies[-1]
    assert sent["tools"] == [{"name": "get_order", "description": "Look an order up by its id.",
                              "input_schema": ORDER_TOOL.parameters}]
    assert sent["tool_choice"] == {"type": "auto"} and sent["system"] == "Be brief."
    [call] = out.tool_calls
    assert (call.id, call.name, call.arguments) == ("toolu_1", "get_order", {"order_id": "A1"})
    assert out.text == "Let me look." and out.finish_reason == "tool_use"
    assistant = Message(role="assistant", content=out.text, tool_calls=(call,))
    final = await api.generate([ASK, assistant, Message(role="tool", content=RESULT, tool_call_id="toolu_1",
                                                        name="get_order")], TOOLS)
    await api.aclose()
    sent = handler.bodies[-1]["messages"]
    assert sent[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"order_id": "A1"}}]}
    assert sent[2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                    "content": RESULT}]}
    assert "shipped" in final.text and final.tool_calls == []


def test_anthropic_consecutive_results_share_one_user_message() -> None:
    from uxbench.models.providers.anthropic import split_system

    calls = (ToolCall(id="a", name="t"), ToolCall(id="b", name="t"))
    _, rest = split_system([ASK, Message(role="assistant", content="", tool_calls=calls),
                            Message(role="tool", content="1", tool_call_id="a"),
                            Message(role="tool", content="2", tool_call_id="b")])
    assert [m["role"] for m in rest] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in rest[2]["content"]] == ["a", "b"]
    assert rest[1]["content"][0]["type"] == "tool_use"  # no empty text block


# -- Google function calling (the google-genai SDK against a loopback generateContent) -------------------------
class GoogleFake:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def generate(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        part = body["contents"][-1]["parts"][0]
        if "functionResponse" in part:
            parts: list[dict[str, Any]] = [{"text": "Status: " + part["functionResponse"]["response"]["result"]}]
        else:
            parts = [{"functionCall": {"id": "fc_1", "name": "get_order", "args": {"order_id": "A1"}}}]
        return web.json_response({"candidates": [{"content": {"role": "model", "parts": parts},
                                                  "finishReason": "STOP"}],
                                  "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5},
                                  "modelVersion": "gemini-test-001"})


@pytest.fixture
def google_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[GoogleFake, str]]:
    require_extra("google")
    monkeypatch.setenv("UXBENCH_TEST_GOOGLE", "gk-test-key-0002")
    handler = GoogleFake()
    app = web.Application()
    app.router.add_post("/{tail:.*}", handler.generate)
    with BackgroundServer(app) as srv:
        yield handler, srv.url


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
async def test_google_function_calling_round_trip(google_fake: tuple[GoogleFake, str]) -> None:
    handler, url = google_fake
    api = create_model_api("google:gemini-test", {"base_url": url, "api_key_env": "UXBENCH_TEST_GOOGLE"})
    out = await api.generate([ASK], GenerateConfig(tools=(ORDER_TOOL,), tool_choice="required"))
    sent = handler.bodies[-1]
    [declaration] = sent["tools"][0]["functionDeclarations"]
    # the SDK sends the schema under its proto field name (the API reads both spellings of proto JSON)
    schema = declaration.get("parametersJsonSchema") or declaration.get("parameters_json_schema")
    assert declaration["name"] == "get_order" and schema == ORDER_TOOL.parameters
    assert sent["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    [call] = out.tool_calls
    assert (call.id, call.name, call.arguments) == ("fc_1", "get_order", {"order_id": "A1"}) and out.text == ""
    final = await api.generate(follow_up(call), TOOLS)
    await api.aclose()
    contents = handler.bodies[-1]["contents"]
    assert contents[1] == {"role": "model", "parts": [
        {"functionCall": {"id": "fc_1", "name": "get_order", "args": {"order_id": "A1"}}}]}
    assert contents[2] == {"role": "user", "parts": [
        {"functionResponse": {"id": "fc_1", "name": "get_order", "response": {"result": RESULT}}}]}
    assert "shipped" in final.text and final.tool_calls == []
