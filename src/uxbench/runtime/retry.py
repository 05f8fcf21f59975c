"""Retrying model calls: exponential backoff with jitter (tenacity), honouring Retry-After.

Only errors that say they are retryable (`RateLimitError`, `TransientModelError`, timeouts) are tried
again; a `FatalModelError` (bad request, bad key, unknown model) is raised at once.

With a limiter, an attempt first waits for a slot; its clock (the timeout and the latency the limiter
learns from) starts once it has the slot, when the request is sent, so time spent queued behind our own
requests never counts against a call. Rate limits and timeouts tell the limiter the server is overloaded.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)
from tenacity.wait import wait_base

from uxbench.errors import ConfigError, ModelError, ModelTimeoutError, RateLimitError
from uxbench.runtime.limiter import AdaptiveLimiter

T = TypeVar("T")
OnRetry = Callable[[int, ModelError, float], None]
"""Called before each backoff sleep with (failed attempt number, its error, seconds to wait)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Waits grow as initial_wait * 2**(n-1) + U(0, jitter), capped at max_wait, and are
    never shorter than the server's Retry-After (itself capped at max_retry_after)."""

    max_attempts: int = 6
    initial_wait: float = 1.0
    max_wait: float = 60.0
    jitter: float = 1.0
    timeout_s: float | None = None
    """Per-attempt time limit (the wait for a concurrency slot is not counted)."""
    max_retry_after: float = 600.0
    """Ceiling on a server-requested wait, so a bogus header cannot stall a run for hours."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {self.timeout_s}")


def backoff_wait(policy: RetryPolicy, failed_attempt: int, exc: BaseException | None) -> float:
    """Seconds to wait after `failed_attempt` (1-based) failed with `exc`."""
    # initial * 2**(n-1), capped, plus uniform jitter (tenacity's wait_exponential_jitter formula; computed
    # here because its parameter names changed between tenacity releases).
    exp = policy.initial_wait * (2.0 ** (failed_attempt - 1)) if failed_attempt < 64 else policy.max_wait
    wait = min(exp + random.uniform(0, policy.jitter), policy.max_wait)
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None and retry_after > 0:
        wait = max(wait, min(float(retry_after), policy.max_retry_after))
    return wait


class _RetryAfterWait(wait_base):
    """Exponential jitter, but at least what the server asked for. `offset` counts attempts made
    before tenacity took over (the first attempt runs outside it: tenacity costs ~0.1 ms per call)."""

    def __init__(self, policy: RetryPolicy, offset: int = 0) -> None:
        self._policy = policy
        self._offset = offset

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome is not None else None
        return backoff_wait(self._policy, retry_state.attempt_number + self._offset, exc)


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, ModelError) and exc.retryable


if sys.version_info >= (3, 11):

    async def _with_timeout(aw: Awaitable[T], timeout_s: float) -> T:
        # asyncio.timeout does not spawn a task (3.11's wait_for does).
        async with asyncio.timeout(timeout_s):
            return await aw

else:  # pragma: no cover - exercised on 3.10 only

    async def _with_timeout(aw: Awaitable[T], timeout_s: float) -> T:
        return await asyncio.wait_for(aw, timeout_s)


async def attempt_once(
    fn: Callable[[], Awaitable[T]], timeout_s: float | None, limiter: AdaptiveLimiter | None
) -> T:
    """One try of `fn()`: in a slot of `limiter`, which learns from how it went; within `timeout_s` (a
    timeout raises `ModelTimeoutError`). `call_with_retry` is this, then `retry_failed` on a `ModelError`;
    a hot caller can await the two itself and skip one coroutine per call."""
    in_flight = 0
    if limiter is not None:
        await limiter.acquire()
        in_flight = limiter.in_flight
    started = time.monotonic()  # sent now: the wait for a slot is not part of the call
    abandoned = False
    try:
        if timeout_s is None:
            result = await fn()
        else:
            result = await _with_timeout(fn(), timeout_s)
    except RateLimitError:
        if limiter is not None:
            limiter.on_overload(started)
        raise
    except ModelTimeoutError:  # the provider's own time limit
        abandoned = True
        if limiter is not None:
            limiter.on_overload(started, timed_out=True)
        raise
    except (asyncio.TimeoutError, TimeoutError) as exc:
        abandoned = True
        if limiter is not None:
            limiter.on_overload(started, timed_out=True)
        what = f"no answer within {timeout_s:g} s" if timeout_s is not None else "the call timed out"
        raise ModelTimeoutError(f"Model call timed out: {what}") from exc
    finally:
        if limiter is not None:
            if abandoned:
                limiter.release_abandoned(time.monotonic() - started)
            else:
                limiter.release()
    if limiter is not None:
        limiter.on_success(time.monotonic() - started, started_at=started, in_flight=in_flight)
    return result


async def call_with_retry(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    limiter: AdaptiveLimiter | None = None,
    on_retry: OnRetry | None = None,
) -> T:
    """Await `fn()` until it succeeds, a non-retryable error occurs, or `policy.max_attempts` run out.

    With a `limiter`, each attempt holds a slot only while it runs (not during the backoff sleep), a
    `RateLimitError` or a timeout lowers the limit, and a success reports its latency and lets it grow.
    The final error is the last attempt's `ModelError`, with the attempt count appended to its message
    and set as `err.attempts`.
    """
    # Fast path: most calls succeed at once, and tenacity's machinery is the costliest part of a call.
    try:
        return await attempt_once(fn, policy.timeout_s, limiter)
    except ModelError as err:
        first = err
    return await retry_failed(fn, policy, first, limiter=limiter, on_retry=on_retry)


async def retry_failed(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    error: ModelError,
    *,
    limiter: AdaptiveLimiter | None = None,
    on_retry: OnRetry | None = None,
) -> T:
    """`call_with_retry` after its first attempt failed with `error`: raises it when it is not retryable or
    no attempt is left, else tries again."""
    attempts = 1
    if not error.retryable or policy.max_attempts == 1:
        error.attempts = attempts
        raise error
    first_wait = backoff_wait(policy, 1, error)
    if on_retry is not None:
        on_retry(1, error, first_wait)
    await asyncio.sleep(first_wait)

    async def again() -> T:
        nonlocal attempts
        attempts += 1
        return await attempt_once(fn, policy.timeout_s, limiter)

    def before_sleep(state: RetryCallState) -> None:
        if on_retry is None or state.outcome is None:
            return
        exc = state.outcome.exception()
        sleep = state.next_action.sleep if state.next_action is not None else 0.0
        if isinstance(exc, ModelError):
            on_retry(state.attempt_number + 1, exc, float(sleep))

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts - 1),
        wait=_RetryAfterWait(policy, offset=1),
        retry=retry_if_exception(_is_retryable),
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        return await retrying(again)
    except ModelError as err:
        if attempts > 1:
            err.args = (f"{err} (gave up after {attempts} attempts)", *err.args[1:])
        err.attempts = attempts
        raise
