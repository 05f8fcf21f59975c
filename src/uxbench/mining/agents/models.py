"""Settings, candidate records and counters of the LLM agent stages (miner, judge, QA)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from uxbench.errors import ConfigError

CaseKind = Literal["bad", "good"]
CandidateStatus = Literal["kept", "rejected", "failed"]
Stage = Literal["miner", "judge", "qa", "done"]
SampleTask = Literal["judge_bad", "judge_good", "eval", "recovery"]

AXES: tuple[str, ...] = (
    "query_completeness",
    "signal_credibility",
    "representativeness",
    "severity",
    "annotation_clarity",
)
"""The five judge axes, each scored 1-5 (the same names for good cases; the prompt adapts their meaning)."""

BAD_SIGNALS: tuple[str, ...] = (
    "thumbs_down", "regenerate", "complaint", "dismiss", "repeat", "rephrase",
    "skim", "topic_change", "conversation_end",
)
"""Signals a bad case may cite (the negative ones of the signal stage)."""
RECOVERY_SIGNALS: tuple[str, ...] = ("complaint", "repeat", "rephrase")
"""A bad case whose next user turn carries one of these is a Task 3 (recovery) candidate."""


DEFAULT_MAX_TOKENS = 600
"""The agents' default output cap (`AgentConfig.max_tokens`)."""


class AgentConfig(BaseModel):
    """How the agents run. The response cache keys on the prompts and generation settings these produce."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lang: Literal["auto", "zh", "en"] = "auto"
    """Prompt language; auto: Chinese when the conversation's user turns are mostly Chinese."""
    max_chars_per_turn: int = Field(default=1500, ge=100)
    """Each message is cut to this many characters in prompts (the cut is marked)."""
    max_dialogue_chars: int = Field(default=24000, ge=1000)
    """Above this, the per-turn limit is halved (down to 200) until the dialogue fits."""
    keep_mean: float = Field(default=4.0, ge=1, le=5)
    """Keep rule, applied by the code: mean of the five axes at least this..."""
    keep_min: int = Field(default=3, ge=1, le=5)
    """...and no axis below this."""
    temperature: float | None = 0.0
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=16)
    """Output cap of every agent call (`uxbench mine run --agent-max-tokens`). A miner's proposals, a judge's
    five scores per case and a QA verdict per case each need a few hundred tokens; without a cap a model that
    rambles writes until its context is full and the request times out (seen on a single-slot llama.cpp
    server). An answer cut here that is not valid JSON gets the one correction turn, then fails closed. Raise
    it for reasoning models that think before they answer."""
    qa: bool = True
    """Run the QA pass on judge survivors (off: survivors are kept as they are)."""
    good_cases: bool = True
    """Also mine liked replies (Task 1 good cases)."""
    max_candidates_per_session: int = Field(default=5, ge=1)
    good_signals: tuple[str, ...] = ("thumbs_up", "praise", "builds_on")
    """Positive signals that make an assistant turn a good-case candidate."""
    require_dissatisfied: bool = True
    """A bad case must sit on a turn the signal stage marked dissatisfied (not on one weak signal)."""
    max_raw_chars: int = Field(default=4000, ge=0)
    """Raw model outputs kept on candidates are cut to this length (0: not kept)."""

    @model_validator(mode="after")
    def _check(self) -> AgentConfig:
        from uxbench.mining.signals.config import SIGNAL_NAMES

        unknown = [s for s in self.good_signals if s not in SIGNAL_NAMES]
        if unknown:
            raise ConfigError(f"good_signals: unknown signal names {unknown}")
        return self


class Candidate(BaseModel):
    """One proposed test case and everything the agents decided about it."""

    conversation_id: str
    kind: CaseKind
    turn_index: int
    """The assistant reply under test."""
    query_turn_index: int | None
    """The user turn that reply answered (None only on a session-level miner failure without one)."""
    next_user_turn: int | None = None
    """The user turn after the reply, if any (the complaint of a Task 3 case)."""
    failure_dimension: str | None = None
    """Failure-dimension key (bad cases)."""
    success_dimension: str | None = None
    """Success-dimension key (good cases)."""
    dimension_original: str | None = None
    """The miner's dimension when QA corrected it."""
    scenario: str | None = None
    """Scenario key."""
    signal: str | None = None
    """Signal (signal-stage name) the miner cited."""
    signal_evidence: str | None = None
    fired_signals: list[str] = Field(default_factory=list)
    """Every signal that fired on the reply."""
    explanation: str = ""
    lang: Literal["zh", "en"] = "en"
    """Language the prompts were written in for this session."""

    scores: dict[str, int] | None = None
    """The judge's five axes (see AXES)."""
    mean_score: float | None = None
    judge_notes: str | None = None
    kept: bool = False
    reject_reason: str | None = None
    qa: dict[str, Any] | None = None
    """verdict (keep/downgrade/reject), issues, needs_context, corrected_dimension, notes."""
    needs_context: bool = False
    """QA: the query depends on something not in the conversation text (Task 2 skips these)."""
    quality: Literal["high", "medium"] | None = None
    """high: kept by QA as is; medium: kept but downgraded by QA; None: not kept, or QA switched off."""
    status: CandidateStatus = "failed"
    stage: Stage = "miner"
    """Where the candidate stopped (done when it went through every stage)."""
    error: str | None = None
    miner_raw: str | None = None
    judge_raw: str | None = None
    qa_raw: str | None = None
    task: SampleTask | None = None
    """Set by sampling: the benchmark task this case was selected for."""

    @property
    def candidate_id(self) -> str:
        return f"{self.conversation_id}:{self.kind}:{self.turn_index}"

    @property
    def dimension(self) -> str | None:
        """The failure dimension of a bad case, the success dimension of a good one."""
        return self.failure_dimension if self.kind == "bad" else self.success_dimension

    @property
    def recovery_eligible(self) -> bool:
        """A bad case followed by a user turn that complains, repeats or rephrases."""
        return (
            self.kind == "bad"
            and self.next_user_turn is not None
            and any(s in RECOVERY_SIGNALS for s in [*self.fired_signals, self.signal or ""])
        )


class AgentReport(BaseModel):
    """Counters of one `run_agents` call (pass one in to have it filled)."""

    sessions: int = 0
    skipped_duplicate: int = 0
    no_candidates_turns: int = 0
    """Sessions with neither a dissatisfied nor a liked assistant turn."""
    calls: dict[str, int] = Field(default_factory=dict)
    """Model calls per stage (miner_bad, miner_good, judge_bad, ...), retries included."""
    retries: dict[str, int] = Field(default_factory=dict)
    """Correction retries per stage."""
    failures: dict[str, int] = Field(default_factory=dict)
    """Calls that ended without a valid output, per stage."""
    empty_miner: int = 0
    """Miner calls that validly proposed no case."""
    in_flight: dict[str, int] = Field(default_factory=dict)
    """Exchanges waiting for the model now, per stage (for the progress display; 0 when a batch is done)."""
    _listener: Callable[[AgentReport], None] | None = PrivateAttr(default=None)

    def bump(self, table: str, key: str, n: int = 1) -> None:
        counts: dict[str, int] = getattr(self, table)
        counts[key] = counts.get(key, 0) + n
        if self._listener is not None:
            self._listener(self)

    def listen(self, listener: Callable[[AgentReport], None] | None) -> None:
        """Call `listener` with the report after every change of a count (progress inside the agents stage)."""
        self._listener = listener


def agent_progress(reports: Iterable[AgentReport]) -> str:
    """'miner 12 (1 failed), judge 8, qa 5; 2 in flight': model calls by agent over `reports` (bad and good
    cases together), for the progress display."""
    calls: dict[str, int] = {}
    failed: dict[str, int] = {}
    flying = 0
    for report in reports:
        for stage, n in report.calls.items():
            agent = stage.split("_")[0]
            calls[agent] = calls.get(agent, 0) + n
        for stage, n in report.failures.items():
            agent = stage.split("_")[0]
            failed[agent] = failed.get(agent, 0) + n
        flying += sum(report.in_flight.values())
    parts = [f"{agent} {calls.get(agent, 0)}" + (f" ({failed[agent]} failed)" if failed.get(agent) else "")
             for agent in ("miner", "judge", "qa") if calls.get(agent) or failed.get(agent)]
    return ", ".join(parts or ["no calls yet"]) + f"; {flying} in flight"
