"""An adaptive concurrency gate, one per connection key: AIMD on overload, plus a queueing check.

Overload (a 429 / 503 answer, or a call that timed out) halves the limit; `limit` consecutive successes
grow it by one: the TCP congestion-control recipe that inspect_ai and promptfoo also settled on. A burst
of overload signals caused by one over-full window halves the limit once: signals from requests that
started before the last decrease, or that arrive within `cooldown_s` of it, are ignored.

A server that works on one request at a time never says 429: it queues. The latency of each answer
(measured from when the request was sent, after its slot was acquired, never while it waited for one)
feeds `uxbench.runtime.queueing.QueueingCheck`, which shrinks the limit to what the server serves when
latency grows with concurrency, and a timeout starts that comparison too. The slot of a request we gave
up on stays taken for a typical latency, since the server is most likely still working on it."""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from types import TracebackType

from uxbench.errors import ConfigError
from uxbench.runtime.queueing import QueueingCheck


class AdaptiveLimiter:
    """`async with limiter:` admits at most `current_limit` holders at once.

    When the limit shrinks below the number of holders nobody is evicted; new entries wait until enough
    holders leave. Waiters are served first come, first served, and a slot is handed straight to the
    next waiter on release so a newcomer cannot barge past the queue.
    """

    __slots__ = (
        "_check",
        "_history",
        "_in_flight",
        "_last_decrease",
        "_limit",
        "_streak",
        "_waiters",
        "cooldown_s",
        "max_concurrency",
        "min_concurrency",
    )

    def __init__(
        self,
        max_concurrency: int,
        min_concurrency: int = 1,
        initial: int | None = None,
        *,
        cooldown_s: float = 0.5,
        history_len: int = 1000,
        latency_tolerance: float = 2.0,
    ) -> None:
        if max_concurrency < 1:
            raise ConfigError(f"max concurrency must be at least 1, got {max_concurrency}")
        if not 1 <= min_concurrency <= max_concurrency:
            raise ConfigError(
                f"min concurrency must be between 1 and max concurrency ({max_concurrency}), "
                f"got {min_concurrency}"
            )
        if latency_tolerance <= 1:
            raise ConfigError(f"latency tolerance must be above 1, got {latency_tolerance}")
        self.max_concurrency = max_concurrency
        self.min_concurrency = min_concurrency
        self.cooldown_s = cooldown_s
        start = max_concurrency if initial is None else initial
        self._limit = min(max(start, min_concurrency), max_concurrency)
        self._in_flight = 0
        self._streak = 0
        self._last_decrease = -float("inf")
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._history: deque[tuple[float, int]] = deque(maxlen=history_len)
        self._history.append((time.monotonic(), self._limit))
        self._check = QueueingCheck(latency_tolerance)
        self._check.new_level(self._limit)

    @property
    def current_limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiters if not f.done())

    @property
    def history(self) -> list[tuple[float, int]]:
        """(time.monotonic(), limit) at creation and at every change, the most recent `history_len`."""
        return list(self._history)

    async def acquire(self) -> None:
        if self._in_flight < self._limit and not self._waiters:
            self._in_flight += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                # The slot was handed over just as we were cancelled: pass it on.
                self._in_flight -= 1
                self._wake()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(fut)
            raise

    def release(self) -> None:
        self._in_flight -= 1
        if self._waiters:
            self._wake()

    def release_abandoned(self, waited_s: float) -> None:
        """Release the slot of a request we gave up on (timed out) after waiting `waited_s`. The server
        may still be working on it, so the slot stays taken for about one more typical latency (at most
        `waited_s`): a request sent at once would only queue behind the abandoned one."""
        hold = min(waited_s, self._check.recent_latency or 0.0)
        if hold <= 0:
            self.release()
            return
        try:
            asyncio.get_running_loop().call_later(hold, self.release)
        except RuntimeError:  # no loop (closing): nothing can wait for the slot any more
            self.release()

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def _wake(self) -> None:
        waiters = self._waiters
        while waiters and self._in_flight < self._limit:
            fut = waiters.popleft()
            if not fut.done():
                self._in_flight += 1  # the slot now belongs to that waiter
                fut.set_result(None)

    def on_success(
        self, latency_s: float | None = None, *, started_at: float | None = None, in_flight: int | None = None
    ) -> None:
        """A call succeeded. Additive increase: +1 after `current_limit` consecutive successes, up to the
        maximum. With `latency_s` (seconds from sending to the answer), `started_at` (`time.monotonic()`
        when it was sent) and `in_flight` (our requests in flight once it was sent, itself included), the
        queueing check (`uxbench.runtime.queueing`) also runs."""
        check = self._check
        check.count_success()
        if latency_s is not None and latency_s > 0:
            new = check.observe(latency_s, started_at, in_flight or self._limit, self._limit, self.min_concurrency)
            if new is not None:
                if new != self._limit:
                    self._set(new)
                return
        if self._limit >= self.max_concurrency or check.holding:
            return
        self._streak += 1
        if self._streak >= self._limit:
            self._streak = 0
            self._set(self._limit + 1)

    def on_overload(self, started_at: float | None = None, *, timed_out: bool = False) -> bool:
        """Multiplicative decrease: halve the limit (not below the minimum).

        `started_at` is the `time.monotonic()` at which the overloaded request was sent; a request sent
        before the last decrease was sent under the old limit and is ignored. A timeout (`timed_out`) also
        starts a throughput comparison that keeps halving while the lower level serves as much. Returns
        whether the limit was lowered.
        """
        now = time.monotonic()
        self._streak = 0
        if now - self._last_decrease < self.cooldown_s:
            return False
        if started_at is not None and started_at <= self._last_decrease:
            return False
        new = max(self.min_concurrency, self._limit // 2)
        if new == self._limit:
            self._last_decrease = now
            return False
        if timed_out:
            self._check.timed_out(self._limit)
        else:
            self._check.cancel_probe()
        self._set(new)
        return True

    def on_rate_limited(self, started_at: float | None = None) -> bool:
        """A 429 / overloaded answer: `on_overload` (kept under its original name)."""
        return self.on_overload(started_at)

    def lower_max(self, max_concurrency: int) -> None:
        """Tighten the ceiling (used when two models share a connection key but ask for different caps)."""
        if max_concurrency < self.max_concurrency:
            self.max_concurrency = max(1, max_concurrency)
            self.min_concurrency = min(self.min_concurrency, self.max_concurrency)
            if self._limit > self.max_concurrency:
                self._set(self.max_concurrency)

    def _set(self, limit: int) -> None:
        if limit < self._limit:
            self._last_decrease = time.monotonic()
        self._limit = limit
        self._streak = 0
        self._check.new_level(limit)
        self._history.append((time.monotonic(), limit))
        if self._waiters:
            self._wake()

    def __repr__(self) -> str:
        return (
            f"AdaptiveLimiter(limit={self._limit}, in_flight={self._in_flight}, "
            f"min={self.min_concurrency}, max={self.max_concurrency})"
        )


# One table per event loop: models created in the same loop (one run) share limiters per endpoint, and a
# later `asyncio.run` (the next run in a long-lived process) starts afresh with its own caps.
_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AdaptiveLimiter]] = (
    weakref.WeakKeyDictionary()
)
_NO_LOOP: dict[str, AdaptiveLimiter] = {}


def _table() -> dict[str, AdaptiveLimiter]:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _NO_LOOP
    return _SHARED.setdefault(loop, {})


def shared_limiter(key: str, max_concurrency: int, min_concurrency: int = 1) -> AdaptiveLimiter:
    """The limiter for a connection key within the running event loop, created on first use.

    Models that share a key (same provider endpoint and model) share one limiter, so their calls add up
    against one rate limit. If a later caller in the same loop asks for a lower cap, the lower cap wins.
    """
    table = _table()
    limiter = table.get(key)
    if limiter is None:
        limiter = AdaptiveLimiter(max_concurrency, min(min_concurrency, max_concurrency))
        table[key] = limiter
    else:
        limiter.lower_max(max_concurrency)
    return limiter


def reset_shared_limiters() -> None:
    """Forget all shared limiters (tests)."""
    _SHARED.clear()
    _NO_LOOP.clear()
