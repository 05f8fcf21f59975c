"""The outcome of one judging: what a judge said about one reply, and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ModelOutput, Usage


class ChatModel(Protocol):
    """What a judge needs of a model: `uxbench.models.model.Model` (or a test double) satisfies it."""

    async def generate(self, messages: list[Message], config: GenerateConfig | None = None) -> ModelOutput: ...


@dataclass
class Judgement:
    """A judge's reading of one reply."""

    label: str | None
    """good / bad (three_class: also neutral); None when the answer could not be read or scored."""
    score: float | None
    """A probability of good (probability verdicts) or a Likert value; None otherwise."""
    note: str
    """How the verdict was read, or why it could not be."""
    outputs: list[ModelOutput] = field(default_factory=list)
    """Every model call made for this judgement, in order (the last one holds the verdict)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Details worth keeping: language, profile, score status, emitted token, shortening step, ..."""

    @property
    def final(self) -> ModelOutput | None:
        return self.outputs[-1] if self.outputs else None

    def totals(self) -> dict[str, Any]:
        """usage, latency and cached flag summed over the calls (the fields of a stored record)."""
        return call_totals(self.outputs)


def call_totals(outputs: list[ModelOutput]) -> dict[str, Any]:
    """The usage fields of a stored record (`runs.records`), summed over a sample's calls."""
    if len(outputs) == 1:  # the usual sample: one call, nothing to add up
        usage = outputs[0].usage
        cached = usage if outputs[0].cached else Usage()
    else:
        usage, cached = Usage(), Usage()
        for out in outputs:
            usage = usage + out.usage
            if out.cached:
                cached = cached + out.usage
    n_cached = sum(1 for out in outputs if out.cached)
    return {
        "usage": usage,
        "cached_usage": cached,
        "n_calls": len(outputs),
        "n_cached": n_cached,
        "latency_s": sum(out.latency_s for out in outputs),
        "cached": bool(outputs) and n_cached == len(outputs),
    }
