"""A server that answers one request at a time (llama.cpp with one slot): the runtime must shrink to what it
serves instead of queueing requests there until they time out and retrying them at the same concurrency.

The loopback server here is real (HTTP on 127.0.0.1) and works on one request at a time, each for
`LATENCY_MS`; the client's timeout is shorter than the queue that the starting concurrency builds, so the
old limiter (which shrank on 429 only) timed out and retried without end. The assertions are on outcomes,
attempt counts and limits, never on durations.
"""

from __future__ import annotations

import asyncio

from uxbench.data.schema import Message
from uxbench.errors import ModelError
from uxbench.models.model import Model
from uxbench.models.registry import create_model_api
from uxbench.runtime.retry import RetryPolicy
from uxbench.testing import LoopbackConfig, LoopbackServer

LATENCY_MS = 40
TIMEOUT_S = 0.4  # ten answers' worth: a queue of 16 is longer than this
CALLS = 48
START = 16


def _model(server: LoopbackServer) -> Model:
    api = create_model_api("openai:loopback", {"base_url": server.base_url, "timeout": str(TIMEOUT_S)})
    policy = RetryPolicy(max_attempts=6, initial_wait=0.05, max_wait=0.2, jitter=0.0)
    return Model(api, max_concurrency=START, retry=policy)


async def _ask_all(model: Model) -> list[str | ModelError]:
    async def one(i: int) -> str | ModelError:
        try:
            out = await model.generate([Message(role="user", content=f"question {i} [[SAY:answer {i}]]")])
        except ModelError as err:
            return err
        return out.text

    try:
        return list(await asyncio.gather(*(one(i) for i in range(CALLS))))
    finally:
        await model.aclose()


async def test_single_slot_server_converges_instead_of_timing_out() -> None:
    with LoopbackServer(LoopbackConfig(latency_ms=LATENCY_MS, max_inflight=1)) as server:
        model = _model(server)
        results = await _ask_all(model)
        stats = server.stats
        assert stats.max_processing == 1  # it really serves one at a time
    errors = [r for r in results if isinstance(r, ModelError)]
    assert errors == []
    assert results == [f"answer {i}" for i in range(CALLS)]
    usage = model.usage.model(model.spec, None)
    # The first burst of 16 is sent before anything is known: the requests at the back of that queue
    # (and the retries that queue behind the abandoned ones) time out. After that it serves one or two
    # at a time and nothing times out any more.
    assert usage.retries <= 2 * START
    assert stats.requests == CALLS + usage.retries
    limits = [limit for _, limit in model.limiter.history]
    assert limits[0] == START and model.limiter.current_limit <= 2
    settled = next(i for i, limit in enumerate(limits) if limit <= 2)
    assert max(limits[settled:]) <= 2  # once there, growth is tried one step and taken back
