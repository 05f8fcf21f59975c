"""No secret of a provider's configuration reaches an error text, a model output or the response cache,
against a real loopback server that echoes the request's headers in plain-text pages."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, ModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.model import create_model
from uxbench.models.registry import create_model_api
from uxbench.redact import forget_secrets
from uxbench.runtime.cache import ResponseCache
from uxbench.runtime.retry import RetryPolicy
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

KEY = "sk-test-env-key-0123456789"
HEADER_VALUE = "hdr-secret-abcdef-98765"
PASSWORD = "url-pass-word-4242"
NO_KEY_ENV = "UXBENCH_TEST_NO_SUCH_KEY"
ONE_TRY = RetryPolicy(max_attempts=1)


@pytest.fixture(autouse=True)
def _fresh_secrets() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def secrets_in(text: str) -> list[str]:
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    return [s for s in (KEY, HEADER_VALUE, PASSWORD, basic) if s in text]


@pytest.mark.parametrize("status", [200, 400, 502])
async def test_echoed_headers_never_reach_the_error(monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    # Regression: a non-JSON page echoing the request put `Authorization: Bearer <key>` (and every
    # extra header) into the stored error of each sample and onto stderr.
    monkeypatch.setenv("UXBENCH_TEST_KEY", KEY)
    with LoopbackServer(LoopbackConfig(echo_headers_status=status)) as srv:
        model = create_model("openai:m", {"base_url": srv.base_url, "api_key_env": "UXBENCH_TEST_KEY",
                                          "extra_headers": f'{{"X-Gateway-Token": "{HEADER_VALUE}"}}'},
                             retry=ONE_TRY)
        with pytest.raises(ModelError) as info:
            await model.generate(user("hello"))
        await model.aclose()
        assert srv.stats.last_headers["Authorization"] == f"Bearer {KEY}"  # the page did echo them
    assert "Request received" in str(info.value) and secrets_in(str(info.value)) == []


async def test_echo_fault_marker_in_one_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_TEST_KEY", KEY)
    with LoopbackServer() as srv:
        api = create_model_api("openai:m", {"base_url": srv.base_url, "api_key_env": "UXBENCH_TEST_KEY"})
        with pytest.raises(ModelError) as info:
            await api.generate(user("[[FAULT:echo]] hi"), GenerateConfig())
        ok = await api.generate(user("[[SAY:fine]]"), GenerateConfig())
        await api.aclose()
    assert "HTTP 400" in str(info.value) and KEY not in str(info.value) and ok.text == "fine"


async def test_an_output_echoing_the_key_is_scrubbed_before_the_cache(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("UXBENCH_TEST_KEY", KEY)
    cache = ResponseCache(tmp_path / "cache.sqlite")

    def leaky(messages: list[dict[str, object]], body: dict[str, object]) -> str:
        return f"your key is {KEY}"

    with LoopbackServer(LoopbackConfig(responder=leaky)) as srv:
        model = create_model("openai:m", {"base_url": srv.base_url, "api_key_env": "UXBENCH_TEST_KEY"},
                             cache=cache)
        out = await model.generate(user("what is my key?"))
        await model.aclose()
    cache.close()
    assert KEY not in out.text and out.text.startswith("your key is")
    assert KEY.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_url_credentials_with_an_api_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression: this crashed at the first request with "Cannot combine AUTHORIZATION header with AUTH
    # argument or credentials encoded in URL", a traceback holding the URL.
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigError) as info:
        create_model_api("openai:m", {"base_url": f"http://alice:{PASSWORD}@127.0.0.1:9/v1"})
    message = str(info.value)
    assert "user name and password" in message and "OPENAI_API_KEY" in message
    assert secrets_in(message) == []
    with pytest.raises(ConfigError, match="Authorization"):
        create_model_api("openai:m", {"extra_headers": '{"Authorization": "Bearer other-token-x"}'})


async def test_url_credentials_alone_are_sent_as_basic_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackServer() as srv:
        base = srv.base_url.replace("http://", f"http://alice:{PASSWORD}@")
        api = create_model_api("openai:m", {"base_url": base, "api_key_env": NO_KEY_ENV})
        out = await api.generate(user("[[SAY:ok]]"), GenerateConfig())
        identity = str(api.cache_identity())
        with pytest.raises(ModelError) as info:
            await api.generate(user("[[FAULT:echo]]"), GenerateConfig())
        await api.aclose()
        sent = srv.stats.last_headers["Authorization"]
    assert out.text == "ok"
    assert base64.b64decode(sent.removeprefix("Basic ")).decode() == f"alice:{PASSWORD}"
    assert secrets_in(identity + str(info.value) + repr(api.base_url)) == []
