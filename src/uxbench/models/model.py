"""`Model`: a provider (`ModelAPI`) plus the runtime: concurrency limit, retries, response cache, usage.

Call flow of `generate`:
1. With a cache, the request key is the sha256 of (provider identity, messages, non-default generation
   settings, optional salt). A hit returns the stored output with `cached=True`: no slot, no call.
   Sampling settings are part of the key but do not bypass it: a request with temperature > 0 that was
   answered before gets the same answer again. Pass `cache_salt` (say, the epoch) for fresh samples.
2. On a miss, each attempt takes a slot of the connection's adaptive limiter; a `RateLimitError` halves
   the limit and is retried after at least its Retry-After; successes let the limit grow back.
3. Only successful outputs are stored. Accounting: `cost_usd` counts fresh calls only; cache hits add
   their tokens to `cached_*_tokens`, and `cost_usd_if_uncached` prices both.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from uxbench.data.schema import Message
from uxbench.errors import ModelError, RateLimitError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput
from uxbench.models.registry import create_model_api
from uxbench.redact import scrub, scrub_exception, scrub_model
from uxbench.runtime.cache import ResponseCache, request_key
from uxbench.runtime.cost import PriceTable, UsageTracker
from uxbench.runtime.limiter import AdaptiveLimiter, shared_limiter
from uxbench.runtime.retry import RetryPolicy, attempt_once, retry_failed

log = logging.getLogger(__name__)

_DEFAULT_CONFIG = GenerateConfig()
_DEFAULT_PRICES: PriceTable | None = None


def _default_prices() -> PriceTable:
    global _DEFAULT_PRICES
    if _DEFAULT_PRICES is None:
        _DEFAULT_PRICES = PriceTable.default()
    return _DEFAULT_PRICES


def message_key_dict(m: Message) -> dict[str, Any]:
    """The parts of a message that reach a provider (timestamps and turn numbers do not). Tool fields only when
    set, so the keys of text conversations stay what they were."""
    key: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.reasoning is not None:
        key["reasoning"] = m.reasoning
    if m.tool_calls:
        key["tool_calls"] = [call.model_dump(exclude_none=True) for call in m.tool_calls]
    if m.tool_call_id is not None:
        key["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        key["name"] = m.name
    return key


class Model:
    """A `ModelAPI` with limiter, retry, cache and accounting. Create with `create_model` or directly."""

    def __init__(
        self,
        api: ModelAPI,
        *,
        max_concurrency: int | None = None,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        usage: UsageTracker | None = None,
        limiter: AdaptiveLimiter | None = None,
    ) -> None:
        self.api = api
        self.spec: str = api.spec
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.limiter = limiter or AdaptiveLimiter(max_concurrency or api.default_max_concurrency)
        self.usage = usage or UsageTracker()
        price = (prices or _default_prices()).lookup(api.model_name, provider=api.provider)
        self._stats = self.usage.model(self.spec, price)
        self._identity = api.cache_identity()
        self._cfg_memo: tuple[GenerateConfig, dict[str, Any]] | None = None
        self.on_send: Callable[[], None] | None = None
        """Called before every request sent to the provider (each attempt; never for a cache hit): a run
        counts them where a kill cannot lose them (committed before it returns), since a request in flight at a kill
        was sent all the same."""

    def _config_dict(self, config: GenerateConfig) -> dict[str, Any]:
        # Tasks reuse one config object for thousands of calls; dump it once. Non-default fields only,
        # so adding a field to GenerateConfig later does not invalidate existing cache entries.
        memo = self._cfg_memo
        if memo is not None and memo[0] is config:
            return memo[1]
        dumped = config.model_dump(exclude_defaults=True)
        self._cfg_memo = (config, dumped)
        return dumped

    def cache_key(
        self, messages: list[Message], config: GenerateConfig | None = None, cache_salt: str | None = None
    ) -> str:
        cfg = self._config_dict(config or _DEFAULT_CONFIG)
        if cache_salt is not None:
            cfg = {**cfg, "__salt__": cache_salt}
        return request_key(self._identity, [message_key_dict(m) for m in messages], cfg)

    async def generate(
        self,
        messages: list[Message],
        config: GenerateConfig | None = None,
        *,
        use_cache: bool = True,
        cache_salt: str | None = None,
    ) -> ModelOutput:
        """One completion, from the cache when possible. Raises `ModelError` once retries are exhausted."""
        cfg = config or _DEFAULT_CONFIG
        stats = self._stats
        stats.requests += 1
        cache = self.cache if use_cache else None
        key: str | None = None
        if cache is not None:
            key = self.cache_key(messages, cfg, cache_salt)
            raw = cache.get(key)
            if raw is not None:
                try:
                    hit = ModelOutput.model_validate_json(raw)
                except ValidationError:
                    log.warning("Ignoring an unreadable cache entry %s for %s", key, self.spec)
                else:
                    hit.cached = True
                    stats.record_cache_hit(hit.usage.input_tokens, hit.usage.output_tokens)
                    return hit

        api = self.api
        sent = 0.0

        def call() -> Awaitable[ModelOutput]:
            # A plain function that hands over the provider's coroutine: one coroutine less per call.
            nonlocal sent
            if self.on_send is not None:
                self.on_send()
            sent = time.perf_counter()
            return api.generate(messages, cfg)

        # call_with_retry, unrolled: its first attempt awaited here (one coroutine less per call).
        first: ModelError | None = None
        try:
            out = await attempt_once(call, self.retry.timeout_s, self.limiter)
        except ModelError as err:
            first = err
        try:
            if first is not None:
                out = await retry_failed(call, self.retry, first, limiter=self.limiter, on_retry=self._on_retry)
        except ModelError as err:
            scrub_exception(err)  # an error page may echo the request's key or headers
            stats.errors += 1
            if isinstance(err, RateLimitError):
                stats.rate_limited += 1  # the last attempt's; earlier ones are counted in _on_retry
            raise
        if not out.latency_s:  # (the successful attempt was the last one sent)
            out.latency_s = time.perf_counter() - sent
        # An echoing endpoint: no key reaches a record or the cache (the answer's text is all it can echo into).
        out = scrub_model(out, urls=False, only=("text", "reasoning", "model"))
        u = out.usage
        stats.record_call(u.input_tokens, u.output_tokens, u.reasoning_tokens, out.latency_s)
        if cache is not None and key is not None:
            cache.put(key, out.model_dump_json())
        return out

    def _on_retry(self, attempt: int, error: ModelError, wait_s: float) -> None:
        self._stats.retries += 1
        if isinstance(error, RateLimitError):
            self._stats.rate_limited += 1
        log.info(
            "%s: attempt %d failed (%s); retrying in %.2f s (concurrency limit %d)",
            self.spec, attempt, scrub(str(error)), wait_s, self.limiter.current_limit,
        )

    async def aclose(self) -> None:
        """Close the provider. The cache is left open: the caller that made it owns it."""
        await self.api.aclose()

    def __repr__(self) -> str:
        return f"Model({self.spec!r}, limit={self.limiter.current_limit}, cache={self.cache is not None})"


def create_model(
    spec: str,
    args: dict[str, str] | None = None,
    *,
    max_concurrency: int | None = None,
    cache: ResponseCache | None = None,
    retry: RetryPolicy | None = None,
    prices: PriceTable | None = None,
    usage: UsageTracker | None = None,
) -> Model:
    """Build `provider:model` with its runtime. Models with the same connection key share one limiter."""
    api = create_model_api(spec, args)
    limiter = shared_limiter(api.connection_key(), max_concurrency or api.default_max_concurrency)
    return Model(api, retry=retry, cache=cache, prices=prices, usage=usage, limiter=limiter)
