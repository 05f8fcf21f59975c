"""One agent exchange (`uxbench.mining.llm.ask`), with the agents' correction turn and their counts.

On an unusable answer the correction turn quotes the model's answer back as the assistant turn and lists
the problems (in the prompt language), so the request stays deterministic and cacheable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from uxbench.data.schema import Message
from uxbench.mining.agents.models import AgentReport
from uxbench.mining.agents.prompting import Lang, render
from uxbench.mining.llm import Exchange, ask, correction_turns
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model

T = TypeVar("T")
_MAX_PROBLEMS = 8
_PROBLEM_CHARS = 200


def correction(lang: Lang, problems: list[str]) -> str:
    shown = [p[:_PROBLEM_CHARS] for p in problems[:_MAX_PROBLEMS]]
    if len(problems) > _MAX_PROBLEMS:
        shown.append(f"(+{len(problems) - _MAX_PROBLEMS} more)")
    return render(lang, "retry", problems="; ".join(shown))


async def ask_agent(
    model: Model,
    messages: list[Message],
    config: GenerateConfig,
    parse: Callable[[str], tuple[T | None, list[str]]],
    *,
    lang: Lang,
    stage: str,
    report: AgentReport,
) -> Exchange[T]:
    """Up to two attempts, counted in `report` under `stage` (calls, retries, failures; in flight meanwhile)."""
    report.bump("in_flight", stage)
    try:
        ex = await ask(model, messages, config, parse, correction_turns(lambda problems: correction(lang, problems)))
    finally:
        report.bump("in_flight", stage, -1)
    for _ in range(ex.attempts):
        report.bump("calls", stage)
    if ex.attempts > 1:
        report.bump("retries", stage)
    if not ex.ok:
        report.bump("failures", stage)
    return ex
