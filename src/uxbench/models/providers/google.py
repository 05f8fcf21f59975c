"""Google Gemini through the official `google-genai` SDK (imported lazily).

SDK retries are off (one attempt, which also stops its implicit retry on connection errors): the
runtime owns retries and backoff.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from pydantic import Field, PositiveFloat

from uxbench.data.schema import Message, ToolCall
from uxbench.errors import (
    FatalModelError,
    MissingDependencyError,
    ModelError,
    ModelTimeoutError,
    TransientModelError,
)
from uxbench.models.api import (
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ProviderArgs,
    TokenLogprobs,
    TopLogprob,
    Usage,
)
from uxbench.models.providers._args import EnvVarName, HttpUrl, parse_provider_args
from uxbench.models.providers._errors import error_for_status, parse_retry_after
from uxbench.models.providers._tools import parse_arguments
from uxbench.models.registry import register_provider
from uxbench.redact import remember_secret, scrub, strip_userinfo

_EFFORT_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "XHIGH"}


def to_contents(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """System text apart; `assistant` becomes Gemini's `model` role. Tool calls become `function_call` parts of
    the model's turn, tool results `function_response` parts of a user turn (consecutive ones share it)."""
    system = [m.content for m in messages if m.role == "system"]
    contents: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            part = {"function_response": {"id": m.tool_call_id, "name": m.name or "",
                                          "response": {"result": m.content}}}
            if contents and contents[-1]["role"] == "user" and "function_response" in contents[-1]["parts"][0]:
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
        elif m.tool_calls:
            parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
            parts += [{"function_call": {"id": c.id, "name": c.name, "args": c.arguments}} for c in m.tool_calls]
            contents.append({"role": "model", "parts": parts})
        else:
            contents.append({"role": "model" if m.role == "assistant" else "user", "parts": [{"text": m.content}]})
    return ("\n\n".join(system) if system else None), contents


def parse_response(response: Any, config: GenerateConfig, latency: float, fallback_model: str) -> ModelOutput:
    """Map a `GenerateContentResponse` (thought parts, usage, logprobs) onto `ModelOutput`."""
    candidates = getattr(response, "candidates", None) or []
    if not candidates:
        feedback = getattr(response, "prompt_feedback", None)
        reason = getattr(feedback, "block_reason", None)
        if reason:
            # A blocked prompt is an answer, not a failure: retrying gives the same block.
            return ModelOutput(
                text="", finish_reason=f"blocked:{reason}", latency_s=latency, model=fallback_model
            )
        raise TransientModelError(f"Gemini model {fallback_model} returned no candidates")
    cand = candidates[0]
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    content = getattr(cand, "content", None)
    for part in getattr(content, "parts", None) or []:
        call = getattr(part, "function_call", None)
        if call is not None and getattr(call, "name", None):
            arguments, bad = parse_arguments(getattr(call, "args", None))
            calls.append(ToolCall(id=str(getattr(call, "id", None) or f"call_{len(calls)}"), name=str(call.name),
                                  arguments=arguments, raw_arguments=bad))
            continue
        text = getattr(part, "text", None)
        if text is None:
            continue
        (thoughts if getattr(part, "thought", False) else texts).append(text)
    meta = getattr(response, "usage_metadata", None)
    thought_tokens = int(getattr(meta, "thoughts_token_count", 0) or 0)
    usage = Usage(
        input_tokens=int(getattr(meta, "prompt_token_count", 0) or 0),
        output_tokens=int(getattr(meta, "candidates_token_count", 0) or 0) + thought_tokens,
        reasoning_tokens=thought_tokens,
    )
    logprobs = None
    if config.top_logprobs is not None:
        logprobs = _logprobs(getattr(cand, "logprobs_result", None), config.logprob_tokens)
    finish = getattr(cand, "finish_reason", None)
    return ModelOutput(
        text="".join(texts),
        reasoning="".join(thoughts) if thoughts else None,
        usage=usage,
        latency_s=latency,
        logprobs=logprobs,
        finish_reason=str(getattr(finish, "value", finish)) if finish is not None else None,
        model=getattr(response, "model_version", None) or fallback_model,
        tool_calls=calls,
    )


def _logprobs(result: Any, n_tokens: int) -> list[TokenLogprobs] | None:
    chosen = getattr(result, "chosen_candidates", None)
    if not chosen:
        return None
    tops = getattr(result, "top_candidates", None) or []
    out: list[TokenLogprobs] = []
    for i, cand in enumerate(chosen[: max(1, n_tokens)]):
        alts = (getattr(tops[i], "candidates", None) or []) if i < len(tops) else []
        out.append(
            TokenLogprobs(
                token=cand.token or "",
                logprob=float(cand.log_probability or 0.0),
                top=[TopLogprob(token=a.token or "", logprob=float(a.log_probability or 0.0)) for a in alts],
            )
        )
    return out


class GoogleArgs(ProviderArgs):
    keep_blank = frozenset({"base_url"})  # empty: an error (an unset variable must not send the calls elsewhere)
    api_key_env: EnvVarName | None = None
    """Name of the environment variable that holds the API key (default GOOGLE_API_KEY, then
    GEMINI_API_KEY)."""
    base_url: HttpUrl | None = None
    """API URL (default Google's)."""
    timeout: PositiveFloat = 120.0
    """Seconds per request."""
    thinking_budget: int | None = Field(default=None, ge=-1)
    """Thinking budget in tokens (-1: dynamic, 0: off); thoughts are returned as reasoning."""
    reasoning_effort: str | None = None
    """Thinking level (minimal, low, medium, high)."""


@register_provider("google")
class GoogleModel(ModelAPI):
    """Google Gemini API (the `google` extra)."""

    args_model = GoogleArgs

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        p = self.params = parse_provider_args(GoogleArgs, self.args, provider="google")
        self._explicit_key_env = p.api_key_env is not None
        self.api_key_env = p.api_key_env or "GOOGLE_API_KEY"
        remember_secret(os.environ.get(self.api_key_env))
        if not self._explicit_key_env:
            remember_secret(os.environ.get("GEMINI_API_KEY"))
        self.base_url = p.base_url
        # The SDK gets the URL as given; errors and the cache identity see it without user info.
        self.public_url = strip_userinfo(self.base_url) if self.base_url else None
        self.timeout = p.timeout
        self.thinking_budget = p.thinking_budget
        self.reasoning_effort = p.reasoning_effort or None
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._key: str | None = None
        self._where = f"Gemini {self.public_url or 'API'} (model {model_name})"

    def cache_identity(self) -> dict[str, Any]:
        return {
            "provider": "google",
            "base_url": self.public_url,
            "model": self.model_name,
            "thinking_budget": self.thinking_budget,
            "reasoning_effort": self.reasoning_effort,
        }

    async def preflight(self) -> None:
        self._get_client()  # the SDK and the API key

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingDependencyError("google-genai", "google", "The google provider") from None
        key = os.environ.get(self.api_key_env)
        if not key and not self._explicit_key_env:
            key = os.environ.get("GEMINI_API_KEY")
        if not key:
            raise FatalModelError(f"No Gemini API key: set the environment variable ${self.api_key_env}")
        self._key = key
        options = types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client = genai.Client(api_key=key, http_options=options)
        self._loop = loop
        return self._client

    def build_config(self, system: str | None, config: GenerateConfig) -> dict[str, Any]:
        cfg: dict[str, Any] = {}
        if system:
            cfg["system_instruction"] = system
        if config.temperature is not None:
            cfg["temperature"] = config.temperature
        if config.top_p is not None:
            cfg["top_p"] = config.top_p
        if config.max_tokens is not None:
            cfg["max_output_tokens"] = config.max_tokens
        if config.stop:
            cfg["stop_sequences"] = list(config.stop)
        if config.seed is not None:
            cfg["seed"] = config.seed
        if config.top_logprobs is not None:
            cfg["response_logprobs"] = True
            cfg["logprobs"] = config.top_logprobs
        thinking: dict[str, Any] = {}
        if self.thinking_budget is not None:
            thinking = {
                "thinking_budget": self.thinking_budget,
                "include_thoughts": self.thinking_budget != 0,
            }
        effort = config.reasoning_effort or self.reasoning_effort
        if effort:
            thinking["thinking_level"] = _EFFORT_LEVELS.get(effort.lower(), effort.upper())
            thinking.setdefault("include_thoughts", True)
        if thinking:
            cfg["thinking_config"] = thinking
        if config.tools:
            cfg["tools"] = [{"function_declarations": [
                {"name": t.name, "description": t.description, "parameters_json_schema": t.parameters}
                for t in config.tools]}]
            # the SDK would otherwise try to run Python callables; these are declarations the caller executes
            cfg["automatic_function_calling"] = {"disable": True}
        if config.tool_choice is not None:
            mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}[config.tool_choice]
            cfg["tool_config"] = {"function_calling_config": {"mode": mode}}
        if config.extra_body:
            cfg["http_options"] = {"extra_body": dict(config.extra_body)}
        return cfg

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        client = self._get_client()
        system, contents = to_contents(messages)
        from google.genai import types

        # Validated into the SDK type so nested settings are serialised in the API's own field names.
        cfg = types.GenerateContentConfig.model_validate(self.build_config(system, config))
        start = time.perf_counter()
        try:
            response = await client.aio.models.generate_content(
                model=self.model_name, contents=contents, config=cfg
            )
        except Exception as err:
            raise self.map_error(err) from None
        return parse_response(response, config, time.perf_counter() - start, self.model_name)

    def map_error(self, err: Exception) -> Exception:
        """SDK and transport exceptions -> RateLimitError / TransientModelError / FatalModelError."""
        from google.genai import errors

        if isinstance(err, ModelError):
            return err
        if isinstance(err, errors.APIError):
            detail = str(err.message or err.status or err)
            headers = getattr(getattr(err, "response", None), "headers", None)
            return error_for_status(
                int(err.code or 500),
                detail,
                where=self._where,
                key_hint=f"the API key in ${self.api_key_env}",
                retry_after=parse_retry_after(headers),
            )
        if isinstance(err, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in type(err).__name__:
            return ModelTimeoutError(f"{self._where} did not answer within {self.timeout:g} s")
        module = type(err).__module__.split(".")[0]
        if module in ("aiohttp", "httpx", "httpx2", "httpcore") or isinstance(
            err, (ConnectionError, OSError)
        ):
            return TransientModelError(
                f"Connection to {self._where} failed: {type(err).__name__} (check the network and base_url)"
            )
        if isinstance(err, (json.JSONDecodeError, ValueError)):
            return TransientModelError(
                f"{self._where} returned a malformed response: {scrub(str(err))}"
            )
        return err

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.aio.aclose()
            except RuntimeError:
                pass  # its event loop is gone
