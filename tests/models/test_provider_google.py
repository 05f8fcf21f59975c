"""The google provider through the real google-genai SDK, against a loopback generateContent server."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from uxbench.data.schema import Message
from uxbench.errors import FatalModelError, MissingExtraError, RateLimitError, TransientModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.registry import create_model_api
from uxbench.testing.server import BackgroundServer

requires_sdk = pytest.mark.extra("google")

KEY = "gk-test-key-0002"
# The SDK's own aiohttp subclass warns on import; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")


class Fake:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    async def generate(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((request.path, dict(request.headers), body))
        last = body["contents"][-1]["parts"][0]["text"]
        if "FAIL429" in last:
            err = {"error": {"code": 429, "message": "quota exceeded", "status": "RESOURCE_EXHAUSTED"}}
            return web.json_response(err, status=429, headers={"Retry-After": "3"})
        for code, status in ((500, "INTERNAL"), (403, "PERMISSION_DENIED"), (404, "NOT_FOUND")):
            if f"FAIL{code}" in last:
                return web.json_response(
                    {"error": {"code": code, "message": "no", "status": status}}, status=code
                )
        if "SLOW" in last:
            await asyncio.sleep(3)
        if "BLOCKED" in last:
            return web.json_response({"promptFeedback": {"blockReason": "SAFETY"}})
        parts: list[dict[str, Any]] = [{"text": "considering", "thought": True}, {"text": "good"}]
        top = [{"token": "good", "logProbability": -0.1}, {"token": "bad", "logProbability": -2.4}]
        return web.json_response(
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": parts},
                        "finishReason": "STOP",
                        "logprobsResult": {
                            "topCandidates": [{"candidates": top}],
                            "chosenCandidates": [{"token": "good", "logProbability": -0.1}],
                        },
                    }
                ],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 3, "thoughtsTokenCount": 7},
                "modelVersion": "gemini-test-001",
            }
        )


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[Fake, str]]:
    handler = Fake()
    app = web.Application()
    app.router.add_post("/{tail:.*}", handler.generate)
    with BackgroundServer(app) as srv:
        yield handler, srv.url


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_TEST_GOOGLE", KEY)


def model(url: str, **args: str) -> Any:
    return create_model_api(
        "google:gemini-test", {"base_url": url, "api_key_env": "UXBENCH_TEST_GOOGLE", **args}
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
    m = model(url, thinking_budget="512")
    cfg = GenerateConfig(temperature=0.2, max_tokens=64, stop=("END",), seed=5, top_logprobs=2)
    out = await m.generate(CONVO, cfg)
    await m.aclose()
    path, headers, body = handler.requests[-1]
    assert path.endswith("/models/gemini-test:generateContent")
    assert headers.get("x-goog-api-key") == KEY
    assert body["systemInstruction"]["parts"][0]["text"] == "You are a judge."
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    gen = body["generationConfig"]
    assert gen["temperature"] == 0.2 and gen["maxOutputTokens"] == 64 and gen["seed"] == 5
    assert gen["stopSequences"] == ["END"] and gen["responseLogprobs"] is True and gen["logprobs"] == 2
    thinking = gen["thinkingConfig"]
    assert (thinking.get("thinkingBudget") or thinking.get("thinking_budget")) == 512
    assert out.text == "good" and out.reasoning == "considering"
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.reasoning_tokens) == (10, 10, 7)
    assert out.model == "gemini-test-001" and out.finish_reason == "STOP"
    assert out.logprobs is not None and out.logprobs[0].token == "good"
    assert [t.token for t in out.logprobs[0].top] == ["good", "bad"]
    assert KEY not in repr(m.cache_identity())


@requires_sdk
async def test_blocked_prompt_is_an_empty_answer(fake: tuple[Fake, str]) -> None:
    _, url = fake
    m = model(url)
    out = await m.generate([Message(role="user", content="BLOCKED")], GenerateConfig())
    await m.aclose()
    assert out.text == "" and out.finish_reason is not None and "SAFETY" in out.finish_reason


@requires_sdk
async def test_errors_map_and_sdk_does_not_retry(fake: tuple[Fake, str]) -> None:
    handler, url = fake
    m = model(url)
    before = len(handler.requests)
    with pytest.raises(RateLimitError) as info:
        await m.generate([Message(role="user", content="FAIL429")], GenerateConfig())
    assert info.value.retry_after == 3.0 and info.value.status == 429
    assert len(handler.requests) - before == 1
    with pytest.raises(TransientModelError):
        await m.generate([Message(role="user", content="FAIL500")], GenerateConfig())
    with pytest.raises(FatalModelError, match=r"\$UXBENCH_TEST_GOOGLE"):
        await m.generate([Message(role="user", content="FAIL403")], GenerateConfig())
    with pytest.raises(FatalModelError, match="model name"):
        await m.generate([Message(role="user", content="FAIL404")], GenerateConfig())
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
async def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UXBENCH_TEST_GOOGLE")
    with pytest.raises(FatalModelError, match="UXBENCH_TEST_GOOGLE"):
        await model("http://127.0.0.1:9").generate(CONVO, GenerateConfig())


async def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    with pytest.raises(MissingExtraError, match=r"needs the google extra .*uxbench\[google\]"):
        await model("http://127.0.0.1:9").generate(CONVO, GenerateConfig())
