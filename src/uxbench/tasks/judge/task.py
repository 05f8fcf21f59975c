"""Task 1, UX Judge: would the real user have liked this reply? One or two model calls per case."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from uxbench.data.schema import AnyCase, JudgeCase, TaskName
from uxbench.errors import ConfigError, ContextLengthError, ModelError
from uxbench.runs.records import SampleRecord, Stratum
from uxbench.scoring.judgement import Judgement
from uxbench.scoring.pointwise import PointwiseJudge
from uxbench.scoring.prompts import JudgeInput, PromptOptions
from uxbench.scoring.rubric import Rubric
from uxbench.tasks.base import ScoreLookup, SummaryOptions, Task
from uxbench.tasks.fit import fitted, identity_options, too_long_text
from uxbench.tasks.judge.options import JudgeOptions
from uxbench.tasks.registry import register_task

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
    """UX Judge with a chosen formulation (binary / three_class / likert / rubric) and strategy: the model under
    test is the judge (`scoring.pointwise.PointwiseJudge`)."""

    name: ClassVar[TaskName] = "judge"

    def __init__(self, options: JudgeOptions | None = None) -> None:
        self.options = options or JudgeOptions()
        o = self.options
        prompt = PromptOptions.model_validate(o.model_dump(include=set(PromptOptions.model_fields)))
        self.judge = PointwiseJudge(
            prompt, temperature=o.temperature, max_tokens=o.max_tokens, reasoning_effort=o.reasoning_effort,
            verdict_from=o.verdict_from,
        )
        self._hashes = self.judge.template_hashes()

    def config(self) -> dict[str, Any]:
        out = identity_options(self.options)
        out["likert_threshold"] = self.options.threshold
        if self.judge.rubric is not None:  # the rubric as used: a file's path alone does not say what it held
            out["rubric_spec"] = self.judge.rubric.model_dump(mode="json")
        return {"task": self.name, **out}

    def template_hashes(self) -> dict[str, str]:
        return dict(self._hashes)

    async def run_sample(self, case: AnyCase, model: Model, *, sample_id: str, index: int) -> SampleRecord:
        if not isinstance(case, JudgeCase):
            raise ConfigError(f"The judge task needs judge cases; case '{case.id}' is a {case.task} case")
        base: dict[str, Any] = {
            "sample_id": sample_id,
            "case_id": case.id,
            "index": index,
            "gold": case.label,
            "strata": case_strata(case),
        }
        judgement = Judgement(label=None, score=None, note="")

        async def judge(shown: AnyCase) -> None:
            judgement.label, judgement.score, judgement.note = None, None, ""  # a fresh try; its calls add up
            assert isinstance(shown, JudgeCase)
            await self.judge.judge(JudgeInput.from_judge_case(shown), model, into=judgement)

        try:
            _, cut = await fitted(case, judge, enabled=self.options.fit_history)
        except ContextLengthError as err:
            return SampleRecord(status="too_long", error=too_long_text(err), extra=judgement.extra, **base,
                                **judgement.totals())
        except ModelError as err:
            return SampleRecord(status="error", error=f"{type(err).__name__}: {err}", extra=judgement.extra,
                                **base, **judgement.totals())
        if cut is not None:
            judgement.extra["history_cut"] = cut
        final = judgement.final
        return SampleRecord(
            status="ok",
            prediction=judgement.label,
            score=judgement.score,
            parse_note=judgement.note,
            raw_output=final.text if final else None,
            reasoning=final.reasoning if final else None,
            extra=judgement.extra,
            **base,
            **judgement.totals(),
        )

    def progress_metric(self, record: SampleRecord) -> tuple[str, bool | None]:
        """Running accuracy; an unparseable answer counts as a miss, a failed call is not counted."""
        if record.status != "ok":
            return ("acc", None)
        return ("acc", record.prediction == record.gold)

    def summarize(
        self, records: Iterable[SampleRecord], *, scores: ScoreLookup | None = None,
        options: SummaryOptions | None = None,
    ) -> dict[str, Any]:
        """Metrics over the records, streamed: only the few fields the metrics need are kept per sample,
        so memory stays flat however many samples a run has."""
        from uxbench.metrics.judge import judge_metrics, turns_bucket

        strata: dict[str, list[str | int | None]] = {"scenario": [], "dimension": [], "difficulty": [], "n_turns": []}
        golds: list[str] = []
        preds: list[str | None] = []
        scored: list[tuple[str, float]] = []
        dimensions: list[tuple[str, dict[str, Any]]] = []
        notes: Counter[str] = Counter()
        n_samples = n_errors = n_too_long = n_cut = 0
        for r in records:
            n_samples += 1
            n_errors += r.status == "error"
            n_too_long += r.status == "too_long"
            if r.status != "ok" or r.gold is None:
                continue
            n_cut += "history_cut" in r.extra
            for key in ("scenario", "dimension", "difficulty"):
                strata[key].append(r.strata.get(key))
            turns = r.strata.get("n_turns")
            strata["n_turns"].append(turns_bucket(turns) if isinstance(turns, int) else None)
            golds.append(str(r.gold))
            preds.append(r.prediction)
            notes[(r.parse_note or "").split(";")[0]] += 1
            if r.score is not None:
                scored.append((str(r.gold), float(r.score)))
            if isinstance(r.extra.get("rubric_scores"), dict):
                dimensions.append((str(r.gold), r.extra["rubric_scores"]))
        ci = options or SummaryOptions()
        metrics = judge_metrics(golds, preds, strata=strata, n_boot=ci.n_boot, seed=ci.seed)
        summary: dict[str, Any] = {
            "task": self.name,
            "formulation": self.options.formulation,
            "strategy": self.options.strategy,
            "lang": self.options.lang,
            "n_samples": n_samples,
            "n_ok": len(golds),
            "n_errors": n_errors,
            "n_too_long": n_too_long,
            "n_history_cut": n_cut,
            "n_unparseable": sum(1 for p in preds if p is None),
            "parse_notes": dict(notes.most_common(12)),
            "metrics": metrics,
        }
        if self.options.formulation == "likert":
            summary["likert"] = _likert_summary(scored, self.options, ci)
        elif self.judge.rubric is not None:
            summary["rubric"] = _rubric_summary(scored, dimensions, self.judge.rubric, ci)
        elif scored:
            from uxbench.metrics.calibration import calibration

            summary["calibration"] = calibration([g == "good" for g, _ in scored], [p for _, p in scored])
        return summary


def _ties(scored: list[tuple[str, float]], ci: SummaryOptions) -> dict[str, Any]:
    from uxbench.metrics.ties import pair_ties

    return pair_ties([s for g, s in scored if g == "good"], [s for g, s in scored if g == "bad"],
                     n_boot=ci.n_boot, seed=ci.seed)


def _likert_summary(scored: list[tuple[str, float]], options: JudgeOptions, ci: SummaryOptions) -> dict[str, Any]:
    """Score histogram, mean score per gold class (a judge that separates the classes shows a gap) and how often
    a liked and a disliked case get the same score (`metrics.ties`)."""
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
        "pair_ties": _ties(scored, ci),
    }


def _rubric_summary(
    scored: list[tuple[str, float]], dimensions: list[tuple[str, dict[str, Any]]], rubric: Rubric,
    ci: SummaryOptions,
) -> dict[str, Any]:
    """The rubric and its rule, each dimension's mean by gold class (n scored, N/A counted), and the ties of the
    aggregated score between liked and disliked cases."""
    per_dim: dict[str, Any] = {}
    for dim in rubric.dimensions:
        entry: dict[str, Any] = {"low": dim.low, "high": dim.high, "weight": dim.weight}
        for gold in ("good", "bad"):
            values = [float(d[dim.key]) for g, d in dimensions if g == gold and d.get(dim.key) is not None]
            n_na = sum(1 for g, d in dimensions if g == gold and dim.key in d and d[dim.key] is None)
            entry[gold] = {"mean": sum(values) / len(values) if values else None, "n": len(values), "n_na": n_na}
        per_dim[dim.key] = entry
    return {
        "id": rubric.id,
        "digest": rubric.digest(),
        "threshold": rubric.threshold,
        "rule": "weighted mean of the dimensions rescaled to [0, 1] (N/A left out), good when > threshold",
        "dimensions": per_dim,
        "mean_score_by_gold": {gold: (sum(v) / len(v) if (v := [s for g, s in scored if g == gold]) else None)
                               for gold in ("good", "bad")},
        "pair_ties": _ties(scored, ci),
    }
