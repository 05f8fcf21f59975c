"""Any OpenAI-compatible `/chat/completions` endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp, DeepSeek).

Uses aiohttp directly: httpx (what the `openai` SDK uses) collapsed above ~32 concurrent requests on
our machines, and a harness at 256 concurrent calls cannot spend more than a fraction of a
millisecond of CPU per call. So: one keep-alive session per event loop, prebuilt headers, orjson,
and no validation of the raw body beyond the fields we read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

import aiohttp
import orjson

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, FatalModelError, ModelTimeoutError, TransientModelError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, TokenLogprobs, TopLogprob, Usage
from uxbench.models.providers._args import int_arg, json_object_arg, number_arg
from uxbench.models.providers._errors import error_for_status, parse_retry_after, scrub, short
from uxbench.models.providers._markers import split_think
from uxbench.models.registry import register_provider

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")


@register_provider("openai")
class OpenAIModel(ModelAPI):
    """Model args: base_url, api_key_env, timeout, max_concurrency, reasoning_effort,
    max_tokens_field (max_tokens | max_completion_tokens), extra_headers (JSON), extra_body (JSON)."""

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        a = self.args
        base = a.get("base_url") or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = base.rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url '{self.base_url}' must start with http:// or https://")
        self._url = self.base_url + "/chat/completions"
        self.api_key_env = a.get("api_key_env") or "OPENAI_API_KEY"
        self._key = os.environ.get(self.api_key_env) or None
        self.timeout = number_arg(a, "timeout", 120.0)
        self.max_tokens_field = a.get("max_tokens_field") or "max_tokens"
        if self.max_tokens_field not in _MAX_TOKENS_FIELDS:
            raise ConfigError(f"max_tokens_field must be one of {', '.join(_MAX_TOKENS_FIELDS)}")
        self.reasoning_effort = a.get("reasoning_effort") or None
        self._extra_body = json_object_arg(a, "extra_body")
        self._conn_limit = int_arg(a, "max_concurrency", 0, positive=False)
        if self._conn_limit:
            # Instance value shadows the class default so the runtime limiter sees the user's choice.
            vars(self)["default_max_concurrency"] = self._conn_limit
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update({str(k): str(v) for k, v in json_object_arg(a, "extra_headers").items()})
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        self._headers = headers
        self._where = f"{self.base_url} (model {self.model_name})"
        self._key_hint = f"the API key in ${self.api_key_env}"
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def connection_key(self) -> str:
        return f"openai:{self.base_url}:{self.model_name}"

    def cache_identity(self) -> dict[str, Any]:
        # Everything from the model args that changes the answer (never the key or headers).
        return {
            "provider": "openai", "base_url": self.base_url, "model": self.model_name,
            "reasoning_effort": self.reasoning_effort, "extra_body": self._extra_body,
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
            # limit=0: the runtime limiter bounds concurrency; a second cap here would only queue.
            connector = aiohttp.TCPConnector(limit=self._conn_limit, keepalive_timeout=30)
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
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
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
                f"Connection to {self._where} failed: {scrub(str(err), self._key) or type(err).__name__} "
                "(check that the server is running and base_url is right)"
            ) from None
        latency = time.perf_counter() - start
        return self.parse_response(raw, config, latency)

    def _error_detail(self, raw: bytes) -> str:
        try:
            data = orjson.loads(raw)
            err = data.get("error") if isinstance(data, dict) else None
            if isinstance(err, dict) and err.get("message"):
                return scrub(str(err["message"]), self._key)
            if isinstance(err, str):
                return scrub(err, self._key)
        except orjson.JSONDecodeError:
            pass
        return scrub(raw[:600].decode("utf-8", "replace"), self._key)

    def parse_response(self, raw: bytes, config: GenerateConfig, latency: float) -> ModelOutput:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            snippet = short(raw[:200].decode("utf-8", "replace"))
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
            return ModelOutput(
                text=text,
                reasoning=reasoning if isinstance(reasoning, str) else None,
                usage=usage,
                latency_s=latency,
                logprobs=logprobs,
                finish_reason=choice.get("finish_reason"),
                model=data.get("model") or self.model_name,
            )
        except (AttributeError, KeyError, TypeError, IndexError, ValueError) as err:
            raise TransientModelError(f"{self._where} returned an unexpected response shape: {err}") from None

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            try:
                await session.close()
            except RuntimeError:
                pass  # created on an event loop that is gone; nothing left to release


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        reasoning_tokens=int((details.get("reasoning_tokens") if isinstance(details, dict) else 0) or 0),
    )


def _logprobs(raw: Any, n_tokens: int) -> list[TokenLogprobs] | None:
    if not isinstance(raw, dict):
        return None
    content = raw.get("content")
    if not content:
        return None
    out: list[TokenLogprobs] = []
    for entry in content[: max(1, n_tokens)]:
        top = [
            TopLogprob(token=str(t["token"]), logprob=float(t["logprob"]))
            for t in entry.get("top_logprobs") or []
        ]
        out.append(TokenLogprobs(token=str(entry["token"]), logprob=float(entry["logprob"]), top=top))
    return out
