"""Is the server queueing our requests? The latency check of the adaptive limiter.

Some servers work on one request at a time (llama.cpp with one slot, a local GPU) or on a few. They never
say 429: they queue, and every request we add only adds its wait to the others' latency until calls time
out. Latency alone cannot tell that apart from slow requests (long outputs are slow on any server), but
latency against concurrency can: at a server that serves everything at once, half the requests in flight
give half the throughput; at one that queues, they give the same throughput at half the latency.

So the check compares levels. Throughput of a level is measured as Little's law puts it, requests in
flight / latency (the median latency, so that a few long outputs do not decide). The check starts a probe
when the recent median latency reaches `tolerance` times its long-run value: the limit is halved, and once
the lower level has enough answers its throughput is compared with the level above. If the level above
served less than `PROBE_GAIN` times as much, its extra requests only queued: the probe goes on halving while
that holds. Otherwise the limit settles at the concurrency the server showed it serves (the throughput
ratio times the lower level). A timeout starts the same comparison but never goes back up. After a probe the
level is held for a while, and growing back to twice the settled level must again buy `PROBE_GAIN` times
the throughput, or the limit returns to the settled level and the next attempt waits twice as long.
"""

from __future__ import annotations

import statistics
import time
from collections import deque

PROBE_GAIN = 1.4
"""Twice the concurrency must serve at least this much more to count as needed (a server that serves
everything at once gives about 2, one that queues about 1)."""
_WINDOW = 16  # latencies in the recent median
_CHECK_EVERY = 4  # answers between two looks at the recent median
_BASELINE_ALPHA = 0.1  # long-run value: EWMA of the recent median, over about 40 answers
_EPOCH_CAP = 1024  # latencies kept per level for its median
_MIN_EPOCH = 16  # answers a level needs before it is compared
_MAX_STRIKES = 5


class _Epoch:
    """Answers to the requests sent since the limit took its current value."""

    __slots__ = ("in_flight_sum", "latencies", "n", "start")

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.n = 0
        self.in_flight_sum = 0
        self.latencies: list[float] = []

    def add(self, latency_s: float, in_flight: int) -> None:
        self.n += 1
        self.in_flight_sum += in_flight
        if len(self.latencies) < _EPOCH_CAP:
            self.latencies.append(latency_s)

    @property
    def throughput(self) -> float:
        """Answers per second: mean requests in flight / median latency."""
        if not self.latencies:
            return 0.0
        median = statistics.median(self.latencies)
        return self.in_flight_sum / self.n / median if median > 0 else 0.0


class QueueingCheck:
    """The limiter's latency state. `observe` returns a new limit when the check wants one."""

    __slots__ = ("_answers", "_baseline", "_epoch", "_epoch_level", "_hold_until", "_probe", "_recent", "_ref",
                 "_strikes", "_successes", "tolerance")

    def __init__(self, tolerance: float = 2.0) -> None:
        self.tolerance = tolerance
        self._recent: deque[float] = deque(maxlen=_WINDOW)
        self._baseline: float | None = None
        self._epoch = _Epoch()
        self._epoch_level = 0
        self._probe: tuple[int, float | None, bool] | None = None
        """While a probe runs: (the level above, its throughput if measured, whether the probe may go back
        up to it: not when it timed out there)."""
        self._ref: tuple[int, float] | None = None
        """The settled level and its throughput: growing to twice it must pay."""
        self._successes = 0
        self._hold_until = 0
        self._strikes = 0
        self._answers = 0

    @property
    def holding(self) -> bool:
        """True while a probe runs or a settled level is held: the limit must not grow."""
        ref = self._ref
        validating = ref is not None and self._epoch_level >= 2 * ref[0]
        return self._probe is not None or self._successes < self._hold_until or validating

    @property
    def recent_latency(self) -> float | None:
        """The median latency of the last answers (None before the first answer)."""
        recent = self._recent
        return sorted(recent)[len(recent) // 2] if recent else None

    def new_level(self, level: int) -> None:
        """The limit changed: answers from now on belong to the new level."""
        self._epoch = _Epoch()
        self._epoch_level = level

    def count_success(self) -> None:
        self._successes += 1

    def timed_out(self, level: int) -> None:
        """A timeout at `level` is about to halve the limit: compare the levels below with it."""
        epoch = self._epoch
        self._probe = (level, epoch.throughput if epoch.n >= _MIN_EPOCH else None, False)

    def cancel_probe(self) -> None:
        self._probe = None

    def observe(self, latency_s: float, started_at: float | None, in_flight: int, level: int,
                lowest: int) -> int | None:
        """Record one answer (`in_flight`: our requests in flight when it was sent, itself included);
        returns the limit to switch to, or None."""
        recent = self._recent
        recent.append(latency_s)
        epoch = self._epoch
        if started_at is None or started_at >= epoch.start:
            epoch.add(latency_s, max(1, in_flight))
        enough = epoch.n >= max(_MIN_EPOCH, level)
        if self._probe is not None:
            return self._decide(level, lowest) if enough else None
        ref = self._ref
        if ref is not None and level >= 2 * ref[0] and enough:
            if epoch.throughput < PROBE_GAIN * ref[1]:  # twice the requests, about the same throughput
                self._strikes = min(self._strikes + 1, _MAX_STRIKES)
                return self._settle(ref[0], ref[1])
            self._ref, self._strikes = (level, epoch.throughput), 0  # growth paid off
            return None
        base = self._baseline
        if base is None:
            self._baseline = latency_s
            return None
        self._answers += 1
        if self._answers % _CHECK_EVERY:
            return None  # the median is looked at every few answers: it moves slowly anyway
        median = sorted(recent)[len(recent) // 2]  # (the upper median: cheaper, as good here)
        self._baseline = base + _BASELINE_ALPHA * (median - base)
        if not self.holding and level > lowest and median >= self.tolerance * base:
            self._probe = (level, epoch.throughput if epoch.n >= 4 else None, True)
            return max(lowest, level // 2)
        return None

    def _decide(self, level: int, lowest: int) -> int:
        assert self._probe is not None
        above, served_above, may_restore = self._probe
        here = self._epoch.throughput
        if served_above is not None and here > 0 and served_above >= PROBE_GAIN * here:
            if not may_restore:
                return self._settle(level, here)
            # The server serves between the two levels: the throughput ratio times the lower level.
            served = min(above, max(level, -int(-level * served_above // here)))
            return self._settle(served, here if served == level else served_above if served == above else None)
        if level > lowest:
            # About as much served with half the requests (or nothing measured above): they only queued.
            self._probe = (level, max(served_above or 0.0, here), True)
            return max(lowest, level // 2)
        return self._settle(level, here)

    def _settle(self, level: int, throughput: float | None) -> int:
        self._probe = None
        self._ref = (level, throughput) if throughput else None
        self._hold_until = self._successes + max(32, 8 * level) * 2**self._strikes
        if self._recent:
            self._baseline = statistics.median(self._recent)
        return level
