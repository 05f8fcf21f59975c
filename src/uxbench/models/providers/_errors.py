"""HTTP status -> uxbench error mapping shared by the HTTP and SDK providers."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping

from uxbench.errors import ContextLengthError, FatalModelError, ModelError, RateLimitError, TransientModelError
from uxbench.redact import clip, scrub

# 503 and Anthropic's 529 mean "overloaded": back off like a rate limit, not like a crash.
_OVERLOAD = frozenset({429, 503, 529})
# 4xx codes that are about timing, not about the request itself.
_TRANSIENT_4XX = frozenset({408, 409, 425})
_MAX_DETAIL = 300
# How servers say "the prompt is too long": OpenAI (context_length_exceeded), vLLM ("maximum context length"),
# llama.cpp ("exceed context window", "exceeds the available context size"), Anthropic ("prompt is too long").
_CONTEXT_LENGTH_RE = re.compile(
    r"context[_ ]length|context (window|size)|maximum context|prompt is too long|too many (input )?tokens"
    r"|max_model_len|n_ctx|input (is )?too long|reduce the length",
    re.IGNORECASE,
)


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date."""
    if not headers:
        return None
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    # aiohttp and httpx headers are case-insensitive; plain dicts (tests, SDK copies) may not be.
    value = headers.get(name)
    if value is None:
        value = headers.get(name.title())
    return value


def short(text: str) -> str:
    """One line of at most _MAX_DETAIL characters, scrubbed before it is cut (`uxbench.redact.clip`)."""
    return clip(" ".join(text.split()), _MAX_DETAIL)


def error_for_status(
    status: int,
    detail: str,
    *,
    where: str,
    key_hint: str,
    retry_after: float | None = None,
) -> ModelError:
    """Build the error for an HTTP failure.

    `where` names the endpoint (base URL and model), `key_hint` says how the key is configured
    (e.g. "the API key in $OPENAI_API_KEY"), so a fatal error tells the user what to check. Every secret
    in play is scrubbed from the detail (an error page may echo the request's headers).
    """
    detail = short(scrub(detail))
    where = scrub(where)
    suffix = f": {detail}" if detail else ""
    if status in _OVERLOAD:
        kind = "rate limited" if status == 429 else "overloaded"
        return RateLimitError(
            f"{where} is {kind} (HTTP {status}){suffix}", status=status, retry_after=retry_after
        )
    if status >= 500 or status in _TRANSIENT_4XX:
        return TransientModelError(f"{where} failed with HTTP {status}{suffix}", status=status)
    if status in (400, 413, 422) and _CONTEXT_LENGTH_RE.search(detail):
        return ContextLengthError(f"{where} says the input is too long (HTTP {status}){suffix}", status=status)
    if status in (401, 403):
        check = f"check {key_hint}"
    elif status == 404:
        check = "check the base URL and the model name"
    else:
        check = "check the model name, --model-arg values and generation settings"
    return FatalModelError(
        f"{where} rejected the request with HTTP {status} ({check}){suffix}", status=status
    )
