"""The per-sample record every task writes, one per (case, run)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from uxbench.models.api import Usage

Stratum = str | int | None


class CallTotals(BaseModel):
    """What the model calls behind one stored record used (the fields `scoring.judgement.call_totals` fills).
    A run's usage and cost are sums of these over its records, whatever number of invocations wrote them."""

    usage: Usage = Field(default_factory=Usage)
    """Tokens of every call made for this record (fresh and from the cache)."""
    cached_usage: Usage = Field(default_factory=Usage)
    """The part of `usage` served from the response cache (not paid for in this run)."""
    n_calls: int = 0
    """Model calls that returned an answer (fresh or cached)."""
    n_cached: int = 0
    """Of those, answered from the cache."""
    latency_s: float = 0.0
    """Summed latency of those calls."""
    cached: bool = False
    """Every model call for this record was served from the response cache."""


class SampleRecord(CallTotals):
    """What happened to one case. Stored as JSON in the run's SQLite file, keyed by `sample_id`."""

    sample_id: str
    """Content hash of the case and the task config: the resume key."""
    case_id: str
    """The case's own id."""
    index: int
    """Position of the case in the loaded data, for stable ordering of exports."""
    status: Literal["ok", "error", "too_long"]
    """`error`: the model call failed for good after retries (the sample is retried on the next run).
    `too_long`: the conversation is longer than the model under test accepts (a permanent outcome: counted
    apart, never retried; `fit_history` drops its oldest messages instead)."""
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
    error: str | None = None
    """Final error message when status is `error`."""
    strata: dict[str, Stratum] = Field(default_factory=dict)
    """Breakdown keys: scenario, dimension, difficulty, n_turns, ..."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Task-specific details (intermediate outputs of multi-step strategies, ...)."""


class ScoreRecord(CallTotals):
    """One judge's verdict on one generated reply (Tasks 2/3). Keyed by (`sample_id`, `judge`) in the run's
    SQLite file, so several judges' scores sit side by side and re-scoring never touches the generations."""

    sample_id: str
    """The generation record this scores."""
    judge: str
    """The judge's key in the run (see the manifest's `judges`)."""
    case_id: str
    index: int
    status: Literal["ok", "error"]
    """`error`: the judge call failed for good after retries (retried on the next scoring run)."""
    label: str | None = None
    """good / bad; None when the reply could not be scored (see `score_status`) or the text not parsed."""
    score: float | None = None
    """p(good) for probability judges (GRM protocol), a Likert value for Likert judges."""
    score_status: Literal["full", "partial", "unscorable", "text"] | None = None
    """Probability judges: full (both verdict words seen), partial (one), unscorable (neither; counted, never
    dropped). `text` for judges whose verdict was read from their text."""
    emitted_mismatch: bool = False
    """The probability verdict disagrees with the verdict word the judge actually emitted."""
    shorten_step: int = 0
    """0 = the full input; k > 0 = the k-th documented shortening step after the judge rejected it as too long."""
    parse_note: str | None = None
    raw_output: str | None = None
    reasoning: str | None = None
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
