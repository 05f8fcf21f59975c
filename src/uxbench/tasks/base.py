"""The task protocol shared by Task 1 (judge), Task 2 (eval) and Task 3 (recovery)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from uxbench.data.schema import AnyCase, TaskName
from uxbench.runs.records import SampleRecord

if TYPE_CHECKING:
    from uxbench.models.model import Model


class Task(ABC):
    """One benchmark task.

    A task never knows which provider runs it: it only calls `model.generate`.
    """

    name: ClassVar[TaskName]

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
    def summarize(self, records: Iterable[SampleRecord]) -> dict[str, Any]:
        """Metrics over finished records (with CIs and denominators)."""

    def progress_metric(self, record: SampleRecord) -> tuple[str, bool | None]:
        """(name, hit) for the running figure in the progress bar; hit None = not counted."""
        return ("acc", None)
