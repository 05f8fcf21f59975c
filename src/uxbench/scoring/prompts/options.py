"""How a judge is asked: formulation, prompting strategy, language, truncation. Shared by every judge that uses
the project's judge templates (Task 1's judge under test, the GRM protocol, the pointwise LLM judge)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Formulation = Literal["binary", "three_class", "likert", "rubric"]
Strategy = Literal["zero_shot", "cot", "few_shot", "user_modeling"]
JudgeLang = Literal["zh", "en", "auto"]
FORMULATIONS: tuple[Formulation, ...] = ("binary", "three_class", "likert", "rubric")
DEFAULT_RUBRIC = "mt_bench"
STRATEGIES: tuple[Strategy, ...] = ("zero_shot", "cot", "few_shot", "user_modeling")


def default_likert_threshold(scale: int) -> int:
    """Lowest score strictly above the scale's midpoint: 1-4 -> 3, 1-5 -> 4, 1-6 -> 4, 1-7 -> 5."""
    return (scale + 1) // 2 + 1


class PromptOptions(BaseModel):
    """The prompt a judge sees. Every field is recorded in the run manifest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    formulation: Formulation = "binary"
    """binary (好/差, good/bad), three_class (adds 中 / neutral), likert (an integer 1..likert_scale) or rubric
    (a score per dimension of `rubric`, folded into good / bad by `scoring.rubric`'s rule)."""
    strategy: Strategy = "zero_shot"
    """zero_shot, cot (reason, then a final verdict line), few_shot (worked examples) or user_modeling
    (infer the user first, then judge: two calls)."""
    lang: JudgeLang = "auto"
    """Prompt language; auto = the case's own `lang`, else zh when the case text is mostly Chinese."""
    few_shot_k: int = Field(default=2, ge=1)
    """Number of worked examples for few_shot (the bundled files hold 4 per language)."""
    likert_scale: int = Field(default=5, ge=3, le=10)
    """N of the 1..N Likert scale (the paper compared 4 to 7)."""
    likert_threshold: int | None = None
    """Scores >= this count as good; None = `default_likert_threshold(likert_scale)` (midpoint is bad)."""
    max_chars: int = Field(default=4000, ge=200)
    """Each message, the query and the reply are cut to this many characters, with a visible marker."""
    rubric: str | None = None
    """rubric formulation: mt_bench (default), flask, helpsteer2, ux_general, or a rubric file (YAML / JSON)."""

    @model_validator(mode="before")
    @classmethod
    def _default_rubric(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("formulation") == "rubric" and not data.get("rubric"):
            return {**data, "rubric": DEFAULT_RUBRIC}
        return data

    @model_validator(mode="after")
    def _check_rubric(self) -> PromptOptions:
        if self.rubric is not None and self.formulation != "rubric":
            raise ValueError(f"rubric needs the rubric formulation (the formulation is {self.formulation})")
        if self.formulation == "rubric" and self.strategy == "few_shot":
            raise ValueError("the rubric formulation has no few_shot strategy: a worked example would need "
                             "per-dimension scores nobody measured; use zero_shot, cot or user_modeling")
        return self

    @model_validator(mode="after")
    def _check_threshold(self) -> PromptOptions:
        if self.likert_threshold is not None and not 2 <= self.likert_threshold <= self.likert_scale:
            raise ValueError(
                f"likert_threshold must be between 2 and likert_scale ({self.likert_scale}), "
                f"got {self.likert_threshold}"
            )
        return self

    @property
    def threshold(self) -> int:
        """The Likert threshold in force."""
        if self.likert_threshold is not None:
            return self.likert_threshold
        return default_likert_threshold(self.likert_scale)
