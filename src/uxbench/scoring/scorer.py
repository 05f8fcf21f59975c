"""A judge of generated replies (Tasks 2/3), chosen by `--judge-mode`: the GRM protocol or an LLM judge."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from uxbench.scoring.grm import GrmScorer
from uxbench.scoring.judgement import ChatModel, Judgement
from uxbench.scoring.pointwise import PointwiseJudge
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import JudgeLang, PromptOptions, Strategy

JudgeMode = Literal["grm", "pointwise"]


class JudgeSettings(BaseModel):
    """How replies are judged. Part of the judge's identity in a run (with the judge's model spec)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: JudgeMode = "grm"
    """grm: one token, verdict from its probabilities (the reward-model protocol); pointwise: any chat model
    writes its verdict (LLM-as-a-judge), read by the conservative parser."""
    lang: JudgeLang = "auto"
    """Template language of the judge prompt (auto: by the conversation's script)."""
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """grm: a reply is good when p(good) >= threshold."""
    strategy: Strategy = "zero_shot"
    """pointwise: zero_shot, cot (reason first; reasoning kept), few_shot or user_modeling."""
    temperature: float | None = 0.0
    """pointwise: sampling temperature of the judge."""
    max_tokens: int | None = Field(default=None, ge=1)
    """pointwise: token cap of the judge's answer (None: the provider's)."""
    reasoning_effort: str | None = None
    """pointwise: reasoning effort for reasoning judges."""


class ReplyScorer(Protocol):
    mode: str

    def settings(self) -> dict[str, Any]: ...

    def template_hashes(self) -> dict[str, str]: ...

    async def score(self, item: JudgeInput, model: ChatModel) -> Judgement: ...


class PointwiseScorer:
    """The LLM-as-a-judge fallback: the same good/bad question, answered in writing."""

    mode = "pointwise"

    def __init__(self, settings: JudgeSettings) -> None:
        self._settings = settings
        self.judge = PointwiseJudge(
            PromptOptions(formulation="binary", strategy=settings.strategy, lang=settings.lang),
            temperature=settings.temperature, max_tokens=settings.max_tokens,
            reasoning_effort=settings.reasoning_effort,
        )

    def settings(self) -> dict[str, Any]:
        s = self._settings
        return {"mode": self.mode, "lang": s.lang, "strategy": s.strategy, "temperature": s.temperature,
                "max_tokens": s.max_tokens, "reasoning_effort": s.reasoning_effort}

    def template_hashes(self) -> dict[str, str]:
        return self.judge.template_hashes()

    async def score(self, item: JudgeInput, model: ChatModel) -> Judgement:
        judgement = await self.judge.judge(item, model)
        judgement.extra.setdefault("score_status", "text")
        return judgement


def build_scorer(settings: JudgeSettings, *, judge_name: str = "the judge") -> ReplyScorer:
    if settings.mode == "grm":
        return GrmScorer(lang=settings.lang, threshold=settings.threshold, judge_name=judge_name)
    return PointwiseScorer(settings)


_FLAGS = {"mode": "--judge-mode", "threshold": "--grm-threshold", "strategy": "--judge-strategy",
          "lang": "--judge-lang"}


def judge_settings(**values: object) -> JudgeSettings:
    """Settings from user input (None = default), with a ConfigError naming the option for a bad value."""
    from pydantic import ValidationError

    from uxbench.errors import ConfigError

    try:
        return JudgeSettings.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as err:
        first = err.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "judge"
        raise ConfigError(f"{_FLAGS.get(field, field)}: {first['msg']} (got {first.get('input')!r})") from None
