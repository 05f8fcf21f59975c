"""The task protocol shared by Task 1 (judge), Task 2 (eval) and Task 3 (recovery).

A task turns one case into model calls and a `SampleRecord` (generation step). Generative tasks (2 and 3) also
say what a judge reads for each generated reply (`judge_input`); the orchestrator runs the judge in a separate,
resumable scoring step and hands the scores back to `summarize`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from uxbench.data.schema import AnyCase, TaskName
from uxbench.runs.records import SampleRecord, ScoreRecord

if TYPE_CHECKING:
    from uxbench.models.model import Model
    from uxbench.scoring.prompts.judge_input import JudgeInput


class SummaryOptions(BaseModel):
    """How figures are summarised. Not part of the run identity: changing them never reruns a sample
    (`uxbench report RUN_DIR --n-boot N --seed S` recomputes the summary from the stored records)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_boot: int = Field(default=2000, ge=1)
    """Bootstrap rounds of the confidence intervals."""
    seed: int = 0
    """Bootstrap seed."""


class JudgeScores:
    """The scores of one judge on a run's samples: iterate them, or look one up by sample id."""

    def __init__(self, key: str, info: dict[str, Any], fetch: Callable[[], Iterator[ScoreRecord]]) -> None:
        self.key = key
        """The judge's key in the run (a readable slug plus a hash of its identity)."""
        self.info = info
        """What the manifest says about this judge: spec, args (redacted), mode, settings."""
        self._fetch = fetch

    def __iter__(self) -> Iterator[ScoreRecord]:
        return self._fetch()


ScoreLookup = dict[str, JudgeScores]
"""Scores by judge key."""


class Task(ABC):
    """One benchmark task.

    A task never knows which provider runs it: it only calls `model.generate`.
    """

    name: ClassVar[TaskName]
    generative: ClassVar[bool] = False
    """True when the task generates replies that a judge scores (Tasks 2 and 3)."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The task's settings (formulation, strategy, language, ...) for the manifest and the run id."""

    @abstractmethod
    def template_hashes(self) -> dict[str, str]:
        """sha256 of every prompt template this task uses, by template name."""

    @abstractmethod
    async def run_sample(self, case: AnyCase, model: Model, *, sample_id: str, index: int) -> SampleRecord:
        """Run one case. Model errors that survive retries become a record with status `error`."""

    @abstractmethod
    def summarize(
        self, records: Iterable[SampleRecord], *, scores: ScoreLookup | None = None,
        options: SummaryOptions | None = None,
    ) -> dict[str, Any]:
        """Metrics over finished records (with CIs and denominators); generative tasks also over `scores`."""

    def judge_input(self, case: AnyCase, record: SampleRecord) -> JudgeInput:
        """What a judge reads for a generated reply (generative tasks only)."""
        raise NotImplementedError(f"Task '{self.name}' has no judge step")

    def progress_metric(self, record: SampleRecord) -> tuple[str, bool | None]:
        """(name, hit) for the running figure in the progress bar; hit None = not counted."""
        return ("acc", None)
