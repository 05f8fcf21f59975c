"""AdaptiveLimiter: AIMD behaviour, the in-flight bound, shrinking below holders, cancellation."""

from __future__ import annotations

import asyncio

import pytest

from uxbench.errors import ConfigError
from uxbench.runtime.limiter import AdaptiveLimiter, reset_shared_limiters, shared_limiter


def test_halves_once_per_window_and_respects_minimum() -> None:
    lim = AdaptiveLimiter(16, min_concurrency=3, cooldown_s=3600)
    assert lim.current_limit == 16
    assert lim.on_rate_limited() is True
    assert lim.current_limit == 8
    # A burst of 429s inside the cooldown halves only once.
    for _ in range(5):
        assert lim.on_rate_limited() is False
    assert lim.current_limit == 8

    lim = AdaptiveLimiter(16, min_concurrency=3, cooldown_s=0)
    for _ in range(10):
        lim.on_rate_limited()
    assert lim.current_limit == 3


def test_requests_admitted_before_a_decrease_do_not_halve_again() -> None:
    import time

    lim = AdaptiveLimiter(32, cooldown_s=0)
    before = time.monotonic()
    assert lim.on_rate_limited(started_at=before)
    assert lim.current_limit == 16
    # Same window: that request was sent under the old limit.
    assert not lim.on_rate_limited(started_at=before)
    assert lim.current_limit == 16
    assert lim.on_rate_limited(started_at=time.monotonic())
    assert lim.current_limit == 8


def test_grows_back_additively_up_to_max() -> None:
    lim = AdaptiveLimiter(4, cooldown_s=0)
    lim.on_rate_limited()
    assert lim.current_limit == 2
    lim.on_success()
    assert lim.current_limit == 2
    lim.on_success()
    assert lim.current_limit == 3  # +1 after `limit` (2) successes
    for _ in range(2):
        lim.on_success()
    assert lim.current_limit == 3
    lim.on_success()
    assert lim.current_limit == 4
    for _ in range(50):
        lim.on_success()
    assert lim.current_limit == 4
    assert [limit for _, limit in lim.history] == [4, 2, 3, 4]
    times = [t for t, _ in lim.history]
    assert times == sorted(times)


def test_a_rate_limit_resets_the_success_streak() -> None:
    lim = AdaptiveLimiter(8, initial=4, cooldown_s=3600)
    for _ in range(3):
        lim.on_success()
    lim.on_rate_limited()  # halves to 2 and resets the streak
    assert lim.current_limit == 2
    lim.on_success()
    assert lim.current_limit == 2


def test_history_is_capped() -> None:
    lim = AdaptiveLimiter(64, cooldown_s=0, history_len=5)
    for _ in range(20):
        lim.on_rate_limited()
        for _ in range(lim.current_limit):
            lim.on_success()
    assert len(lim.history) == 5


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        AdaptiveLimiter(0)
    with pytest.raises(ConfigError):
        AdaptiveLimiter(4, min_concurrency=5)
    assert AdaptiveLimiter(4, initial=100).current_limit == 4


async def test_in_flight_never_exceeds_the_limit() -> None:
    lim = AdaptiveLimiter(5)
    gate = asyncio.Event()
    active = 0
    peak = 0

    async def worker() -> None:
        nonlocal active, peak
        async with lim:
            active += 1
            peak = max(peak, active)
            await gate.wait()
            await asyncio.sleep(0)
            active -= 1

    tasks = [asyncio.create_task(worker()) for _ in range(40)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert lim.in_flight == 5
    assert lim.waiting == 35
    gate.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 10)
    assert peak == 5
    assert lim.in_flight == 0


async def test_shrinking_below_holders_does_not_deadlock() -> None:
    lim = AdaptiveLimiter(8, cooldown_s=0)
    release = [asyncio.Event() for _ in range(8)]
    entered: list[int] = []  # in_flight seen by each newcomer when it got in

    async def holder(i: int) -> None:
        async with lim:
            await release[i].wait()

    async def newcomer() -> None:
        async with lim:
            entered.append(lim.in_flight)
            await asyncio.sleep(0.001)

    holders = [asyncio.create_task(holder(i)) for i in range(8)]
    await asyncio.sleep(0)
    assert lim.in_flight == 8
    lim.on_rate_limited()
    lim.on_rate_limited()
    assert lim.current_limit == 2
    newcomers = [asyncio.create_task(newcomer()) for _ in range(10)]
    await asyncio.sleep(0.01)
    assert entered == []  # 8 holders > limit 2: newcomers wait
    for i, ev in enumerate(release):
        ev.set()
        await asyncio.sleep(0)
        if i < 6:
            assert entered == []  # still >= 2 holders left
    await asyncio.wait_for(asyncio.gather(*holders, *newcomers), 10)
    assert len(entered) == 10
    assert max(entered) <= 2
    assert lim.in_flight == 0


async def test_growth_admits_waiters() -> None:
    lim = AdaptiveLimiter(2, initial=1)
    async with lim:
        waiter = asyncio.create_task(lim.acquire())
        await asyncio.sleep(0)
        assert not waiter.done()
        lim.on_success()  # streak 1 >= limit 1: limit 2, the waiter gets the new slot
        await asyncio.wait_for(waiter, 5)
        assert lim.in_flight == 2
        lim.release()


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    lim = AdaptiveLimiter(1)
    await lim.acquire()
    waiter = asyncio.create_task(lim.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    lim.release()
    assert lim.in_flight == 0
    await asyncio.wait_for(lim.acquire(), 5)
    lim.release()


async def test_cancel_after_handoff_passes_the_slot_on() -> None:
    lim = AdaptiveLimiter(1)
    await lim.acquire()
    first = asyncio.create_task(lim.acquire())
    second = asyncio.create_task(lim.acquire())
    await asyncio.sleep(0)
    lim.release()  # hands the slot to `first`...
    first.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 5)
    assert lim.in_flight == 1
    lim.release()
    assert lim.in_flight == 0


def test_shared_limiter_per_key_lower_cap_wins() -> None:
    reset_shared_limiters()
    a = shared_limiter("openai:x", 32)
    assert shared_limiter("openai:x", 64) is a
    assert a.max_concurrency == 32
    assert shared_limiter("openai:x", 8) is a
    assert a.max_concurrency == 8 and a.current_limit == 8
    assert shared_limiter("openai:y", 4) is not a
    reset_shared_limiters()
