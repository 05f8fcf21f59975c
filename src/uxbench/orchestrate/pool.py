"""A bounded worker pool: items stream from a producer through a queue to N workers, memory flat in their count."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


async def run_pool(
    items: Iterable[T] | AsyncIterator[T], worker: Callable[[T], Awaitable[None]], concurrency: int
) -> None:
    """Call `worker` on every item with at most `concurrency` in flight. The first exception (from the producer
    or a worker) cancels everything else and is raised; items already finished stay finished."""
    queue: asyncio.Queue[tuple[T] | None] = asyncio.Queue(maxsize=max(1, concurrency) * 2)

    async def produce() -> None:
        if isinstance(items, AsyncIterator):
            async for item in items:
                await queue.put((item,))
        else:
            for item in items:
                await queue.put((item,))
        for _ in range(concurrency):
            await queue.put(None)

    async def work() -> None:
        while (entry := await queue.get()) is not None:
            await worker(entry[0])

    await run_all([produce(), *(work() for _ in range(max(1, concurrency)))])


async def run_all(coros: list[Coroutine[Any, Any, None]]) -> None:
    """Run coroutines together; the first exception cancels the others (a TaskGroup, for Python 3.10)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
