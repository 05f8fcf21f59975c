"""Settings of the UX Judge task: the judge's prompt (shared `PromptOptions`) plus generation settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from uxbench.scoring.prompts.options import (
    FORMULATIONS,
    STRATEGIES,
    Formulation,
    JudgeLang,
    PromptOptions,
    Strategy,
    default_likert_threshold,
)

__all__ = [
    "FORMULATIONS",
    "STRATEGIES",
    "Formulation",
    "JudgeLang",
    "JudgeOptions",
    "Strategy",
    "default_likert_threshold",
]


class JudgeOptions(PromptOptions):
    """How the judge under test is asked. Every field is recorded in the run manifest and the run id."""

    temperature: float | None = 0.0
    """Sampling temperature of every call (None = provider default)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Token cap of every call. None (default) leaves the provider's for text verdicts: reasoning models spend
    output tokens on hidden reasoning, so a small cap returns an empty answer instead of a verdict. With
    `verdict_from=logprobs` the default is a few tokens (the verdict is read at the first one)."""
    reasoning_effort: str | None = None
    """Reasoning effort for reasoning models (low / medium / high), passed through."""
    fit_history: bool = False
    """A conversation longer than the judge under test accepts: drop its oldest history messages until it fits
    (recorded per sample in `extra.history_cut`) instead of recording it as `too_long`."""
    verdict_from: Literal["text", "logprobs"] = "text"
    """binary only: `logprobs` reads the verdict as p(good) / (p(good) + p(bad)) at the answer's first non-blank
    token (the GRM protocol: choice log-probabilities of local models, top log-probabilities of API models),
    falling back to the text when neither verdict token is found; the probability is kept as the score."""

    @model_validator(mode="after")
    def _check_verdict_source(self) -> JudgeOptions:
        if self.verdict_from == "logprobs" and self.formulation != "binary":
            raise ValueError("verdict_from=logprobs needs the binary formulation")
        return self
