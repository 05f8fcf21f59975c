"""Anthropic Messages API through the official `anthropic` SDK (imported lazily).

SDK retries are off (max_retries=0): the runtime owns retries, backoff and the concurrency limiter.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Literal

from pydantic import PositiveFloat, PositiveInt

from uxbench.data.schema import Message, ToolCall
from uxbench.errors import (
    FatalModelError,
    MissingDependencyError,
    ModelError,
    ModelTimeoutError,
    TransientModelError,
)
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, ProviderArgs, Usage
from uxbench.models.providers._args import EnvVarName, HttpUrl, parse_provider_args
from uxbench.models.providers._errors import error_for_status, parse_retry_after
from uxbench.models.providers._tools import parse_arguments
from uxbench.models.registry import register_provider
from uxbench.redact import remember_secret, scrub, strip_userinfo

DEFAULT_MAX_TOKENS = 1024


def split_system(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """System messages become the `system` parameter; the rest keep their order. Tool calls become `tool_use`
    blocks of the assistant's message and tool results `tool_result` blocks of a user message (consecutive
    results share one, as the API wants the roles to alternate)."""
    system = [m.content for m in messages if m.role == "system"]
    rest: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
            if rest and rest[-1]["role"] == "user" and isinstance(rest[-1]["content"], list):
                rest[-1]["content"].append(block)
            else:
                rest.append({"role": "user", "content": [block]})
        elif m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            rest.append({"role": "assistant", "content": blocks})
        else:
            rest.append({"role": m.role, "content": m.content})
    return ("\n\n".join(system) if system else None), rest


def parse_message(message: Any, latency: float, fallback_model: str) -> ModelOutput:
    """Map an SDK `Message` (text and thinking content blocks, usage) onto `ModelOutput`."""
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for block in getattr(message, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "thinking":
            thoughts.append(block.thinking)
        elif kind == "tool_use":
            arguments, bad = parse_arguments(getattr(block, "input", None))
            calls.append(ToolCall(id=str(block.id), name=str(block.name), arguments=arguments, raw_arguments=bad))
    usage = getattr(message, "usage", None)
    return ModelOutput(
        text="".join(texts),
        reasoning="\n".join(thoughts) if thoughts else None,
        usage=Usage(
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        ),
        latency_s=latency,
        finish_reason=getattr(message, "stop_reason", None),
        model=getattr(message, "model", None) or fallback_model,
        tool_calls=calls,
    )


class AnthropicArgs(ProviderArgs):
    keep_blank = frozenset({"base_url"})  # empty: an error (an unset variable must not send the calls elsewhere)
    api_key_env: EnvVarName = "ANTHROPIC_API_KEY"
    """Name of the environment variable that holds the API key."""
    base_url: HttpUrl | None = None
    """API URL (default $ANTHROPIC_BASE_URL, else Anthropic's)."""
    timeout: PositiveFloat = 120.0
    """Seconds per request."""
    thinking_budget: Literal["adaptive"] | PositiveInt | None = None
    """Extended thinking: a budget in tokens, or `adaptive`."""
    max_tokens: PositiveInt = DEFAULT_MAX_TOKENS
    """Output cap when the task sets none."""
    reasoning_effort: str | None = None
    """Effort level (output_config.effort) for models that take one."""


@register_provider("anthropic")
class AnthropicModel(ModelAPI):
    """Anthropic Messages API (the `anthropic` extra)."""

    args_model = AnthropicArgs

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        p = self.params = parse_provider_args(AnthropicArgs, self.args, provider="anthropic")
        self.api_key_env = p.api_key_env
        remember_secret(os.environ.get(self.api_key_env))
        env_url = os.environ.get("ANTHROPIC_BASE_URL", "").strip().rstrip("/")
        self.base_url = p.base_url or env_url or None
        # The SDK gets the URL as given; errors and the cache identity see it without user info.
        self.public_url = strip_userinfo(self.base_url) if self.base_url else None
        self.timeout = p.timeout
        self.default_max_tokens = p.max_tokens
        self.reasoning_effort = p.reasoning_effort or None
        self.thinking: dict[str, Any] | None = None
        if p.thinking_budget == "adaptive":
            self.thinking = {"type": "adaptive"}
        elif p.thinking_budget is not None:
            self.thinking = {"type": "enabled", "budget_tokens": p.thinking_budget}
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._key: str | None = None
        self._where = f"Anthropic {self.public_url or 'API'} (model {model_name})"

    def cache_identity(self) -> dict[str, Any]:
        return {
            "provider": "anthropic",
            "base_url": self.public_url,
            "model": self.model_name,
            "thinking": self.thinking,
            "max_tokens": self.default_max_tokens,
            "reasoning_effort": self.reasoning_effort,
        }

    async def preflight(self) -> None:
        self._get_client()  # the SDK and the API key

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        try:
            import anthropic
        except ImportError:
            raise MissingDependencyError("anthropic", "anthropic", "The anthropic provider") from None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise FatalModelError(f"No Anthropic API key: set the environment variable ${self.api_key_env}")
        self._key = key
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )
        self._loop = loop
        return self._client

    def build_request(self, messages: list[Message], config: GenerateConfig) -> dict[str, Any]:
        system, rest = split_system(messages)
        req: dict[str, Any] = {
            "model": self.model_name,
            "messages": rest,
            "max_tokens": config.max_tokens or self.default_max_tokens,
        }
        if system:
            req["system"] = system
        if config.tools:
            req["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                            for t in config.tools]
        if config.tool_choice is not None:
            req["tool_choice"] = {"type": {"auto": "auto", "required": "any", "none": "none"}[config.tool_choice]}
        if self.thinking is not None:
            req["thinking"] = self.thinking
            budget = self.thinking.get("budget_tokens")
            if isinstance(budget, int) and req["max_tokens"] <= budget:
                # The API requires max_tokens > budget_tokens; the budget is on top of the answer.
                req["max_tokens"] = budget + (config.max_tokens or self.default_max_tokens)
        # Sampling settings go through extra_body: recent SDKs dropped the keyword arguments while
        # the API still takes them for older models. Thinking forbids them altogether.
        extra: dict[str, Any] = {}
        if self.thinking is None and config.temperature is not None:
            extra["temperature"] = config.temperature
        if self.thinking is None and config.top_p is not None:
            extra["top_p"] = config.top_p
        if config.stop:
            req["stop_sequences"] = list(config.stop)
        effort = config.reasoning_effort or self.reasoning_effort
        if effort:
            req["output_config"] = {"effort": effort}
        extra.update(config.extra_body)
        if extra:
            req["extra_body"] = extra
        return req

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        client = self._get_client()
        request = self.build_request(messages, config)
        start = time.perf_counter()
        try:
            message = await client.messages.create(**request)
        except Exception as err:
            raise self.map_error(err) from None
        return parse_message(message, time.perf_counter() - start, self.model_name)

    def map_error(self, err: Exception) -> Exception:
        """SDK exception -> RateLimitError / TransientModelError / FatalModelError."""
        import anthropic

        if isinstance(err, ModelError):
            return err
        if isinstance(err, anthropic.APIStatusError):
            detail = str(getattr(err, "api_message", None) or err.message)
            headers = getattr(err.response, "headers", None)
            return error_for_status(
                err.status_code,
                detail,
                where=self._where,
                key_hint=f"the API key in ${self.api_key_env}",
                retry_after=parse_retry_after(headers),
            )
        if isinstance(err, anthropic.APITimeoutError):
            return ModelTimeoutError(f"{self._where} did not answer within {self.timeout:g} s")
        if isinstance(err, anthropic.APIConnectionError):
            return TransientModelError(f"Connection to {self._where} failed (check the network and base_url)")
        if isinstance(err, anthropic.APIResponseValidationError):
            return TransientModelError(f"{self._where} returned a malformed response: {scrub(err.message)}")
        if isinstance(err, anthropic.APIError):
            return TransientModelError(f"{self._where} failed: {scrub(err.message)}")
        return err

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except RuntimeError:
                pass  # its event loop is gone
