"""The shape of `summary.json`: pydantic models that a writer can validate against and that every reader
validates with, so that a damaged or hand-edited summary stops with the field that is wrong instead of a
traceback deep inside the rendering.

Only what readers rely on is modelled (extra keys are allowed and kept). Numbers are strict: a string
where a figure belongs is an error, not a silent conversion. Task 1 (judge) is modelled here; a task
without a model is checked for its common fields only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from uxbench.errors import UxbenchError

_STRICT = ConfigDict(extra="allow", strict=True)


class Cell(BaseModel):
    """A figure with its confidence interval (fractions in 0..1; None where undefined)."""

    model_config = _STRICT

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    """Denominator, for proportions."""
    k: int | None = None
    """Numerator, for proportions."""


class ConventionMetrics(BaseModel):
    """Task 1 figures under one convention (all cases, or valid answers only)."""

    model_config = _STRICT

    good_acc: Cell
    bad_acc: Cell
    accuracy: Cell
    avg_acc: Cell
    positive_bias: Cell
    bad_f1: Cell


class BreakdownRow(BaseModel):
    """Task 1 figures for one value of a breakdown (scenario, dimension, ...)."""

    model_config = _STRICT

    n: int
    n_good: int | None = None
    n_bad: int | None = None
    good_acc: Cell | None = None
    bad_acc: Cell | None = None
    avg_acc: Cell | None = None
    unparseable: Cell | None = None


class NeutralEscape(BaseModel):
    model_config = _STRICT

    bad: Cell | None = None
    good: Cell | None = None


class JudgeMetrics(BaseModel):
    """`metrics.judge.judge_metrics` output, as a Task 1 summary stores it."""

    model_config = _STRICT

    n: int
    n_good: int
    n_bad: int
    unparseable: Cell
    neutral_escape: NeutralEscape | None = None
    all: ConventionMetrics
    valid_only: ConventionMetrics
    breakdowns: dict[str, dict[str, BreakdownRow]] = Field(default_factory=dict)


class DataInfo(BaseModel):
    model_config = _STRICT

    description: str | None = None
    fingerprint: str | None = None


class RunSummary(BaseModel):
    """Fields every run summary has."""

    model_config = _STRICT

    task: str
    model: str | None = None
    run_id: str | None = None
    run_dir: str | None = None
    demo_data: bool = False
    data: DataInfo | None = None
    n_samples: int | None = None
    n_errors: int | None = None
    n_selected: int | None = None
    errors: list[str] = Field(default_factory=list)
    """The first few distinct error messages of failed samples."""


class JudgeRunSummary(RunSummary):
    """A Task 1 run's summary."""

    metrics: JudgeMetrics


SUMMARY_MODELS: dict[str, type[RunSummary]] = {"judge": JudgeRunSummary}


def check_summary(data: Any, where: str) -> dict[str, Any]:
    """Validate a parsed summary; returns it unchanged (a plain dict) or raises `UxbenchError` naming the
    first wrong field, e.g. `RUN/summary.json: field 'metrics.all.avg_acc.value': Input should be a valid
    number`."""
    if not isinstance(data, dict):
        raise UxbenchError(f"{where}: a summary must be a JSON object, not {type(data).__name__}.")
    model = SUMMARY_MODELS.get(str(data.get("task")), RunSummary)
    try:
        model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise UxbenchError(
            f"{where}: field '{field}': {first['msg']}{more}. The summary is damaged or was written by another "
            "version; recompute it from the stored records with `uxbench report RUN_DIR --n-boot 2000`."
        ) from None
    return data
