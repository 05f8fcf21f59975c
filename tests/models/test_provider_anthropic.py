"""The anthropic provider through the real SDK, against a loopback server speaking the Messages API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from uxbench.data.schema import Message
from uxbench.errors import FatalModelError, RateLimitError, TransientModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.registry import create_model_api
from uxbench.testing.server import BackgroundServer

requires_sdk = pytest.mark.extra("anthropic")

KEY = "ak-test-key-0001"


class Fake:
    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []

    async def messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((dict(request.headers), body))
        last = body["messages"][-1]["content"]
        if "FAIL429" in last:
            err = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
            return web.json_response(err, status=429, headers={"retry-after": "2"})
        for code, kind in ((529, "overloaded_error"), (500, "api_error"), (401, "authentication_error")):
            if f"FAIL{code}" in last:
                return web.json_response(
                    {"type": "error", "error": {"type": kind, "message": "no"}}, status=code
                )
        if "SLOW" in last:
            await asyncio.sleep(3)
        content: list[dict[str, Any]] = []
        if "thinking" in body:
            content.append({"type": "thinking", "thinking": "weighing it", "signature": "sig"})
        content.append({"type": "text", "text": "好"})
        return web.json_response(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 21, "output_tokens": 4},
            }
        )


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[Fake, str]]:
    handler = Fake()
    app = web.Application()
    app.router.add_post("/v1/messages", handler.messages)
    with BackgroundServer(app) as srv:
        yield handler, srv.url


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_TEST_ANTHROPIC", KEY)


def model(url: str, **args: str) -> Any:
    return create_model_api(
        "anthropic:claude-test", {"base_url": url, "api_key_env": "UXBENCH_TEST_ANTHROPIC", **args}
    )


CONVO = [
    Message(role="system", content="You are a judge."),
    Message(role="user", content="hi"),
    Message(role="assistant", content="hello"),
    Message(role="user", content="rate it"),
]


@requires_sdk
async def test_request_and_response_mapping(fake: tuple[Fake, str]) -> None:
    handler, url = fake
    m = model(url)
    out = await m.generate(CONVO, GenerateConfig(temperature=0.2, max_tokens=64, stop=("END",), top_p=0.8))
    await m.aclose()
    headers, body = handler.requests[-1]
    assert body["system"] == "You are a judge."
    assert [x["role"] for x in body["messages"]] == ["user", "assistant", "user"]
    assert body["max_tokens"] == 64 and body["temperature"] == 0.2 and body["top_p"] == 0.8
    assert body["stop_sequences"] == ["END"] and "thinking" not in body
    assert KEY in (headers.get("x-api-key", "") + headers.get("Authorization", ""))
    assert headers.get("x-stainless-retry-count") in (None, "0")
    assert (out.text, out.reasoning, out.finish_reason, out.model) == ("好", None, "end_turn", "claude-test")
    assert (out.usage.input_tokens, out.usage.output_tokens) == (21, 4)
    assert KEY not in repr(m.cache_identity())


@requires_sdk
async def test_thinking_budget_maps_to_reasoning(fake: tuple[Fake, str]) -> None:
    handler, url = fake
    m = model(url, thinking_budget="2048")
    out = await m.generate(CONVO, GenerateConfig(temperature=0.5, max_tokens=100))
    await m.aclose()
    body = handler.requests[-1][1]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048  # the API requires max_tokens above the budget
    assert "temperature" not in body  # thinking forbids a custom temperature
    assert out.reasoning == "weighing it" and out.text == "好"


@requires_sdk
async def test_rate_limit_with_retry_after_and_no_sdk_retries(fake: tuple[Fake, str]) -> None:
    handler, url = fake
    m = model(url)
    before = len(handler.requests)
    with pytest.raises(RateLimitError) as info:
        await m.generate([Message(role="user", content="FAIL429")], GenerateConfig())
    assert info.value.retry_after == 2.0 and info.value.status == 429
    assert len(handler.requests) - before == 1  # max_retries=0: our runtime owns retries
    with pytest.raises(RateLimitError):
        await m.generate([Message(role="user", content="FAIL529")], GenerateConfig())
    with pytest.raises(TransientModelError):
        await m.generate([Message(role="user", content="FAIL500")], GenerateConfig())
    with pytest.raises(FatalModelError, match=r"\$UXBENCH_TEST_ANTHROPIC") as fatal:
        await m.generate([Message(role="user", content="FAIL401")], GenerateConfig())
    assert KEY not in str(fatal.value)
    await m.aclose()


@requires_sdk
async def test_timeout_and_refused_connection(fake: tuple[Fake, str]) -> None:
    _, url = fake
    m = model(url, timeout="0.3")
    with pytest.raises(TransientModelError, match="did not answer"):
        await m.generate([Message(role="user", content="SLOW")], GenerateConfig())
    await m.aclose()
    closed = BackgroundServer(web.Application()).start()
    closed.stop()
    m = model(closed.url)
    with pytest.raises(TransientModelError, match="Connection"):
        await m.generate([Message(role="user", content="x")], GenerateConfig())
    await m.aclose()


@requires_sdk
async def test_missing_key_is_fatal_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UXBENCH_TEST_ANTHROPIC")
    with pytest.raises(FatalModelError, match="UXBENCH_TEST_ANTHROPIC"):
        await model("http://127.0.0.1:9").generate(CONVO, GenerateConfig())


async def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from uxbench.errors import MissingExtraError

    monkeypatch.setitem(__import__("sys").modules, "anthropic", None)  # makes `import anthropic` fail
    with pytest.raises(MissingExtraError, match=r"needs the anthropic extra .*uxbench\[anthropic\]"):
        await model("http://127.0.0.1:9").generate(CONVO, GenerateConfig())
