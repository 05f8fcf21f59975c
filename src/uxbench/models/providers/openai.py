"""Any OpenAI-compatible `/chat/completions` endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp, DeepSeek).

Uses aiohttp directly: httpx (what the `openai` SDK uses) collapsed above ~32 concurrent requests on
our machines, and a harness at 256 concurrent calls cannot spend more than a fraction of a
millisecond of CPU per call. So: one keep-alive session per event loop, prebuilt headers, orjson,
and no validation of the raw body beyond the fields we read.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import time
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp
import orjson
from pydantic import Field, PositiveFloat, TypeAdapter, model_validator

from uxbench.data.schema import Message, ToolCall
from uxbench.errors import ConfigError, FatalModelError, ModelTimeoutError, TransientModelError
from uxbench.models.api import (
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ProviderArgs,
    TokenLogprobs,
    TopLogprob,
)
from uxbench.models.providers._args import EnvVarName, HeaderObject, HttpUrl, JsonObject, parse_provider_args
from uxbench.models.providers._errors import error_for_status, parse_retry_after, short
from uxbench.models.providers._markers import split_think
from uxbench.models.providers._tools import openai_message, openai_tools, parse_arguments
from uxbench.models.registry import register_provider
from uxbench.redact import clip, redact_json, remember_basic_auth, remember_secret, scrub, url_credentials

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_BODY_CHARS = 600
"""How much of a body that is not the expected JSON an error quotes."""
PREFLIGHT_TIMEOUT_S = 10.0
"""How long the check before a run waits for the server's `GET /models`."""


class OpenAIArgs(ProviderArgs):
    keep_blank = frozenset({"base_url"})  # empty: an error (an unset variable must not send the calls elsewhere)
    base_url: HttpUrl | None = None
    """Server URL (default $OPENAI_BASE_URL, else the OpenAI API). `http://user:password@host/v1` sends
    them as basic auth (an error when the API key variable is set too: one Authorization per request)."""
    api_key_env: EnvVarName = "OPENAI_API_KEY"
    """Name of the environment variable that holds the API key (a key is never an argument)."""
    timeout: PositiveFloat = 120.0
    """Seconds per request."""
    reasoning_effort: str | None = None
    """Reasoning effort of reasoning models (low, medium, high)."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """Request field that carries the output cap (o-series models want max_completion_tokens)."""
    extra_headers: HeaderObject = Field(default_factory=dict)
    """HTTP headers as a JSON object; their values are treated as secrets (never written)."""
    extra_body: JsonObject = Field(default_factory=dict)
    """Request fields as a JSON object (top_k, repetition_penalty ...); credential-named ones are never
    written."""

    @model_validator(mode="after")
    def _one_authorization(self) -> OpenAIArgs:
        self.endpoint()  # checked with the arguments, before a run creates anything
        return self

    def endpoint(self) -> tuple[str, dict[str, str], str | None]:
        """(base URL without user info, request headers, API key), from the arguments and the environment.
        Every secret among them is remembered for scrubbing; a ConfigError when two of the API key, user
        info in the URL and an Authorization header would each set the request's Authorization."""
        base = self.base_url or _env_base_url() or DEFAULT_BASE_URL
        key = os.environ.get(self.api_key_env) or None
        remember_secret(key)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update({str(k): str(v) for k, v in self.extra_headers.items()})
        header_auth = any(k.lower() == "authorization" for k in headers)
        unset = f"run without the key (env -u {self.api_key_env} uxbench ...)"
        creds = url_credentials(base)
        if creds is not None:
            base, user, password = creds
            remember_basic_auth(user, password)
            if key or header_auth:
                other = f"${self.api_key_env} holds an API key" if key else "extra_headers sets Authorization"
                fix = unset if key else "drop the Authorization header"
                raise ConfigError(f"base_url {base} carries a user name and password and {other}: a request "
                                  f"carries one Authorization. Remove user:password@ from base_url, or {fix}.")
            basic = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            headers["Authorization"] = f"Basic {basic}"
        if key:
            if header_auth:
                raise ConfigError(f"extra_headers sets Authorization and ${self.api_key_env} holds an API key: "
                                  f"a request carries one Authorization. Drop the header, or {unset}.")
            headers["Authorization"] = f"Bearer {key}"
        return base, headers, key


@register_provider("openai")
class OpenAIModel(ModelAPI):
    """Any OpenAI-compatible /chat/completions endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp ...)."""

    args_model = OpenAIArgs

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        p = self.params = parse_provider_args(OpenAIArgs, self.args, provider="openai")
        self.base_url, self._headers, self._key = p.endpoint()
        self.api_key_env = p.api_key_env
        self._url = self.base_url + "/chat/completions"
        self.timeout = p.timeout
        self.max_tokens_field = p.max_tokens_field
        self.reasoning_effort = p.reasoning_effort or None
        self._extra_body = p.extra_body
        self._where = f"{self.base_url} (model {self.model_name})"
        self._key_hint = f"the API key in ${self.api_key_env}"
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def connection_key(self) -> str:
        return f"openai:{self.base_url}:{self.model_name}"

    def cache_identity(self) -> dict[str, Any]:
        # Everything from the model args that changes the answer (never a key, header or URL password).
        return {
            "provider": "openai", "base_url": self.base_url, "model": self.model_name,
            "reasoning_effort": self.reasoning_effort, "extra_body": redact_json(self._extra_body),
        }

    def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._loop is not loop:
            if (
                session is not None
                and not session.closed
                and self._loop is not None
                and self._loop.is_closed()
            ):
                # Left behind by an earlier event loop: its sockets cannot be awaited any more.
                with contextlib.suppress(Exception):
                    session.connector._close()  # type: ignore[union-attr]
            # limit=0: the runtime limiter (--concurrency) bounds the calls; a second cap here would only queue.
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=30)
            session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
            self._session, self._loop = session, loop
        return session

    def build_body(self, messages: list[Message], config: GenerateConfig) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [openai_message(m) if (m.tool_calls or m.role == "tool") else
                         {"role": m.role, "content": m.content} for m in messages],
        }
        if config.tools:
            body["tools"] = openai_tools(config.tools)
        if config.tool_choice is not None:
            body["tool_choice"] = config.tool_choice
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.max_tokens is not None:
            body[self.max_tokens_field] = config.max_tokens
        if config.top_p is not None:
            body["top_p"] = config.top_p
        if config.stop:
            body["stop"] = list(config.stop)
        if config.seed is not None:
            body["seed"] = config.seed
        effort = config.reasoning_effort or self.reasoning_effort
        if effort:
            body["reasoning_effort"] = effort
        if config.top_logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = config.top_logprobs
        if self._extra_body:
            body.update(self._extra_body)
        if config.extra_body:
            body.update(config.extra_body)
        return body

    async def preflight(self) -> None:
        """An API key where the OpenAI API needs one, and a server that answers at base_url (`GET /models`:
        any answer but 401/403 will do; a slow answer is not held against it)."""
        authorised = self._key is not None or any(k.lower() == "authorization" for k in self._headers)
        host = (urlsplit(self.base_url).hostname or "").lower()
        if not authorised and host == "api.openai.com":
            raise ConfigError(
                f"openai:{self.model_name} calls the OpenAI API ({self.base_url}), which needs an API key, and "
                f"${self.api_key_env} is not set: export it, name another variable with -M api_key_env=NAME, or "
                "point -M base_url=... at your own server (vLLM, llama.cpp ...)."
            )
        timeout = aiohttp.ClientTimeout(total=min(self.timeout, PREFLIGHT_TIMEOUT_S))
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session, \
                    session.get(self.base_url + "/models", headers=self._headers) as resp:
                status = resp.status
        except aiohttp.InvalidURL as err:
            raise ConfigError(f"base_url {self.base_url} is not a valid URL ({err}).") from None
        except (asyncio.TimeoutError, TimeoutError):
            return  # a busy server: the run's own timeouts and retries deal with it
        except aiohttp.ClientError as err:
            raise ConfigError(
                f"Cannot reach {self.base_url} ({scrub(str(err)) or type(err).__name__}): is the server running "
                "there? Check -M base_url=... (for a vLLM or llama.cpp server: http://HOST:PORT/v1)."
            ) from None
        if status in (401, 403):
            has = f"the key in ${self.api_key_env}" if self._key else f"no key (${self.api_key_env} is not set)"
            raise ConfigError(f"{self.base_url} refuses the requests with HTTP {status}: it wants an API key, and "
                              f"this run sends {has}. Set the right key, or -M api_key_env=NAME.")

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        payload = orjson.dumps(self.build_body(messages, config))
        session = self._get_session()
        start = time.perf_counter()
        try:
            async with session.post(self._url, data=payload) as resp:
                raw = await resp.read()
                status = resp.status
                if status != 200:
                    raise error_for_status(
                        status,
                        self._error_detail(raw),
                        where=self._where,
                        key_hint=self._key_hint,
                        retry_after=parse_retry_after(resp.headers),
                    )
        except aiohttp.InvalidURL as err:
            raise FatalModelError(f"Invalid URL {self._url} ({err}): check base_url") from None
        except (asyncio.TimeoutError, TimeoutError):
            raise ModelTimeoutError(
                f"{self._where} did not answer within {self.timeout:g} s (raise --model-arg timeout=...)"
            ) from None
        except aiohttp.ClientError as err:
            raise TransientModelError(
                f"Connection to {self._where} failed: {scrub(str(err)) or type(err).__name__} "
                "(check that the server is running and base_url is right)"
            ) from None
        latency = time.perf_counter() - start
        return self.parse_response(raw, config, latency)

    def _error_detail(self, raw: bytes) -> str:
        try:
            data = orjson.loads(raw)
            err = data.get("error") if isinstance(data, dict) else None
            if isinstance(err, dict) and err.get("message"):
                return scrub(str(err["message"]))
            if isinstance(err, str):
                return scrub(err)
        except orjson.JSONDecodeError:
            pass
        return clip(raw.decode("utf-8", "replace"), _BODY_CHARS)  # scrubbed whole, then cut

    def parse_response(self, raw: bytes, config: GenerateConfig, latency: float) -> ModelOutput:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            snippet = short(clip(raw.decode("utf-8", "replace"), _BODY_CHARS))
            raise TransientModelError(f"{self._where} returned a body that is not JSON: {snippet}") from None
        try:
            choices = data.get("choices")
            if not choices:
                detail = self._error_detail(raw) if "error" in data else "no choices"
                raise TransientModelError(f"{self._where} returned an empty completion ({detail})")
            choice = choices[0]
            message = choice.get("message") or {}
            text = message.get("content") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or None
            if reasoning is None and "</think>" in text:
                reasoning, text = split_think(text)
            usage = _usage(data.get("usage"))
            logprobs = None
            if config.top_logprobs is not None:
                logprobs = _logprobs(choice.get("logprobs"), config.logprob_tokens)
            tool_calls = message.get("tool_calls")
            # One validation of the whole output, its usage included (a third cheaper than ModelOutput(...)
            # around Usage(...)).
            out: ModelOutput = _VALIDATE_OUTPUT({
                "text": text,
                "reasoning": reasoning if isinstance(reasoning, str) else None,
                "usage": usage,
                "latency_s": latency,
                "logprobs": logprobs,
                "finish_reason": choice.get("finish_reason"),
                "model": data.get("model") or self.model_name,
                "tool_calls": parse_tool_calls(tool_calls) if tool_calls else [],
            })
            return out
        except (AttributeError, KeyError, TypeError, IndexError, ValueError) as err:
            raise TransientModelError(f"{self._where} returned an unexpected response shape: {err}") from None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            try:
                await session.close()
            except RuntimeError:
                pass  # created on an event loop that is gone; nothing left to release


def parse_tool_calls(raw: Any) -> list[ToolCall]:
    """`message.tool_calls` of a completion (arguments as JSON text, or as an object from some servers)."""
    if not isinstance(raw, list):
        return []
    out = []
    for i, call in enumerate(raw):
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            continue
        function = call["function"]
        name = function.get("name")
        if not name:
            continue
        arguments, bad = parse_arguments(function.get("arguments"))
        out.append(ToolCall(id=str(call.get("id") or f"call_{i}"), name=str(name), arguments=arguments,
                            raw_arguments=bad))
    return out


def _usage(raw: Any) -> dict[str, int]:
    """The fields of `Usage` from a completion's `usage`."""
    if not isinstance(raw, dict):
        return {}
    details = raw.get("completion_tokens_details") or {}
    return {
        "input_tokens": int(raw.get("prompt_tokens") or 0),
        "output_tokens": int(raw.get("completion_tokens") or 0),
        "reasoning_tokens": int((details.get("reasoning_tokens") if isinstance(details, dict) else 0) or 0),
    }


_VALIDATE_OUTPUT = ModelOutput.__pydantic_validator__.validate_python


def _logprobs(raw: Any, n_tokens: int) -> list[TokenLogprobs] | None:
    if not isinstance(raw, dict):
        return None
    content = raw.get("content")
    if not content:
        return None
    out: list[TokenLogprobs] = []
    # A GRM request carries 4 x 20 alternatives: the values are converted here and the list validated in one
    # call of pydantic-core (~70 us for the 80), which is faster than building each with model_construct
    # (~340 us) or with its own constructor (~110 us).
    for entry in content[: max(1, n_tokens)]:
        top = _TOP_LOGPROBS.validate_python(
            [{"token": str(t["token"]), "logprob": float(t["logprob"])} for t in entry.get("top_logprobs") or []]
        )
        out.append(TokenLogprobs(token=str(entry["token"]), logprob=float(entry["logprob"]), top=top))
    return out


_TOP_LOGPROBS: TypeAdapter[list[TopLogprob]] = TypeAdapter(list[TopLogprob])


def _env_base_url() -> str | None:
    raw = os.environ.get("OPENAI_BASE_URL", "").strip()
    if not raw:
        return None
    found = url_credentials(raw)
    if found is not None:
        remember_basic_auth(found[1], found[2])
    if not raw.startswith(("http://", "https://")):
        raise ConfigError(f"$OPENAI_BASE_URL '{scrub(raw)}' must start with http:// or https://")
    return raw.rstrip("/")
