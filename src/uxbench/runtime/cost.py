"""Token and cost accounting.

Prices come from the bundled `prices.yaml` (dated list prices; they change), extended or overridden by
`$UXBENCH_PRICES` and an explicit file. A paid model whose price is unknown has cost `None`, shown as
"unknown", never a made-up 0. In-process and offline providers (hf, scripted, replay) cost 0.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from uxbench.data import user_files
from uxbench.errors import ConfigError, DataError

_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it; our own files

LOCAL_PROVIDERS = frozenset({"hf", "scripted", "replay"})
"""Providers that run on this machine or replay stored answers: no per-token price."""

_BOUNDARY = "-_:@./"


@dataclass(frozen=True)
class Price:
    """USD per one million tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


FREE = Price(0.0, 0.0)


def _parse(data: Any, source: str) -> tuple[dict[str, Price], str | None]:
    if not isinstance(data, Mapping):
        raise ConfigError(f"Price file {source} must be a mapping of model name -> {{input, output}}")
    as_of = data.get("as_of")
    models = data.get("models", data)
    if not isinstance(models, Mapping):
        raise ConfigError(f"Price file {source}: 'models' must map model name -> {{input, output}}")
    out: dict[str, Price] = {}
    for name, entry in models.items():
        if name in ("as_of", "currency", "unit") and models is data:
            continue
        if not isinstance(entry, Mapping) or "input" not in entry or "output" not in entry:
            raise ConfigError(
                f"Price file {source}: entry '{name}' needs 'input' and 'output' (USD per 1M tokens), "
                f"for example {name}: {{input: 2.5, output: 10}}"
            )
        try:
            price = Price(float(entry["input"]), float(entry["output"]))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"Price file {source}: entry '{name}' has a non-numeric price") from exc
        if not (0 <= price.input < math.inf and 0 <= price.output < math.inf):  # nan fails both comparisons
            raise ConfigError(f"Price file {source}: entry '{name}' has a negative, infinite or NaN price (USD per 1M "
                              "tokens: a finite number of 0 or more)")
        out[str(name)] = price
    return out, str(as_of) if as_of is not None else None


class PriceTable:
    """Model name -> `Price`, matched exactly, then by longest prefix (at a - _ : @ . / boundary)."""

    def __init__(self, prices: Mapping[str, Price] | None = None, *, as_of: str | None = None) -> None:
        self.prices: dict[str, Price] = dict(prices or {})
        self.as_of = as_of

    @classmethod
    def bundled(cls) -> PriceTable:
        text = resources.files("uxbench.runtime").joinpath("prices.yaml").read_text(encoding="utf-8")
        prices, as_of = _parse(yaml.load(text, Loader=_FAST_LOADER), "bundled prices.yaml")
        return cls(prices, as_of=as_of)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PriceTable:
        """Read a YAML or JSON price file (`{models: {name: {input, output}}}` or a flat mapping)."""
        p = Path(path).expanduser()
        try:
            data = user_files.load_file(p, f"price file {p}")
        except OSError as exc:
            raise ConfigError(f"Cannot read the price file {p}: {exc.strerror or exc}") from None
        except DataError as exc:  # not YAML / JSON, or over the limits of a user's file
            raise ConfigError(str(exc)) from None
        prices, as_of = _parse(data, str(p))
        return cls(prices, as_of=as_of)

    @classmethod
    def default(cls, path: str | os.PathLike[str] | None = None) -> PriceTable:
        """Bundled prices, then `$UXBENCH_PRICES`, then `path`; later entries win."""
        table = cls.bundled()
        env = os.environ.get("UXBENCH_PRICES")
        if env:
            table = table.merged(cls.load(env))
        if path is not None:
            table = table.merged(cls.load(path))
        return table

    def merged(self, other: PriceTable) -> PriceTable:
        return PriceTable({**self.prices, **other.prices}, as_of=self.as_of)

    def _match(self, name: str) -> Price | None:
        exact = self.prices.get(name)
        if exact is not None:
            return exact
        best: str | None = None
        for key in self.prices:
            if (
                len(name) > len(key)
                and name.startswith(key)
                and name[len(key)] in _BOUNDARY
                and (best is None or len(key) > len(best))
            ):
                best = key
        return self.prices[best] if best is not None else None

    def lookup(self, model: str, provider: str | None = None) -> Price | None:
        """Price of `model` (served by `provider`), or None when unknown."""
        if provider is not None:
            qualified = self.prices.get(f"{provider}:{model}")
            if qualified is not None:
                return qualified
            if provider in LOCAL_PROVIDERS:
                return FREE
        price = self._match(model)
        if price is None and "/" in model:
            price = self._match(model.rsplit("/", 1)[1])
        return price


@dataclass(slots=True)
class ModelUsage:
    """Counters for one model. Token counts of fresh calls and of cache hits are kept apart."""

    price: Price | None = None
    requests: int = 0
    """generate() calls, cached or not."""
    calls: int = 0
    """Successful provider calls (cache misses)."""
    cache_hits: int = 0
    retries: int = 0
    """Failed attempts that were tried again."""
    rate_limited: int = 0
    """Attempts answered with a rate-limit / overload error."""
    errors: int = 0
    """generate() calls that ended in an error after all retries."""
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    cached_output_tokens: int = 0
    latency_s_sum: float = 0.0
    """Sum of the latency of successful fresh calls."""

    def record_call(
        self, input_tokens: int, output_tokens: int, reasoning_tokens: int, latency_s: float
    ) -> None:
        self.calls += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.reasoning_tokens += reasoning_tokens
        self.latency_s_sum += latency_s

    def record_cache_hit(self, input_tokens: int, output_tokens: int) -> None:
        self.cache_hits += 1
        self.cached_input_tokens += input_tokens
        self.cached_output_tokens += output_tokens

    @property
    def cost_usd(self) -> float | None:
        """Money spent on fresh calls; None when the price is unknown and calls were made."""
        if self.price is None:
            return None if self.calls else 0.0
        return self.price.cost(self.input_tokens, self.output_tokens)

    @property
    def cost_usd_if_uncached(self) -> float | None:
        """What the same requests would have cost without the cache."""
        if self.price is None:
            return None if self.calls or self.cache_hits else 0.0
        return self.price.cost(
            self.input_tokens + self.cached_input_tokens, self.output_tokens + self.cached_output_tokens
        )

    def to_dict(self) -> dict[str, Any]:
        cost = self.cost_usd
        if_uncached = self.cost_usd_if_uncached
        return {
            "requests": self.requests,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "rate_limited": self.rate_limited,
            "errors": self.errors,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cached_output_tokens": self.cached_output_tokens,
            "latency_s_sum": round(self.latency_s_sum, 6),
            "mean_latency_s": round(self.latency_s_sum / self.calls, 6) if self.calls else None,
            "price_per_1m": (
                None if self.price is None else {"input": self.price.input, "output": self.price.output}
            ),
            "cost_usd": None if cost is None else round(cost, 6),
            "cost_usd_if_uncached": None if if_uncached is None else round(if_uncached, 6),
        }


class UsageTracker:
    """Usage per model spec (`provider:model`). Several `Model`s may share one tracker."""

    def __init__(self) -> None:
        self.models: dict[str, ModelUsage] = {}

    def model(self, spec: str, price: Price | None = None) -> ModelUsage:
        """The counters for `spec`, created (with `price`) on first use."""
        usage = self.models.get(spec)
        if usage is None:
            usage = self.models[spec] = ModelUsage(price=price)
        return usage

    def total_cost_usd(self) -> float | None:
        """Sum over models; None if any model that made calls has an unknown price."""
        total = 0.0
        for usage in self.models.values():
            cost = usage.cost_usd
            if cost is None:
                return None
            total += cost
        return total

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {spec: usage.to_dict() for spec, usage in self.models.items()}


def format_cost(cost: float | None) -> str:
    """'$0.0123' or 'unknown'."""
    return "unknown" if cost is None else f"${cost:.4f}"


def usage_from_totals(
    price: Price | None,
    *,
    requests: int,
    cache_hits: int,
    input_tokens: int,
    output_tokens: int,
    reasoning_tokens: int,
    cached_input_tokens: int,
    cached_output_tokens: int,
    latency_s_sum: float = 0.0,
) -> ModelUsage:
    """A `ModelUsage` rebuilt from stored per-sample totals (fresh and cached tokens apart), so that a run's
    usage and cost are sums over its records, whatever number of invocations produced them."""
    return ModelUsage(
        price=price, requests=requests, calls=requests - cache_hits, cache_hits=cache_hits,
        input_tokens=input_tokens, output_tokens=output_tokens, reasoning_tokens=reasoning_tokens,
        cached_input_tokens=cached_input_tokens, cached_output_tokens=cached_output_tokens,
        latency_s_sum=latency_s_sum,
    )


def unanswered_cost(entry: dict[str, Any]) -> dict[str, Any]:
    """Requests sent whose answers no record holds (retried, failed, or in flight when the run was killed): how
    many, and what they cost at most, at the mean cost of an answered request (a provider may bill them: counted
    as spent, apart). A usage entry of `usage_of` with `requests_sent`."""
    sent = entry.get("requests_sent")
    fresh = int(entry.get("requests") or 0) - int(entry.get("cache_hits") or 0)
    if not isinstance(sent, int) or sent <= fresh:
        return {"unanswered_requests": 0, "unanswered_cost_usd_max": 0.0}
    cost = entry.get("cost_usd")
    each = None if cost is None or fresh <= 0 else cost / fresh
    return {"unanswered_requests": sent - fresh,
            "unanswered_cost_usd_max": None if each is None else round(each * (sent - fresh), 6)}
