"""A run's summary, computed from its store alone: the task's metrics over the selected records (and, for
Tasks 2/3, every judge's scores), plus usage and cost summed over the records. Because nothing here depends on
the invocation, a resumed run's summary equals an uninterrupted one, and `uxbench report --n-boot` or
`uxbench score` can recompute it at any time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from uxbench.models.registry import parse_model_spec
from uxbench.runs.records import SampleRecord, ScoreRecord
from uxbench.runs.store import RunStore, ScoresSink
from uxbench.runtime.cost import ModelUsage, PriceTable, unanswered_cost, usage_from_totals
from uxbench.scoring.strategies_llm import is_strategy_key
from uxbench.tasks.base import JudgeScores, ScoreLookup, SummaryOptions, Task


class UsageSum:
    """Usage of one model role, summed record by record (fresh and cached tokens apart)."""

    def __init__(self) -> None:
        self.t = {"requests": 0, "cache_hits": 0, "input": 0, "output": 0, "reasoning": 0, "c_in": 0, "c_out": 0}
        self.latency = 0.0
        self.errors = 0

    def add(self, r: SampleRecord | ScoreRecord) -> None:
        t = self.t
        if r.status != "ok":
            self.errors += 1
        t["requests"] += r.n_calls
        t["cache_hits"] += r.n_cached
        t["input"] += r.usage.input_tokens - r.cached_usage.input_tokens
        t["output"] += r.usage.output_tokens - r.cached_usage.output_tokens
        t["reasoning"] += r.usage.reasoning_tokens - r.cached_usage.reasoning_tokens
        t["c_in"] += r.cached_usage.input_tokens
        t["c_out"] += r.cached_usage.output_tokens
        if not r.cached:
            self.latency += r.latency_s

    def usage(self, spec: str, prices: PriceTable | None = None) -> ModelUsage:
        """The sums, with their cost at the role's price."""
        provider, name = parse_model_spec(spec)
        price = (prices or PriceTable.default()).lookup(name, provider=provider)
        t = self.t
        usage = usage_from_totals(
            price, requests=t["requests"], cache_hits=t["cache_hits"], input_tokens=t["input"],
            output_tokens=t["output"], reasoning_tokens=t["reasoning"], cached_input_tokens=t["c_in"],
            cached_output_tokens=t["c_out"], latency_s_sum=self.latency,
        )
        usage.errors = self.errors
        return usage


def usage_of(records: Iterable[SampleRecord | ScoreRecord], spec: str, prices: PriceTable | None = None) -> ModelUsage:
    """Usage and cost of one model role, summed over stored records (fresh and cached tokens apart)."""
    total = UsageSum()
    for r in records:
        total.add(r)
    return total.usage(spec, prices)


class RecordPass:
    """What a summary needs of the generation records besides the task's metrics (their usage, the first
    errors) and, optionally, each record handed on (`each`: the samples.jsonl export), gathered in the one pass
    the task's summary makes over them (`tap`), instead of reading every record again for each."""

    def __init__(self, each: Callable[[SampleRecord], None] | None = None) -> None:
        self.each = each
        self.usage = UsageSum()
        self.errors: list[str] = []
        self.too_long: list[str] = []

    def tap(self, records: Iterable[SampleRecord]) -> Iterator[SampleRecord]:
        each = self.each
        for r in records:
            self.usage.add(r)
            kept = self.errors if r.status == "error" else self.too_long if r.status == "too_long" else None
            if kept is not None and r.error and len(kept) < 3:
                kept.append(r.error)
            if each is not None:
                each(r)
            yield r


def usage_key(judge_key: str) -> str:
    """The role of a judge or strategy model in `summary.usage` and in the store's count of requests sent."""
    return f"{'strategy' if is_strategy_key(judge_key) else 'judge'}:{judge_key}"


def score_lookup(store: RunStore, judges: dict[str, dict[str, Any]], selected: list[str] | None,
                 scores: ScorePass | None = None) -> ScoreLookup:
    """Every judge with scores in the store, with what the manifest says of it; read through `scores` when given."""
    lookup: ScoreLookup = {}
    for key in store.judges():
        info = judges.get(key, {"spec": None})

        def fetch(key: str = key) -> Any:
            return scores.fetch(key) if scores is not None else store.iter_scores(key, selected)

        lookup[key] = JudgeScores(key, info, fetch)
    return lookup


class ScorePass:
    """The judges' scores read once for a summary: each judge's first whole pass through the task's summary also
    sums its usage and, while the judges are read whole in the store's order, hands its lines of scores.jsonl to
    `write` (`RunStore.exporting_scores_jsonl`), instead of two more reads of every score (usage, export). A task
    that reads a judge's scores again, or not at all, or not to the end, gets them from the store as before, and
    what the pass could not gather is read as before (`usage`, `exported`)."""

    def __init__(self, store: RunStore, selected: list[str] | None,
                 write: Callable[[bytes], object] | None = None) -> None:
        self.store = store
        self.selected = selected
        self.write = write
        self.order = store.judges()
        self.usage: dict[str, UsageSum] = {}
        """The usage summed over each judge's scores, for the judges read whole."""
        self._started: set[str] = set()
        self._written = 0
        """Judges of `order` whose lines were all written, in order."""
        self._in_order = write is not None

    @property
    def exported(self) -> bool:
        """Whether the lines handed to `write` are the whole of scores.jsonl."""
        return self._in_order and self._written == len(self.order)

    def fetch(self, key: str) -> Iterator[ScoreRecord]:
        if key in self._started:
            return self.store.iter_scores(key, self.selected)
        self._started.add(key)
        return self._first(key)

    def _first(self, key: str) -> Iterator[ScoreRecord]:
        write = self.write if self._in_order and self._written < len(self.order) and \
            self.order[self._written] == key else None
        if write is None:
            self._in_order = False
        total = UsageSum()
        for score in self.store.iter_scores(key, self.selected):
            total.add(score)
            if write is not None:
                write(score.__pydantic_serializer__.to_json(score) + b"\n")
            yield score
        self.usage[key] = total
        if write is not None:
            self._written += 1


def summarize_store(
    store: RunStore,
    task: Task,
    *,
    selected: list[str] | None,
    model_spec: str,
    judges: dict[str, dict[str, Any]],
    primary_judge: str | None,
    options: SummaryOptions,
    records: RecordPass | None = None,
    scores: ScorePass | None = None,
) -> dict[str, Any]:
    """The task's summary plus `usage` (by role) and `cost_usd` (None when a price is unknown). The records are
    read once, through `records` (a fresh `RecordPass` when not given), and so are the scores (`scores`)."""
    scores = scores or ScorePass(store, selected)
    lookup = score_lookup(store, judges, selected, scores) if task.generative else None
    records = records or RecordPass()
    tapped = records.tap(store.iter_records(selected))
    summary = task.summarize(tapped, scores=lookup, options=options)
    for _ in tapped:  # a task that stopped early: the usage and the export still see every record
        pass
    prices = PriceTable.default()
    usage: dict[str, Any] = {"model": {"spec": model_spec, **records.usage.usage(model_spec, prices).to_dict()}}
    sent = store.sent()
    costs = [usage["model"]["cost_usd"]]
    for key in (lookup or {}):
        spec = judges.get(key, {}).get("spec")
        if not spec:
            continue
        summed = scores.usage.get(key)
        entry = (summed.usage(str(spec), prices) if summed is not None
                 else usage_of(store.iter_scores(key, selected), str(spec), prices)).to_dict()
        usage[usage_key(key)] = {"spec": spec, **entry}
        costs.append(entry["cost_usd"])
    for role, entry in usage.items():
        entry["requests_sent"] = sent.get(role)  # None: a run made before requests were counted as sent
        entry.update(unanswered_cost(entry))
    summary["usage"] = usage
    summary["cost_usd"] = None if any(c is None for c in costs) else round(sum(costs), 6)
    extra = [e.get("unanswered_cost_usd_max") for e in usage.values() if e.get("unanswered_requests")]
    summary["cost_usd_max"] = (None if summary["cost_usd"] is None or any(x is None for x in extra)
                               else round(summary["cost_usd"] + sum(x for x in extra if x is not None), 6))
    summary["summary_options"] = options.model_dump()
    if task.generative:
        summary["primary_judge"] = primary_judge if primary_judge in (lookup or {}) else None
    return summary


def task_from_manifest(manifest: dict[str, Any], where: str) -> Task:
    """Rebuild the task a run directory was made with, from its manifest."""
    from uxbench.errors import UxbenchError
    from uxbench.tasks.registry import create_task, get_task_entry

    name, config = manifest.get("task"), manifest.get("task_config")
    if not isinstance(name, str) or not isinstance(config, dict):
        raise UxbenchError(f"{where} lacks the task or its settings: the run cannot be rebuilt.")
    fields = get_task_entry(name).options.model_fields  # the manifest also holds derived keys ("task", ...)
    return create_task(name, {k: v for k, v in config.items() if k in fields})


def run_summary(
    store: RunStore,
    task: Task,
    manifest: dict[str, Any],
    options: SummaryOptions,
    *,
    selected: list[str] | None,
    extra: dict[str, Any] | None = None,
    each: Callable[[SampleRecord], None] | None = None,
    scores_sink: ScoresSink | None = None,
) -> dict[str, Any]:
    """The complete summary of a run directory: `summarize_store` plus what identifies the run. `extra` holds
    what only the writing invocation knows (elapsed time, skipped rows). `each` is handed every selected record
    in data order, in the summary's one pass over them (`RunStore.exporting_jsonl`); `scores_sink` the lines of
    scores.jsonl in the pass over the scores (`RunStore.exporting_scores_jsonl`)."""
    from uxbench.orchestrate.calibration import attach_corrections, calibrations_in_manifest
    from uxbench.orchestrate.scoring_step import judges_in_manifest
    from uxbench.orchestrate.strategy_step import classifiers_in_manifest

    model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
    spec = str((model or {}).get("spec"))
    data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    records = RecordPass(each)
    scores = ScorePass(store, selected, scores_sink.write if scores_sink is not None else None)
    summary = summarize_store(
        store, task, selected=selected, model_spec=spec,
        judges={**judges_in_manifest(manifest), **classifiers_in_manifest(manifest)},
        primary_judge=manifest.get("primary_judge"), options=options, records=records, scores=scores,
    )
    if scores_sink is not None:
        scores_sink.whole = scores.exported
    if task.generative:  # judge-corrected rates of the judges calibrated by a Task 1 run (`--calibration`)
        attach_corrections(summary, calibrations_in_manifest(manifest))
    n_selected = len(selected) if selected is not None else store.count()
    errors, too_long = records.errors, records.too_long
    summary.update({
        "run_id": manifest.get("run_id"),
        "run_dir": str(store.path),
        "task": task.name,
        "model": spec,
        "demo_data": bool((data or {}).get("demo", False)),
        "data": {"description": (data or {}).get("description"), "fingerprint": (data or {}).get("fingerprint")},
        "n_selected": n_selected,
        "errors": errors,
        "too_long_errors": too_long[:1],
        "complete": summary.get("n_samples", 0) - summary.get("n_errors", 0) == n_selected,
        **(extra or {}),
    })
    return summary
