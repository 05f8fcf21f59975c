"""Model over real loopback HTTP: 429 + Retry-After, 500s and slow answers from an aiohttp server.

The provider here is a minimal in-test double that maps HTTP statuses to uxbench errors the way real
providers must; the runtime itself never sees HTTP.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web

from uxbench.data.schema import Message
from uxbench.errors import FatalModelError, RateLimitError, TransientModelError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, Usage
from uxbench.models.model import Model
from uxbench.runtime.cost import Price, PriceTable
from uxbench.runtime.limiter import AdaptiveLimiter
from uxbench.runtime.retry import RetryPolicy

HELLO = [Message(role="user", content="hello")]


@dataclass
class Server:
    url: str
    plan: list[tuple[int, float, str | None]] = field(default_factory=list)
    """Queued (status, delay_s, retry_after header) answers; then 200 right away."""
    hits: list[float] = field(default_factory=list)
    active: int = 0
    peak: int = 0


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server(url="")

    async def handle(request: web.Request) -> web.Response:
        state.hits.append(time.monotonic())
        state.active += 1
        state.peak = max(state.peak, state.active)
        try:
            status, delay, retry_after = state.plan.pop(0) if state.plan else (200, 0.002, None)
            await asyncio.sleep(delay)
            headers = {"Retry-After": retry_after} if retry_after else {}
            body = await request.json()
            return web.json_response({"text": f"hi {body['last']}"}, status=status, headers=headers)
        finally:
            state.active -= 1

    app = web.Application()
    app.router.add_post("/gen", handle)
    runner = web.AppRunner(app, handler_cancellation=True)  # a client timeout ends the slow handler
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    state.url = f"http://127.0.0.1:{port}/gen"
    yield state
    await runner.cleanup()


class HttpAPI(ModelAPI):
    provider = "http-test"

    def __init__(self, url: str) -> None:
        super().__init__("fake-paid")
        self.url = url
        self.session: aiohttp.ClientSession | None = None

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        if self.session is None:
            self.session = aiohttp.ClientSession()
        async with self.session.post(self.url, json={"last": messages[-1].content}) as resp:
            if resp.status == 429:
                ra = resp.headers.get("Retry-After")
                wait = float(ra) if ra else None
                raise RateLimitError("429 Too Many Requests", status=429, retry_after=wait)
            if resp.status >= 500:
                raise TransientModelError(f"server error {resp.status}", status=resp.status)
            if resp.status >= 400:
                raise FatalModelError(f"client error {resp.status}", status=resp.status)
            data = await resp.json()
        return ModelOutput(text=data["text"], usage=Usage(input_tokens=10, output_tokens=5))

    async def aclose(self) -> None:
        if self.session is not None:
            await self.session.close()


def make(server: Server, **kw: object) -> Model:
    policy = kw.pop("retry", RetryPolicy(max_attempts=4, initial_wait=0.001, max_wait=0.01, jitter=0.0))
    return Model(HttpAPI(server.url), retry=policy, prices=PriceTable({"fake-paid": Price(1, 1)}), **kw)  # type: ignore[arg-type]


async def test_429_retry_after_is_honoured(server: Server) -> None:
    server.plan = [(429, 0.0, "0.2")]
    model = make(server, limiter=AdaptiveLimiter(8, cooldown_s=0))
    try:
        out = await asyncio.wait_for(model.generate(HELLO), 30)
    finally:
        await model.aclose()
    assert out.text == "hi hello"
    assert len(server.hits) == 2
    assert server.hits[1] - server.hits[0] >= 0.2
    assert model.limiter.current_limit == 4
    assert model.usage.model(model.spec).rate_limited == 1


async def test_500_then_ok_and_400_fatal(server: Server) -> None:
    server.plan = [(500, 0.0, None), (503, 0.0, None), (200, 0.0, None), (400, 0.0, None)]
    model = make(server)
    try:
        assert (await asyncio.wait_for(model.generate(HELLO), 30)).text == "hi hello"
        with pytest.raises(FatalModelError, match="400"):
            await asyncio.wait_for(model.generate(HELLO), 30)
    finally:
        await model.aclose()
    assert len(server.hits) == 4
    stats = model.usage.model(model.spec)
    assert (stats.retries, stats.errors, stats.calls) == (2, 1, 1)


async def test_slow_answer_times_out_and_is_retried(server: Server) -> None:
    server.plan = [(200, 30.0, None)]
    policy = RetryPolicy(max_attempts=3, initial_wait=0.001, jitter=0.0, timeout_s=0.2)
    model = make(server, retry=policy)
    try:
        out = await asyncio.wait_for(model.generate(HELLO), 30)
    finally:
        await model.aclose()
    assert out.text == "hi hello"
    assert len(server.hits) == 2
    assert model.usage.model(model.spec).retries == 1


async def test_server_sees_at_most_the_limit(server: Server) -> None:
    model = make(server, max_concurrency=5)
    try:
        outs = await asyncio.wait_for(
            asyncio.gather(*(model.generate([Message(role="user", content=str(i))]) for i in range(60))), 60
        )
    finally:
        await model.aclose()
    assert sorted(o.text for o in outs) == sorted(f"hi {i}" for i in range(60))
    assert 1 <= server.peak <= 5
