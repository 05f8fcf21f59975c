"""Task 1, UX Judge: would the real user have liked this reply? One or two model calls per case."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from uxbench.data.schema import AnyCase, JudgeCase, TaskName
from uxbench.errors import ConfigError, ModelError
from uxbench.models.api import GenerateConfig, ModelOutput, Usage
from uxbench.runs.records import SampleRecord, Stratum
from uxbench.scoring import parse_binary, parse_likert, parse_three_class, strip_reasoning
from uxbench.scoring.logprob import choice_verdict
from uxbench.tasks.base import Task
from uxbench.tasks.judge.options import JudgeOptions
from uxbench.tasks.registry import register_task
from uxbench.tasks.judge.registry import LANGS, Lang, pick_examples, template_hashes
from uxbench.tasks.judge.render import build_messages, build_profile_messages, resolve_lang

if TYPE_CHECKING:
    from uxbench.models.model import Model


VERDICT_WORDS: dict[str, tuple[str, str]] = {"zh": ("好", "差"), "en": ("good", "bad")}
"""The binary answer words of the templates, (good, bad), by template language."""


def case_strata(case: JudgeCase) -> dict[str, Stratum]:
    """Breakdown keys: taxonomy keys where the loader mapped them, else the labels as given."""
    labels = case.labels
    if case.label == "bad":
        dimension = labels.failure_dimension_key or labels.failure_dimension
    else:
        dimension = labels.success_dimension_key or labels.success_dimension
    return {
        "scenario": labels.scenario_key or labels.scenario,
        "dimension": dimension,
        "difficulty": labels.difficulty,
        "n_turns": case.n_turns,
    }


@register_task("judge", "Task 1, UX Judge", JudgeOptions)
class JudgeTask(Task):
    """UX Judge with a chosen formulation (binary / three_class / likert) and strategy."""

    name: ClassVar[TaskName] = "judge"

    def __init__(self, options: JudgeOptions | None = None) -> None:
        self.options = options or JudgeOptions()
        if self.options.strategy == "few_shot":
            for lang in self._langs():
                pick_examples(lang, self.options.few_shot_k)  # fail now, not on the first case
        self._hashes = template_hashes(self.options.formulation, self.options.strategy, self._langs())
        self._configs: dict[Lang | None, GenerateConfig] = {}

    def _langs(self) -> tuple[Lang, ...]:
        lang = self.options.lang
        return LANGS if lang == "auto" else (lang,)

    def config(self) -> dict[str, Any]:
        out = self.options.model_dump(mode="json")
        out["likert_threshold"] = self.options.threshold
        return {"task": self.name, **out}

    def template_hashes(self) -> dict[str, str]:
        return dict(self._hashes)

    def generate_config(self, lang: Lang | None = None) -> GenerateConfig:
        """Generation settings of the judging call (`lang` given) or of the profile call; built once."""
        cached = self._configs.get(lang)
        if cached is not None:
            return cached
        o = self.options
        extra: dict[str, Any] = {}
        if o.verdict_from == "logprobs" and lang is not None:
            extra = {"choices": VERDICT_WORDS[lang], "top_logprobs": 20, "logprob_tokens": 1}
        config = GenerateConfig(
            temperature=o.temperature, max_tokens=o.max_tokens, reasoning_effort=o.reasoning_effort, **extra
        )
        self._configs[lang] = config
        return config

    async def run_sample(self, case: AnyCase, model: Model, *, sample_id: str, index: int) -> SampleRecord:
        if not isinstance(case, JudgeCase):
            raise ConfigError(f"The judge task needs judge cases; case '{case.id}' is a {case.task} case")
        lang = resolve_lang(case, self.options.lang)
        config = self.generate_config()
        judge_config = self.generate_config(lang)
        outputs: list[ModelOutput] = []
        extra: dict[str, Any] = {"lang": lang}
        base: dict[str, Any] = {
            "sample_id": sample_id,
            "case_id": case.id,
            "index": index,
            "gold": case.label,
            "strata": case_strata(case),
            "extra": extra,
        }
        try:
            profile: str | None = None
            if self.options.strategy == "user_modeling":
                first = await model.generate(build_profile_messages(case, self.options, lang=lang), config)
                outputs.append(first)
                profile = strip_reasoning(first.text).strip()
                extra["profile"] = profile
                if not profile:
                    extra["profile_note"] = "the profile call returned no text; judged without a profile"
            messages = build_messages(case, self.options, profile=profile, lang=lang)
            outputs.append(await model.generate(messages, judge_config))
        except ModelError as err:
            return SampleRecord(
                status="error", error=f"{type(err).__name__}: {err}", **base, **_totals(outputs)
            )
        final = outputs[-1]
        prediction, score, note = self._parse(final, lang)
        return SampleRecord(
            status="ok",
            prediction=prediction,
            score=score,
            parse_note=note,
            raw_output=final.text,
            reasoning=final.reasoning,
            **base,
            **_totals(outputs),
        )

    def _parse(self, output: ModelOutput, lang: Lang) -> tuple[str | None, float | None, str]:
        o = self.options
        if o.formulation == "likert":
            value, note = parse_likert(output.text, o.likert_scale, reasoning=output.reasoning)
            if value is None:
                return None, None, note
            label = "good" if value >= o.threshold else "bad"
            return label, float(value), f"{note}; {value} {'>=' if label == 'good' else '<'} {o.threshold}"
        parse = parse_three_class if o.formulation == "three_class" else parse_binary
        if o.verdict_from == "logprobs":
            scored = choice_verdict(output, *VERDICT_WORDS[lang])
            if scored is not None:
                return scored.label, scored.p_good, scored.note
            verdict = parse(output.text, lang, reasoning=output.reasoning)
            return verdict.label, None, f"{verdict.note} (no verdict token in the logprobs: read from the text)"
        verdict = parse(output.text, lang, reasoning=output.reasoning)
        return verdict.label, None, verdict.note

    def progress_metric(self, record: SampleRecord) -> tuple[str, bool | None]:
        """Running accuracy; an unparseable answer counts as a miss, a failed call is not counted."""
        if record.status != "ok":
            return ("acc", None)
        return ("acc", record.prediction == record.gold)

    def summarize(self, records: Iterable[SampleRecord]) -> dict[str, Any]:
        """Metrics over the records, streamed: only the few fields the metrics need are kept per sample,
        so memory stays flat however many samples a run has."""
        from uxbench.metrics.judge import judge_metrics, turns_bucket

        strata: dict[str, list[str | int | None]] = {"scenario": [], "dimension": [], "difficulty": [], "n_turns": []}
        golds: list[str] = []
        preds: list[str | None] = []
        scores: list[tuple[str, float]] = []
        notes: Counter[str] = Counter()
        n_samples = n_errors = 0
        for r in records:
            n_samples += 1
            if r.status == "error":
                n_errors += 1
            if r.status != "ok" or r.gold is None:
                continue
            for key in ("scenario", "dimension", "difficulty"):
                strata[key].append(r.strata.get(key))
            turns = r.strata.get("n_turns")
            strata["n_turns"].append(turns_bucket(turns) if isinstance(turns, int) else None)
            golds.append(str(r.gold))
            preds.append(r.prediction)
            notes[(r.parse_note or "").split(";")[0]] += 1
            if r.score is not None:
                scores.append((str(r.gold), float(r.score)))
        metrics = judge_metrics(golds, preds, strata=strata, n_boot=self.options.n_boot, seed=self.options.seed)
        summary: dict[str, Any] = {
            "task": self.name,
            "formulation": self.options.formulation,
            "strategy": self.options.strategy,
            "lang": self.options.lang,
            "n_samples": n_samples,
            "n_ok": len(golds),
            "n_errors": n_errors,
            "n_unparseable": sum(1 for p in preds if p is None),
            "parse_notes": dict(notes.most_common(12)),
            "metrics": metrics,
        }
        if self.options.formulation == "likert":
            summary["likert"] = _likert_summary(scores, self.options)
        return summary


def _totals(outputs: list[ModelOutput]) -> dict[str, Any]:
    usage = Usage()
    for out in outputs:
        usage = usage + out.usage
    return {
        "usage": usage,
        "latency_s": sum(out.latency_s for out in outputs),
        "cached": bool(outputs) and all(out.cached for out in outputs),
    }


def _likert_summary(scored: list[tuple[str, float]], options: JudgeOptions) -> dict[str, Any]:
    """Score histogram and mean score per gold class (a judge that separates the classes shows a gap)."""
    histogram = {str(v): 0 for v in range(1, options.likert_scale + 1)}
    for _, score in scored:
        histogram[str(int(score))] += 1
    means: dict[str, float | None] = {}
    for gold in ("good", "bad"):
        values = [score for g, score in scored if g == gold]
        means[gold] = sum(values) / len(values) if values else None
    return {
        "scale": options.likert_scale,
        "threshold": options.threshold,
        "histogram": histogram,
        "mean_score_by_gold": means,
    }
