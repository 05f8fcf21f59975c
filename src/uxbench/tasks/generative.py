"""What Task 2 (UX Eval) and Task 3 (UX Recovery) share: the model under test writes one reply per case, a
judge scores it in a separate step, and the summary gives the share of good replies per judge."""

from __future__ import annotations

import statistics
from abc import abstractmethod
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from uxbench.data.schema import AnyCase, Message
from uxbench.errors import ContextLengthError, ModelError
from uxbench.metrics.good_rate import good_rate_metrics, history_bucket, length_bucket
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.runs.records import SampleRecord, Stratum
from uxbench.scoring._text import strip_reasoning
from uxbench.scoring.judgement import call_totals
from uxbench.scoring.prompts.render import detect_lang
from uxbench.scoring.prompts.templates_io import Lang
from uxbench.tasks.base import ScoreLookup, SummaryOptions, Task
from uxbench.tasks.fit import fitted, too_long_text

if TYPE_CHECKING:
    from uxbench.models.model import Model


class GenerationOptions(BaseModel):
    """Generation settings of the model under test (recorded in the manifest and the run id)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: Literal["zh", "en", "auto"] = "auto"
    """Language of the prompts this task adds (system-prompt presets, recovery instructions); auto = the
    case's own language, else detected from its text."""
    temperature: float | None = 0.7
    """Sampling temperature (the method's runner used 0.7); None leaves the provider's default."""
    max_tokens: int | None = Field(default=2048, ge=1)
    """Cap on the reply's tokens (the method's runner used 2048); reasoning models spend part of it thinking."""
    reasoning_effort: str | None = None
    """Reasoning effort for reasoning models (low / medium / high), passed through."""
    seed: int | None = None
    """Sampling seed, where the provider supports one."""
    fit_history: bool = False
    """A conversation longer than the model accepts: drop its oldest history messages until it fits (recorded
    per sample in `extra.history_cut`) instead of recording it as `too_long`."""


class GenerativeTask(Task):
    """A task whose model under test writes a reply that a judge scores."""

    generative: ClassVar[bool] = True
    rate_name: ClassVar[str]
    """What the good share is called: good_pct (Task 2) or recovery_rate (Task 3)."""

    def __init__(self, options: GenerationOptions) -> None:
        self.generation = options
        self._config = GenerateConfig(
            temperature=options.temperature, max_tokens=options.max_tokens,
            reasoning_effort=options.reasoning_effort, seed=options.seed,
        )

    def generate_config(self) -> GenerateConfig:
        return self._config

    def lang_of(self, case: AnyCase, *texts: str) -> Lang:
        option = self.generation.lang
        if option != "auto":
            return option
        if case.lang is not None:
            return case.lang
        return detect_lang([*texts, *(m.content for m in case.history)])

    @abstractmethod
    def strata(self, case: AnyCase) -> dict[str, Stratum]:
        """Breakdown keys of a case."""

    @abstractmethod
    async def generate(self, case: AnyCase, model: Model) -> tuple[list[ModelOutput], dict[str, Any]]:
        """Make the calls for one case: the last output holds the reply. Returns (outputs, extra)."""

    def reply_text(self, output: ModelOutput, extra: dict[str, Any]) -> str:
        """The reply to score, from the last output (reasoning removed)."""
        return strip_reasoning(output.text).strip()

    async def run_sample(self, case: AnyCase, model: Model, *, sample_id: str, index: int) -> SampleRecord:
        base: dict[str, Any] = {"sample_id": sample_id, "case_id": case.id, "index": index,
                                "strata": self.strata(case)}
        try:
            (outputs, extra), cut = await fitted(case, lambda c: self.generate(c, model),
                                                 enabled=self.generation.fit_history)
        except ContextLengthError as err:
            return SampleRecord(status="too_long", error=too_long_text(err), **base)
        except ModelError as err:
            return SampleRecord(status="error", error=f"{type(err).__name__}: {err}", **base)
        if cut is not None:
            extra["history_cut"] = cut
        final = outputs[-1]
        reply = self.reply_text(final, extra)
        if not reply:
            extra["empty_reply"] = True
        return SampleRecord(
            status="ok", raw_output=reply, reasoning=final.reasoning,
            parse_note=None if reply == final.text else "reply extracted from the model's text",
            extra={**extra, "finish_reason": final.finish_reason} if final.finish_reason else extra,
            **base, **call_totals(outputs),
        )

    def progress_metric(self, record: SampleRecord) -> tuple[str, bool | None]:
        return ("generated", None)

    def summarize(
        self, records: Iterable[SampleRecord], *, scores: ScoreLookup | None = None,
        options: SummaryOptions | None = None,
    ) -> dict[str, Any]:
        rows: dict[str, dict[str, Stratum]] = {}
        lengths: list[int] = []
        n_samples = n_errors = n_empty = n_too_long = n_cut = 0
        for r in records:
            n_samples += 1
            if r.status != "ok":
                n_errors += r.status == "error"
                n_too_long += r.status == "too_long"
                continue
            n_cut += "history_cut" in r.extra
            reply = r.raw_output or ""
            lengths.append(len(reply))
            n_empty += not reply
            turns = r.strata.get("history_messages")
            rows[r.sample_id] = {
                "scenario": r.strata.get("scenario"),
                "dimension": r.strata.get("dimension"),
                "difficulty": r.strata.get("difficulty"),
                "history_messages": history_bucket(turns) if isinstance(turns, int) else None,
                "reply_chars": length_bucket(len(reply)),
            }
        summary: dict[str, Any] = {
            "task": self.name,
            "rate_name": self.rate_name,
            "n_samples": n_samples,
            "n_generated": n_samples - n_errors - n_too_long,
            "n_errors": n_errors,
            "n_too_long": n_too_long,
            "n_history_cut": n_cut,
            "n_empty_replies": n_empty,
            "reply_chars": {
                "mean": statistics.fmean(lengths) if lengths else None,
                "median": statistics.median(lengths) if lengths else None,
            },
            "judges": {key: self._judge_summary(judge.info, judge, rows, n_samples)
                       for key, judge in (scores or {}).items()},
        }
        return summary

    def _judge_summary(
        self, info: dict[str, Any], scored: Iterable[Any], rows: dict[str, dict[str, Stratum]], n_cases: int
    ) -> dict[str, Any]:
        labels: list[str | None] = []
        values: list[float | None] = []
        columns: dict[str, list[Stratum]] = {name: [] for name in
                                             ("scenario", "dimension", "difficulty", "history_messages", "reply_chars")}
        status: Counter[str] = Counter()
        n_errors = n_mismatch = n_shortened = n_unreadable = 0
        for s in scored:
            row = rows.get(s.sample_id)
            if row is None:
                continue  # a score of a generation that is no longer selected or no longer ok
            if s.status != "ok":
                n_errors += 1
                continue
            labels.append(s.label)
            values.append(s.score)
            for name, column in columns.items():
                column.append(row[name])
            status[s.score_status or "text"] += 1
            # a written verdict the parser could not read (an unscorable probability verdict is counted apart)
            n_unreadable += s.label is None and s.score_status != "unscorable"
            n_mismatch += s.emitted_mismatch
            n_shortened += s.shorten_step > 0
        metrics = good_rate_metrics(labels, n_cases=n_cases, scores=values, strata=columns)
        return {
            **info,
            "n_score_errors": n_errors,
            "n_unscorable": status.get("unscorable", 0),
            "n_partial": status.get("partial", 0),
            "n_unreadable": n_unreadable,
            "n_emitted_mismatch": n_mismatch,
            "n_shortened": n_shortened,
            "score_status": dict(status),
            "metrics": metrics,
        }


def chat(history: Iterable[Message], *tail: Message, system: str | None = None) -> list[Message]:
    """Messages for the model under test: an optional system message, the history, then `tail`."""
    out = [Message(role="system", content=system)] if system else []
    out += [Message(role=m.role, content=m.content) for m in history]
    return out + list(tail)
