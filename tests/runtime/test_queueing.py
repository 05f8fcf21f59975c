"""The limiter's queueing check: latency that grows with concurrency (and timeouts) shrink the limit to what
the server serves; latency that does not grow with concurrency (slow requests, not a queue) leaves it alone.

The servers are simulated by the latency each answer reports: a one-slot server answers the n-th of n
requests in flight after n service times; a server that serves everything at once answers after a
service time that does not depend on n (here drawn from a log-normal: some requests are long).
"""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from uxbench.errors import ModelTimeoutError
from uxbench.runtime.limiter import AdaptiveLimiter
from uxbench.runtime.retry import RetryPolicy, call_with_retry

SERVICE_S = 0.5


def answer(lim: AdaptiveLimiter, latency_s: float, in_flight: int | None = None) -> None:
    lim.on_success(latency_s, started_at=time.monotonic(), in_flight=in_flight or lim.current_limit)


def single_slot(lim: AdaptiveLimiter, answers: int) -> list[int]:
    """Feed a one-slot server's answers: a first burst (the k-th waits k service times), then the
    steady state (every answer waited `limit` service times). Returns the limit after each answer."""
    for k in range(1, lim.current_limit + 1):
        answer(lim, k * SERVICE_S, k)
    seen = []
    for _ in range(answers):
        answer(lim, lim.current_limit * SERVICE_S)
        seen.append(lim.current_limit)
    return seen


def test_single_slot_server_shrinks_to_one_and_growth_is_taken_back() -> None:
    lim = AdaptiveLimiter(16, cooldown_s=0)
    seen = single_slot(lim, 600)
    history = [limit for _, limit in lim.history]
    assert history[:5] == [16, 8, 4, 2, 1]
    assert max(seen[200:]) <= 2 and sum(seen[200:]) / len(seen[200:]) < 1.2
    # Each try at 2 is taken back, and the tries get rarer.
    tries = [i for i, limit in enumerate(seen) if limit == 2 and (i == 0 or seen[i - 1] == 1)]
    assert len(tries) >= 2 and tries[-1] - tries[-2] > tries[1] - tries[0]


def test_a_server_with_four_slots_settles_near_four() -> None:
    lim = AdaptiveLimiter(32, cooldown_s=0)
    for k in range(1, 33):
        answer(lim, SERVICE_S * max(1.0, k / 4), k)
    for _ in range(800):
        n = lim.current_limit
        answer(lim, SERVICE_S * max(1.0, n / 4))
    assert 4 <= lim.current_limit <= 8


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_slow_requests_at_a_parallel_server_keep_the_limit(seed: int) -> None:
    rng = random.Random(seed)
    lim = AdaptiveLimiter(32, cooldown_s=0)
    seen = []
    for _ in range(5000):
        answer(lim, SERVICE_S * rng.lognormvariate(0.0, 0.6))  # long and short outputs, no queue
        seen.append(lim.current_limit)
    assert sum(seen) / len(seen) > 0.95 * 32
    assert lim.current_limit >= 16


def test_a_false_alarm_goes_back_up() -> None:
    lim = AdaptiveLimiter(32, cooldown_s=0)
    for _ in range(40):
        answer(lim, SERVICE_S)
    slow = 0
    while lim.current_limit == 32 and slow < 16:
        answer(lim, 4 * SERVICE_S)  # a run of long requests: latency up, but not because of concurrency
        slow += 1
    assert lim.current_limit == 16  # probing half
    for _ in range(16):
        answer(lim, SERVICE_S)  # half the requests, the same latency: half the throughput
    assert lim.current_limit == 32


def test_timeout_halves_then_halves_again_while_throughput_holds() -> None:
    lim = AdaptiveLimiter(8, cooldown_s=0)
    assert lim.on_overload(time.monotonic(), timed_out=True)
    assert lim.current_limit == 4
    for _ in range(16):
        answer(lim, 4 * SERVICE_S)  # one slot: four in flight wait four service times
    assert lim.current_limit == 2
    for _ in range(16):
        answer(lim, 2 * SERVICE_S)
    assert lim.current_limit == 1
    for _ in range(16):
        answer(lim, SERVICE_S)
    assert lim.current_limit == 1


def test_a_timeout_never_restores_the_level_that_timed_out() -> None:
    lim = AdaptiveLimiter(8, cooldown_s=0)
    for _ in range(16):
        answer(lim, SERVICE_S)
    assert lim.on_overload(time.monotonic(), timed_out=True)
    for _ in range(16):
        answer(lim, SERVICE_S)  # half the throughput at 4: a parallel server that timed out anyway
    assert lim.current_limit == 4


def test_rate_limit_still_just_halves() -> None:
    lim = AdaptiveLimiter(8, cooldown_s=0)
    assert lim.on_rate_limited(time.monotonic())
    for _ in range(16):
        answer(lim, SERVICE_S)
    assert lim.current_limit >= 4  # no probing below: a 429 is not a queue


async def test_an_abandoned_slot_stays_taken_for_a_typical_latency() -> None:
    lim = AdaptiveLimiter(1, cooldown_s=0)
    answer(lim, 0.2)
    await lim.acquire()
    lim.release_abandoned(waited_s=5.0)
    assert lim.in_flight == 1  # the server is still working on it
    await asyncio.wait_for(lim.acquire(), 5)  # freed after about 0.2 s, not 5 s
    lim.release()
    assert lim.in_flight == 0


async def test_timeouts_lower_the_limit_through_the_retry_layer() -> None:
    lim = AdaptiveLimiter(8, cooldown_s=0)
    calls = 0

    async def fn() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ModelTimeoutError("the provider's own timeout")
        if calls == 2:
            await asyncio.sleep(30)
        return "ok"

    policy = RetryPolicy(max_attempts=3, initial_wait=0.001, jitter=0.0, timeout_s=0.05)
    assert await asyncio.wait_for(call_with_retry(fn, policy, limiter=lim), 10) == "ok"
    assert lim.current_limit == 2  # halved by each timeout


async def test_the_timeout_clock_starts_when_the_slot_is_taken() -> None:
    lim = AdaptiveLimiter(1)
    policy = RetryPolicy(max_attempts=1, timeout_s=0.3)

    async def hold() -> str:
        await asyncio.sleep(0.2)
        return "first"

    async def quick() -> str:
        await asyncio.sleep(0.2)
        return "second"

    # Three calls of 0.2 s through one slot: the last waits 0.4 s for the slot, longer than its timeout,
    # and still succeeds, since only its own 0.2 s count.
    results = await asyncio.gather(*(call_with_retry(f, policy, limiter=lim) for f in (hold, hold, quick)))
    assert results == ["first", "first", "second"]
