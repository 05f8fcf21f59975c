"""How mining asks a model: one exchange loop, one way to build the model, one bounded fan-out.

`ask`: send a request, check the answer with a parser, and on an unusable answer ask once more with the
problems; a model error (after the runtime's own retries) ends the exchange at once and is recorded, never
guessed around. How the second request is built is the caller's choice (`correction_turns` quotes the
answer back and lists the problems; the follow-up check repeats its request with a reminder in front), so
each request stays deterministic and cacheable.

`open_model`: `uxbench.models.model.create_model` with its SQLite response cache and the concurrency cap,
so every model call of mining goes through the runtime: the shared adaptive limiter (one per endpoint),
retries, the cache (a rerun replays finished calls) and usage accounting.

`map_bounded`: run a coroutine per item with at most the limiter's ceiling of them at once (the limiter
decides how many calls are really in flight), results in input order, a tick per finished item.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from uxbench.data.schema import Message
from uxbench.errors import ModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model, create_model
from uxbench.runtime.cache import ResponseCache

T = TypeVar("T")
R = TypeVar("R")
Retry = Callable[[list[Message], str, list[str]], list[Message]]
"""(the request, the unusable answer, its problems) -> the second request."""
Tick = Callable[[int], None]
"""Called with the number of items finished so far."""


@dataclass
class Exchange(Generic[T]):
    """The attempts of one exchange: parsed values (None where unusable) and raw answers, in order."""

    values: list[T | None] = field(default_factory=list)
    raws: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Problems of the last answer (empty when it was usable)."""
    error: str | None = None
    """A model error that ended the exchange."""
    error_kind: str | None = None
    """What kind of model error: its class, and the HTTP status when there was one (`FatalModelError HTTP
    401`), for counting failures by cause."""
    attempts: int = 0
    """Requests sent (the one that failed with a model error included)."""

    @property
    def ok(self) -> bool:
        return self.error is None and not self.problems and bool(self.values)

    @property
    def value(self) -> T | None:
        """The usable value, or None."""
        return self.values[-1] if self.ok else None

    @property
    def last_raw(self) -> str | None:
        return self.raws[-1] if self.raws else None

    def failure(self) -> str:
        if self.error is not None:
            return self.error
        return "invalid output after a retry: " + "; ".join(self.problems)


async def ask(
    model: Model,
    messages: list[Message],
    config: GenerateConfig,
    parse: Callable[[str], tuple[T | None, list[str]]],
    retry: Retry,
) -> Exchange[T]:
    """Up to two requests; the second (built by `retry`) only when the first answer had problems.
    `parse` turns the model's text into (value, problems): the value is usable when there are none."""
    ex: Exchange[T] = Exchange()
    request = list(messages)
    for attempt in (1, 2):
        ex.attempts = attempt
        try:
            out = await model.generate(request, config)
        except ModelError as err:
            ex.error = f"model error: {err}"
            ex.error_kind = type(err).__name__ + (f" HTTP {err.status}" if err.status else "")
            return ex
        value, problems = parse(out.text)
        ex.values.append(value)
        ex.raws.append(out.text)
        ex.problems = problems
        if not problems:
            return ex
        if attempt == 1:
            request = retry(request, out.text, problems)
    return ex


def correction_turns(correction: Callable[[list[str]], str]) -> Retry:
    """The retry that quotes the unusable answer back as the assistant turn and lists its problems."""

    def build(request: list[Message], answer: str, problems: list[str]) -> list[Message]:
        return [*request, Message(role="assistant", content=answer or "(empty)"),
                Message(role="user", content=correction(problems))]

    return build


def default_cache_path(work: Path) -> Path:
    """The LLM stages' response cache inside a mining work directory (reruns replay it)."""
    return work / "responses.sqlite"


@asynccontextmanager
async def open_model(spec: str, args: dict[str, str] | None, *, cache_path: Path,
                     concurrency: int | None = None) -> AsyncIterator[Model]:
    """The model with its response cache, closed (and the cache with it) on exit. `concurrency` caps the
    calls in flight (default: the provider's); the limiter adapts below it."""
    cache = ResponseCache(cache_path)
    try:
        model = create_model(spec, args, cache=cache, max_concurrency=concurrency)
        try:
            yield model
        finally:
            await model.aclose()
    finally:
        cache.close()


async def map_bounded(items: Sequence[T], fn: Callable[[T], Awaitable[R]], width: int,
                      tick: Tick | None = None) -> list[R]:
    """`fn(item)` for every item, at most `width` at once; results in input order."""
    results: list[R | None] = [None] * len(items)
    next_index = 0
    done = 0

    async def worker() -> None:
        nonlocal next_index, done
        while next_index < len(items):
            i = next_index
            next_index += 1
            results[i] = await fn(items[i])
            done += 1
            if tick is not None:
                tick(done)

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(width, len(items))))]
    try:
        await asyncio.gather(*workers)
    except BaseException:  # one item failed for good (a guard stopped the pass): the others stop too
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    return results  # type: ignore[return-value]  # every slot was filled
