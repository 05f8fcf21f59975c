"""The per-sample record every task writes, one per (case, run)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from uxbench.models.api import Usage

Stratum = str | int | None


class SampleRecord(BaseModel):
    """What happened to one case. Stored as JSON in the run's SQLite file, keyed by `sample_id`."""

    sample_id: str
    """Content hash of the case and the task config: the resume key."""
    case_id: str
    """The case's own id."""
    index: int
    """Position of the case in the loaded data, for stable ordering of exports."""
    status: Literal["ok", "error"]
    """`error`: the model call failed for good after retries (the sample is retried on the next run)."""
    gold: str | None = None
    """Ground truth (Task 1: good / bad)."""
    prediction: str | None = None
    """Normalised prediction; None when the output could not be parsed or the call failed."""
    parse_note: str | None = None
    """How the prediction was read, or why it could not be."""
    score: float | None = None
    """A numeric score where the formulation has one (Likert value, probability of good)."""
    raw_output: str | None = None
    """The model's final text, verbatim."""
    reasoning: str | None = None
    """The model's reasoning text, when returned."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    """Every model call for this sample was served from the response cache."""
    error: str | None = None
    """Final error message when status is `error`."""
    strata: dict[str, Stratum] = Field(default_factory=dict)
    """Breakdown keys: scenario, dimension, difficulty, n_turns, ..."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Task-specific details (intermediate outputs of multi-step strategies, ...)."""
