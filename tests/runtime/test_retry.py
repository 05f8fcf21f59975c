"""call_with_retry: what is retried, how long it waits, timeouts, limiter signals."""

from __future__ import annotations

import asyncio
import time

import pytest

from uxbench.errors import ConfigError, FatalModelError, ModelError, RateLimitError, TransientModelError
from uxbench.runtime.limiter import AdaptiveLimiter
from uxbench.runtime.retry import RetryPolicy, call_with_retry

FAST = RetryPolicy(max_attempts=4, initial_wait=0.001, max_wait=0.01, jitter=0.0)


class Script:
    """Raises the queued errors in order, then returns 'ok'. Counts calls."""

    def __init__(self, *errors: BaseException, delay: float = 0.0) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.delay = delay

    async def __call__(self) -> str:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_success_first_time() -> None:
    fn = Script()
    assert await call_with_retry(fn, FAST) == "ok"
    assert fn.calls == 1


async def test_honours_retry_after() -> None:
    fn = Script(RateLimitError("slow down", status=429, retry_after=0.05))
    waits: list[float] = []
    t0 = time.monotonic()
    result = await call_with_retry(fn, FAST, on_retry=lambda n, e, w: waits.append(w))
    elapsed = time.monotonic() - t0
    assert result == "ok"
    assert fn.calls == 2
    assert waits and waits[0] >= 0.05  # the backoff alone would be 0.001
    assert elapsed >= 0.05


async def test_retry_after_is_capped() -> None:
    policy = RetryPolicy(max_attempts=2, initial_wait=0.001, jitter=0.0, max_retry_after=0.02)
    fn = Script(RateLimitError("x", retry_after=10_000.0))
    waits: list[float] = []
    assert await call_with_retry(fn, policy, on_retry=lambda n, e, w: waits.append(w)) == "ok"
    assert waits == [pytest.approx(0.02)]


async def test_fatal_is_not_retried() -> None:
    err = FatalModelError("bad key", status=401)
    fn = Script(err)
    with pytest.raises(FatalModelError) as info:
        await call_with_retry(fn, FAST)
    assert info.value is err
    assert fn.calls == 1
    assert "attempts" not in str(info.value)


async def test_retryable_flag_overrides_class() -> None:
    fn = Script(ModelError("odd but retryable", retryable=True), TransientModelError("no", retryable=False))
    with pytest.raises(TransientModelError):
        await call_with_retry(fn, FAST)
    assert fn.calls == 2


async def test_transient_retried_up_to_max_then_raised_with_count() -> None:
    fn = Script(*[TransientModelError(f"boom {i}", status=500) for i in range(10)])
    retries: list[int] = []
    with pytest.raises(TransientModelError) as info:
        await call_with_retry(fn, FAST, on_retry=lambda n, e, w: retries.append(n))
    assert fn.calls == 4
    assert retries == [1, 2, 3]
    assert "boom 3" in str(info.value) and "4 attempts" in str(info.value)
    assert info.value.attempts == 4  # type: ignore[attr-defined]
    assert info.value.status == 500


async def test_other_exceptions_propagate_untouched() -> None:
    fn = Script(ValueError("a bug"))
    with pytest.raises(ValueError):
        await call_with_retry(fn, FAST)
    assert fn.calls == 1


async def test_per_attempt_timeout_is_transient_and_retried() -> None:
    calls = 0

    async def slow_then_fast() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(30)
        return "ok"

    policy = RetryPolicy(max_attempts=3, initial_wait=0.001, jitter=0.0, timeout_s=0.05)
    assert await asyncio.wait_for(call_with_retry(slow_then_fast, policy), 10) == "ok"
    assert calls == 2


async def test_timeout_exhausted() -> None:
    fn = Script(delay=30)
    policy = RetryPolicy(max_attempts=2, initial_wait=0.001, jitter=0.0, timeout_s=0.02)
    with pytest.raises(TransientModelError, match="timed out"):
        await asyncio.wait_for(call_with_retry(fn, policy), 10)
    assert fn.calls == 2


async def test_provider_timeout_error_is_transient() -> None:
    fn = Script(asyncio.TimeoutError())
    assert await call_with_retry(fn, FAST) == "ok"
    assert fn.calls == 2


async def test_limiter_signals() -> None:
    lim = AdaptiveLimiter(8, cooldown_s=0)
    fn = Script(RateLimitError("429"), TransientModelError("500"))
    assert await call_with_retry(fn, FAST, limiter=lim) == "ok"
    assert lim.current_limit == 4  # one halving for the 429, none for the 500
    assert lim.in_flight == 0
    with pytest.raises(FatalModelError):
        await call_with_retry(Script(FatalModelError("400")), FAST, limiter=lim)
    assert lim.in_flight == 0


async def test_slot_is_not_held_during_backoff() -> None:
    lim = AdaptiveLimiter(1)
    policy = RetryPolicy(max_attempts=2, initial_wait=30.0, max_wait=30.0, jitter=0.0)
    fn = Script(TransientModelError("x"))
    sleeping = asyncio.Event()
    slow = asyncio.create_task(
        call_with_retry(fn, policy, limiter=lim, on_retry=lambda n, e, w: sleeping.set())
    )
    await asyncio.wait_for(sleeping.wait(), 10)
    assert lim.in_flight == 0  # backing off, not holding the only slot
    assert await asyncio.wait_for(call_with_retry(Script(), policy, limiter=lim), 10) == "ok"
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    assert lim.in_flight == 0


def test_policy_validation() -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ConfigError):
        RetryPolicy(timeout_s=0)
