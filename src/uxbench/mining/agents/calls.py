"""One agent exchange: ask, check the answer, and on an unusable answer ask once more with the problems.

A model error (after the model layer's own retries) ends the exchange at once: it is recorded, never
guessed around. The correction turn quotes the model's answer back as the assistant turn, so the request
stays deterministic and cacheable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from uxbench.data.schema import Message
from uxbench.errors import ModelError
from uxbench.mining.agents.models import AgentReport
from uxbench.mining.agents.prompting import Lang, render
from uxbench.models.api import GenerateConfig, ModelOutput

T = TypeVar("T")
_MAX_PROBLEMS = 8
_PROBLEM_CHARS = 200


class GenerateModel(Protocol):
    """What the agents need of a model (`uxbench.models.model.Model` provides it)."""

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput: ...


@dataclass
class Exchange(Generic[T]):
    """The attempts of one exchange: parsed values (None where unusable) and raw answers, in order."""

    values: list[T | None] = field(default_factory=list)
    raws: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Problems of the last answer (empty when it was usable)."""
    error: str | None = None
    """A model error that ended the exchange."""

    @property
    def ok(self) -> bool:
        return self.error is None and not self.problems and bool(self.values)

    @property
    def last_raw(self) -> str | None:
        return self.raws[-1] if self.raws else None

    def failure(self) -> str:
        if self.error is not None:
            return self.error
        return "invalid output after a retry: " + "; ".join(self.problems)


def correction(lang: Lang, problems: list[str]) -> str:
    shown = [p[:_PROBLEM_CHARS] for p in problems[:_MAX_PROBLEMS]]
    if len(problems) > _MAX_PROBLEMS:
        shown.append(f"(+{len(problems) - _MAX_PROBLEMS} more)")
    return render(lang, "retry", problems="; ".join(shown))


async def ask(
    model: GenerateModel,
    messages: list[Message],
    config: GenerateConfig,
    parse: Callable[[str], tuple[T | None, list[str]]],
    *,
    lang: Lang,
    stage: str,
    report: AgentReport,
) -> Exchange[T]:
    """Up to two attempts; the second only when the first answer had problems."""
    ex: Exchange[T] = Exchange()
    history = list(messages)
    for attempt in (1, 2):
        report.bump("calls", stage)
        try:
            out = await model.generate(history, config)
        except ModelError as err:
            ex.error = f"model error: {err}"
            report.bump("failures", stage)
            return ex
        value, problems = parse(out.text)
        ex.values.append(value)
        ex.raws.append(out.text)
        ex.problems = problems
        if not problems:
            return ex
        if attempt == 1:
            report.bump("retries", stage)
            history = [
                *history,
                Message(role="assistant", content=out.text or "(empty)"),
                Message(role="user", content=correction(lang, problems)),
            ]
    report.bump("failures", stage)
    return ex
