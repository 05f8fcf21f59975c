"""What a run is asked: `RunSpec` (the model under test, the data, the task) and `JudgeSpec` (the grader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from uxbench.scoring.scorer import JudgeSettings
from uxbench.tasks.base import SummaryOptions


class JudgeSpec(BaseModel):
    """The `judge` role: the model that grades generated replies (Tasks 2/3), and how it is asked."""

    model: str
    """PROVIDER:MODEL of the judge (e.g. openai:UXBench-GRM with base_url of a vLLM server)."""
    args: dict[str, str] = Field(default_factory=dict)
    """--judge-arg KEY=VALUE pairs for the judge's provider."""
    settings: JudgeSettings = Field(default_factory=JudgeSettings)
    concurrency: int | None = None
    """Maximum parallel judge calls (default: the run's --concurrency, else the provider's)."""


class StrategySpec(BaseModel):
    """The `strategy model` role (Task 3): an LLM that labels each recovery with one of the six strategies."""

    model: str
    """PROVIDER:MODEL of the classifier."""
    args: dict[str, str] = Field(default_factory=dict)
    """--strategy-arg KEY=VALUE pairs for its provider."""
    lang: Literal["zh", "en", "auto"] = "auto"
    """Template language: auto = the case's language, else detected from the complaint and the reply."""
    concurrency: int | None = None


class RunSpec(BaseModel):
    """Everything `uxbench run` was asked."""

    task: str = "judge"
    model: str
    """The model under test (Task 1: the judge under test)."""
    model_args: dict[str, str] = Field(default_factory=dict)
    judge: JudgeSpec | None = None
    """The grader of Tasks 2/3; None generates without scoring (score later with `uxbench score`)."""
    make_primary: bool | None = None
    """Whether `judge` becomes the run's primary judge: None = when the run has none (orchestrate.primary)."""
    strategy_model: StrategySpec | None = None
    """Task 3: also label each recovery's strategy with this model (the rules always label it)."""
    calibration: Path | None = None
    """A Task 1 run of the judge on labelled replies: its error rates correct the judge's Good% (Tasks 2/3)."""
    data: str | None = None
    """Path, `hf:` id or None for the bundled demo set."""
    curation: Path | None = None
    """A curation file whose excluded cases are left out (`runs.curation`); default: one beside the data."""
    split: str = "test"
    limit: int | None = None
    concurrency: int | None = None
    task_options: dict[str, Any] = Field(default_factory=dict)
    summary: SummaryOptions = Field(default_factory=SummaryOptions)
    """Confidence-interval settings: they change the summary only, never the run id."""
    out: Path | None = None
    runs_root: Path = Path("runs")
    fresh: bool = False
    skip_invalid: bool = False
    use_cache: bool = True
    cache_path: Path | None = None
    max_attempts: int = 6
    timeout_s: float | None = None
    """Per-call timeout enforced by the runtime (providers also have their own)."""
