"""Model end to end with an in-test provider: cache, retries, limiter, accounting."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import ClassVar

import pytest

from uxbench.data.schema import Message
from uxbench.errors import FatalModelError, RateLimitError, TransientModelError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, Usage
from uxbench.models.model import Model, create_model
from uxbench.models.registry import register_provider
from uxbench.runtime.cache import ResponseCache
from uxbench.runtime.cost import Price, PriceTable, UsageTracker
from uxbench.runtime.limiter import AdaptiveLimiter, reset_shared_limiters
from uxbench.runtime.retry import RetryPolicy

FAST = RetryPolicy(max_attempts=4, initial_wait=0.001, max_wait=0.01, jitter=0.0)
PRICES = PriceTable({"fake-paid": Price(2.0, 10.0)})
HELLO = [Message(role="user", content="你好")]


@register_provider("fake-test")
class FakeAPI(ModelAPI):
    """Echoes the last message; raises queued errors first; tracks concurrency."""

    default_max_concurrency: ClassVar[int] = 3

    def __init__(self, model_name: str = "fake-paid", args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        self.errors: list[Exception] = []
        self.calls = 0
        self.active = 0
        self.peak = 0
        self.delay = float(self.args.get("delay", "0"))
        self.closed = False

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(self.delay)
            if self.errors:
                raise self.errors.pop(0)
            text = f"echo {messages[-1].content} t={config.temperature}"
            usage = Usage(input_tokens=1000, output_tokens=200)
            return ModelOutput(text=text, usage=usage, model=self.model_name)
        finally:
            self.active -= 1

    async def aclose(self) -> None:
        self.closed = True


async def test_rate_limited_then_succeeds() -> None:
    api = FakeAPI()
    api.errors = [RateLimitError("429", status=429, retry_after=0.05)]
    model = Model(api, retry=FAST, prices=PRICES, limiter=AdaptiveLimiter(8, cooldown_s=0))
    t0 = time.monotonic()
    out = await model.generate(HELLO)
    assert time.monotonic() - t0 >= 0.05
    assert out.text == "echo 你好 t=None" and not out.cached and out.latency_s > 0
    assert api.calls == 2
    assert model.limiter.current_limit == 4
    stats = model.usage.to_dict()["fake-test:fake-paid"]
    assert stats["retries"] == 1 and stats["rate_limited"] == 1 and stats["calls"] == 1
    assert stats["errors"] == 0
    assert stats["cost_usd"] == pytest.approx((1000 * 2.0 + 200 * 10.0) / 1e6)


async def test_on_send_per_attempt_and_the_latency_of_the_last() -> None:
    api = FakeAPI(args={"delay": "0.02"})
    api.errors = [RateLimitError("429", status=429, retry_after=0.2)]
    model = Model(api, retry=FAST, limiter=AdaptiveLimiter(8, cooldown_s=0))
    sent: list[float] = []
    model.on_send = lambda: sent.append(time.monotonic())
    out = await model.generate(HELLO)
    assert len(sent) == 2 and sent[1] - sent[0] >= 0.2  # once per attempt, the second after the backoff
    assert 0.02 <= out.latency_s < 0.2  # the answered attempt alone: neither the first nor the wait

    class Timed(FakeAPI):
        async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
            out = await super().generate(messages, config)
            out.latency_s = 7.0
            return out

    assert (await Model(Timed(), retry=FAST).generate(HELLO)).latency_s == 7.0  # the provider's own is kept


async def test_errors_are_counted_and_raised() -> None:
    api = FakeAPI()
    api.errors = [TransientModelError("500")] * 4
    model = Model(api, retry=FAST, prices=PRICES)
    with pytest.raises(TransientModelError, match="4 attempts"):
        await model.generate(HELLO)
    api.errors = [FatalModelError("401", status=401)]
    with pytest.raises(FatalModelError):
        await model.generate(HELLO)
    stats = model.usage.model(model.spec)
    assert (stats.errors, stats.retries, stats.calls, api.calls) == (2, 3, 0, 5)
    assert model.usage.to_dict()[model.spec]["cost_usd"] == 0.0


async def test_cache_hit_skips_the_provider(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    api = FakeAPI()
    model = Model(api, retry=FAST, cache=cache, prices=PRICES)
    cfg = GenerateConfig(temperature=0.7, max_tokens=64)
    first = await model.generate(HELLO, cfg)
    again = await model.generate(HELLO, GenerateConfig(max_tokens=64, temperature=0.7))  # equal, new object
    assert api.calls == 1
    assert again.cached and not first.cached
    assert again.text == first.text and again.usage == first.usage
    # Anything that changes the request misses.
    await model.generate(HELLO, GenerateConfig(temperature=0.8, max_tokens=64))
    follow_up = [*HELLO, Message(role="assistant", content="x"), Message(role="user", content="再来")]
    await model.generate(follow_up)
    await model.generate(HELLO, cfg, cache_salt="epoch-1")
    await model.generate(HELLO, cfg, use_cache=False)
    assert api.calls == 5
    stats = model.usage.to_dict()[model.spec]
    assert stats["requests"] == 6 and stats["cache_hits"] == 1 and stats["calls"] == 5
    one = (1000 * 2.0 + 200 * 10.0) / 1e6
    assert stats["cost_usd"] == pytest.approx(5 * one)
    assert stats["cost_usd_if_uncached"] == pytest.approx(6 * one)
    cache.close()

    # A new process (new cache handle, new provider) still hits.
    with ResponseCache(tmp_path / "r.sqlite") as reopened:
        api2 = FakeAPI()
        out = await Model(api2, cache=reopened, prices=PRICES).generate(HELLO, cfg)
        assert out.cached and out.text == first.text and api2.calls == 0


async def test_timestamps_do_not_change_the_key(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    with ResponseCache(tmp_path / "r.sqlite") as cache:
        api = FakeAPI()
        model = Model(api, cache=cache, prices=PRICES)
        await model.generate(HELLO)
        stamped = [Message(role="user", content="你好", created_at=datetime.now(timezone.utc), turn_index=3)]
        assert (await model.generate(stamped)).cached
        other_model = Model(FakeAPI("another"), cache=cache, prices=PRICES)
        assert not (await other_model.generate(HELLO)).cached


async def test_failures_are_not_cached(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        api = FakeAPI()
        api.errors = [FatalModelError("400")]
        model = Model(api, retry=FAST, cache=cache, prices=PRICES)
        with pytest.raises(FatalModelError):
            await model.generate(HELLO)
        assert len(cache) == 0
        assert not (await model.generate(HELLO)).cached
        assert len(cache) == 1


async def test_unreadable_cache_entry_is_a_miss(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "r.sqlite") as cache:
        api = FakeAPI()
        model = Model(api, cache=cache, prices=PRICES)
        cache.put(model.cache_key(HELLO), b'{"not": "an output"}')
        out = await model.generate(HELLO)
        assert not out.cached and api.calls == 1
        assert (await model.generate(HELLO)).cached  # the fresh answer replaced it


async def test_concurrency_bounded_by_max_concurrency() -> None:
    api = FakeAPI(args={"delay": "0.005"})
    model = Model(api, max_concurrency=4, retry=FAST, prices=PRICES)
    outs = await asyncio.wait_for(
        asyncio.gather(*(model.generate([Message(role="user", content=str(i))]) for i in range(40))), 30
    )
    assert [o.text for o in outs] == [f"echo {i} t=None" for i in range(40)]
    assert api.peak == 4
    assert model.limiter.in_flight == 0


async def test_rate_limit_burst_shrinks_concurrency() -> None:
    api = FakeAPI(args={"delay": "0.002"})
    api.errors = [RateLimitError("429", retry_after=0.01) for _ in range(8)]
    model = Model(api, max_concurrency=8, retry=RetryPolicy(max_attempts=10, initial_wait=0.001, jitter=0.0),
                  prices=PRICES)
    await asyncio.wait_for(
        asyncio.gather(*(model.generate([Message(role="user", content=str(i))]) for i in range(16))), 30
    )
    limits = [limit for _, limit in model.limiter.history]
    assert limits[0] == 8 and min(limits) < 8
    assert model.usage.model(model.spec).rate_limited == 8


async def test_create_model_shares_a_limiter_per_connection() -> None:
    reset_shared_limiters()
    tracker = UsageTracker()
    a = create_model("fake-test:fake-paid", usage=tracker, prices=PRICES)
    b = create_model("fake-test:fake-paid", {"delay": "0"}, usage=tracker, prices=PRICES)
    c = create_model("fake-test:other", usage=tracker, prices=PRICES)
    assert a.limiter is b.limiter and a.limiter is not c.limiter
    assert a.limiter.max_concurrency == FakeAPI.default_max_concurrency
    assert a.spec == "fake-test:fake-paid"
    await a.generate(HELLO)
    await b.generate(HELLO)
    await c.generate(HELLO)
    assert tracker.model("fake-test:fake-paid").calls == 2
    assert tracker.to_dict()["fake-test:other"]["cost_usd"] is None  # no price for "other": unknown
    await a.aclose()
    assert isinstance(a.api, FakeAPI) and a.api.closed
    reset_shared_limiters()
