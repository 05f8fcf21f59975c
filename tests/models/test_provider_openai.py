"""The openai provider against a real loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, FatalModelError, RateLimitError, TransientModelError
from uxbench.models.api import GenerateConfig, ModelAPI
from uxbench.models.registry import create_model_api
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer
from uxbench.testing.server import BackgroundServer

NO_KEY_ENV = "UXBENCH_TEST_NO_SUCH_KEY"


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(LoopbackConfig(timeout_sleep_s=3.0)) as srv:
        yield srv


@pytest.fixture
async def make(server: LoopbackServer) -> AsyncIterator[Callable[..., ModelAPI]]:
    made: list[ModelAPI] = []

    def factory(**args: str) -> ModelAPI:
        merged = {"base_url": server.base_url, "api_key_env": NO_KEY_ENV, **args}
        model = create_model_api("openai:test-model", merged)
        made.append(model)
        return model

    yield factory
    for model in made:
        await model.aclose()


def user(text: str) -> list[Message]:
    return [Message(role="system", content="You judge."), Message(role="user", content=text)]


async def test_text_usage_and_metadata(make: Callable[..., ModelAPI]) -> None:
    out = await make().generate(user("plain question one"), GenerateConfig())
    assert out.text == "好"
    assert out.reasoning is None
    assert out.finish_reason == "stop"
    assert out.model == "test-model"
    assert out.usage.input_tokens > 0 and out.usage.output_tokens > 0
    assert out.latency_s > 0
    assert out.logprobs is None


async def test_say_marker_and_reasoning_content(make: Callable[..., ModelAPI]) -> None:
    out = await make().generate(user("[[SAY:差]] [[THINK:the reply ignored the question]]"), GenerateConfig())
    assert out.text == "差"
    assert out.reasoning == "the reply ignored the question"
    assert out.usage.reasoning_tokens > 0


async def test_inline_think_block_becomes_reasoning(make: Callable[..., ModelAPI]) -> None:
    out = await make().generate(user("[[SAY:<think>check tone</think>\n差]]"), GenerateConfig())
    assert (out.text, out.reasoning) == ("差", "check tone")


async def test_reasoning_field_variant() -> None:
    with LoopbackServer(LoopbackConfig(reasoning_field="reasoning")) as srv:
        model = create_model_api("openai:m", {"base_url": srv.base_url, "api_key_env": NO_KEY_ENV})
        out = await model.generate(user("[[THINK:step by step]] [[SAY:ok]]"), GenerateConfig())
        await model.aclose()
    assert (out.text, out.reasoning) == ("ok", "step by step")


async def test_logprobs_parsed(make: Callable[..., ModelAPI]) -> None:
    cfg = GenerateConfig(top_logprobs=4, logprob_tokens=1)
    out = await make().generate(user("[[SAY:好]] [[P:0.8]] logprob case"), cfg)
    assert out.logprobs is not None and len(out.logprobs) == 1
    first = out.logprobs[0]
    assert first.token == "好"
    assert first.logprob == pytest.approx(math.log(0.8))
    assert [t.token for t in first.top[:2]] == ["好", "差"]
    assert len(first.top) == 4
    values = [t.logprob for t in first.top]
    assert values == sorted(values, reverse=True)


async def test_logprob_tokens_limits_positions(make: Callable[..., ModelAPI]) -> None:
    cfg = GenerateConfig(top_logprobs=2, logprob_tokens=3)
    out = await make().generate(user("[[SAY:the answer is good]]"), cfg)
    assert out.logprobs is not None
    assert [lp.token for lp in out.logprobs] == ["the", " answer", " is"]


async def test_request_body_mapping(make: Callable[..., ModelAPI], server: LoopbackServer) -> None:
    cfg = GenerateConfig(
        temperature=0.3,
        max_tokens=50,
        top_p=0.9,
        stop=("END",),
        seed=7,
        reasoning_effort="low",
        top_logprobs=2,
        extra_body={"chat_template_kwargs": {"enable_thinking": False}},
    )
    await make(max_tokens_field="max_completion_tokens").generate(user("mapping check"), cfg)
    body = server.stats.last_body
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "You judge."},
        {"role": "user", "content": "mapping check"},
    ]
    assert body["temperature"] == 0.3 and body["top_p"] == 0.9 and body["seed"] == 7
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body
    assert body["stop"] == ["END"] and body["reasoning_effort"] == "low"
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


async def test_unset_settings_are_not_sent(make: Callable[..., ModelAPI], server: LoopbackServer) -> None:
    await make().generate(user("minimal body"), GenerateConfig())
    assert set(server.stats.last_body) == {"model", "messages"}


async def test_max_tokens_truncation_reports_length(make: Callable[..., ModelAPI]) -> None:
    out = await make().generate(user("[[SAY:one two three four]]"), GenerateConfig(max_tokens=2))
    assert out.text == "one two" and out.finish_reason == "length"


async def test_rate_limit_then_success(make: Callable[..., ModelAPI], server: LoopbackServer) -> None:
    model, msgs = make(), user("[[FAULT:429:2]] rate limited prompt")
    for _ in range(2):
        with pytest.raises(RateLimitError) as info:
            await model.generate(msgs, GenerateConfig())
        assert info.value.retry_after == 1.0
        assert info.value.status == 429 and info.value.retryable
    assert (await model.generate(msgs, GenerateConfig())).text == "好"
    assert server.attempts_for([m.model_dump(include={"role", "content"}) for m in msgs]) == 3


@pytest.mark.parametrize(
    ("marker", "status"),
    [
        ("[[FAULT:500]]", 500),
        ("[[FAULT:503]]", 503),
        ("[[FAULT:malformed]]", None),
        ("[[FAULT:empty]]", None),
    ],
)
async def test_transient_failures_then_success(
    make: Callable[..., ModelAPI], marker: str, status: int | None
) -> None:
    model, msgs = make(), user(f"{marker} transient prompt")
    expected = RateLimitError if status == 503 else TransientModelError
    with pytest.raises(expected) as info:
        await model.generate(msgs, GenerateConfig())
    assert info.value.retryable and info.value.status == status
    assert (await model.generate(msgs, GenerateConfig())).text == "好"


async def test_timeout_is_transient(make: Callable[..., ModelAPI]) -> None:
    with pytest.raises(TransientModelError, match=r"did not answer within 0\.3 s"):
        await make(timeout="0.3").generate(user("[[FAULT:timeout]] slow prompt"), GenerateConfig())


@pytest.mark.parametrize(
    ("marker", "hint"),
    [("[[FAULT:400]]", "HTTP 400"), ("[[FAULT:401]]", f"${NO_KEY_ENV}"), ("[[FAULT:404]]", "base URL")],
)
async def test_fatal_statuses_say_what_to_check(
    make: Callable[..., ModelAPI], marker: str, hint: str
) -> None:
    model = make()
    for _ in range(2):  # always fails: 4xx faults have no attempt limit
        with pytest.raises(FatalModelError) as info:
            await model.generate(user(f"{marker} fatal prompt"), GenerateConfig())
        assert hint in str(info.value) and not info.value.retryable


async def test_no_authorization_header_without_key(
    make: Callable[..., ModelAPI], server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(NO_KEY_ENV, raising=False)
    await make().generate(user("no key"), GenerateConfig())
    assert "Authorization" not in server.stats.last_headers


async def test_key_from_named_env_var_and_never_in_identity(
    make: Callable[..., ModelAPI], server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UXBENCH_TEST_KEY", "sk-test-secret-123")
    model = make(api_key_env="UXBENCH_TEST_KEY")
    await model.generate(user("with key"), GenerateConfig())
    assert server.stats.last_headers["Authorization"] == "Bearer sk-test-secret-123"
    assert "sk-test-secret-123" not in repr(model.cache_identity()) + model.connection_key()
    assert model.cache_identity() == {
        "provider": "openai",
        "base_url": server.base_url,
        "model": "test-model",
        "reasoning_effort": None,
        "extra_body": {},
    }
    # args that change the answer change the identity (and so the cache key)
    assert make(reasoning_effort="high").cache_identity() != model.cache_identity()


async def test_key_is_scrubbed_from_error_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    async def echo_auth(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        return web.json_response({"error": {"message": f"bad credentials {auth}"}}, status=401)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", echo_auth)
    monkeypatch.setenv("UXBENCH_TEST_KEY", "sk-leaky-secret-456")
    with BackgroundServer(app) as srv:
        model = create_model_api("openai:m", {"base_url": srv.url + "/v1", "api_key_env": "UXBENCH_TEST_KEY"})
        with pytest.raises(FatalModelError) as info:
            await model.generate(user("x"), GenerateConfig())
        await model.aclose()
    assert "sk-leaky-secret-456" not in str(info.value)
    assert "$UXBENCH_TEST_KEY" in str(info.value)


async def test_connection_refused_is_transient() -> None:
    srv = BackgroundServer(web.Application()).start()
    url = srv.url
    srv.stop()  # the port is now closed
    model = create_model_api("openai:m", {"base_url": url + "/v1", "api_key_env": NO_KEY_ENV})
    with pytest.raises(TransientModelError, match="base_url"):
        await model.generate(user("x"), GenerateConfig())
    await model.aclose()


async def test_concurrent_calls_overlap_on_the_wire() -> None:
    with LoopbackServer(LoopbackConfig(latency_ms=30)) as srv:
        model = create_model_api("openai:m", {"base_url": srv.base_url, "api_key_env": NO_KEY_ENV})
        outs = await asyncio.gather(
            *[model.generate(user(f"[[SAY:{i}]]"), GenerateConfig()) for i in range(64)]
        )
        await model.aclose()
        assert [o.text for o in outs] == [str(i) for i in range(64)]
        assert srv.stats.max_in_flight > 8


def test_max_concurrency_is_not_a_provider_argument() -> None:
    # One knob for concurrency: --concurrency (the runtime limiter), never a second one in the provider.
    with pytest.raises(ConfigError, match="--concurrency"):
        create_model_api("openai:m", {"api_key_env": NO_KEY_ENV, "max_concurrency": "4"})


async def test_runtime_limiter_bounds_the_connections() -> None:
    from uxbench.models.model import create_model

    with LoopbackServer(LoopbackConfig(latency_ms=20)) as srv:
        model = create_model("openai:limited", {"base_url": srv.base_url, "api_key_env": NO_KEY_ENV},
                             max_concurrency=4)
        await asyncio.gather(*[model.generate(user(f"q{i}"), GenerateConfig()) for i in range(24)])
        await model.aclose()
        assert srv.stats.requests == 24
        assert 1 < srv.stats.max_in_flight <= 4


def test_works_across_event_loops(server: LoopbackServer) -> None:
    model = create_model_api("openai:m", {"base_url": server.base_url, "api_key_env": NO_KEY_ENV})
    first = asyncio.run(model.generate(user("loop one"), GenerateConfig()))
    second = asyncio.run(model.generate(user("loop two"), GenerateConfig()))
    assert first.text == second.text == "好"


def test_identity_and_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://example.invalid:9/v1/")
    model = create_model_api("openai:qwen3:8b", {})
    assert model.connection_key() == "openai:http://example.invalid:9/v1:qwen3:8b"
    assert model.cache_identity()["base_url"] == "http://example.invalid:9/v1"
    bad: list[dict[str, Any]] = [
        {"base_url": "localhost:8000"},
        {"timeout": "-1"},
        {"max_tokens_field": "max_new_tokens"},
        {"extra_headers": "[1, 2]"},
        {"extra_body": "{not json"},
    ]
    for args in bad:
        with pytest.raises(ConfigError):
            create_model_api("openai:m", args)
