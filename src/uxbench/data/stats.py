"""Dataset statistics and validation over a `CaseSource` (one streaming pass each; nothing is kept per case
except ids for the duplicate check). The CLI's `uxbench data stats|validate` print what these return."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from uxbench.data.loaders import CaseSource, SkipEntry
from uxbench.data.schema import AnyCase, EvalCase, JudgeCase

NONE_LABEL = "(none)"


class _TaskAcc:
    """Running sums for one task."""

    def __init__(self) -> None:
        self.n = 0
        self.multi_turn = 0
        self.turns = 0
        self.query_chars = 0
        self.response_chars = 0
        self.n_responses = 0
        self.counters: dict[str, Counter[str]] = {
            k: Counter()
            for k in (
                "label",
                "lang",
                "scenario",
                "failure_dimension",
                "success_dimension",
                "difficulty",
                "signal_type",
            )
        }

    def add(self, case: AnyCase) -> None:
        self.n += 1
        self.turns += case.n_turns
        self.multi_turn += case.n_turns > 1
        response: str | None = None
        if isinstance(case, JudgeCase):
            query, response = case.query, case.response
            self.counters["label"][case.label] += 1
        elif isinstance(case, EvalCase):
            query, response = case.query, case.reference_response
        else:
            query, response = case.complaint, case.failed_response
        self.query_chars += len(query)
        if response is not None:
            self.response_chars += len(response)
            self.n_responses += 1
        labels = case.labels
        # Taxonomy keys where the label maps, the raw name otherwise, so unknown vocabularies stay visible.
        values = {
            "lang": case.lang,
            "scenario": labels.scenario_key or labels.scenario,
            "failure_dimension": labels.failure_dimension_key or labels.failure_dimension,
            "success_dimension": labels.success_dimension_key or labels.success_dimension,
            "difficulty": labels.difficulty,
            "signal_type": labels.signal_type,
        }
        for name, value in values.items():
            self.counters[name][value or NONE_LABEL] += 1

    def summary(self) -> dict[str, Any]:
        n = max(self.n, 1)
        out: dict[str, Any] = {
            "n": self.n,
            "multi_turn_pct": round(100 * self.multi_turn / n, 2),
            "mean_turns": round(self.turns / n, 3),
            "mean_query_chars": round(self.query_chars / n, 1),
            "mean_response_chars": round(self.response_chars / self.n_responses, 1)
            if self.n_responses
            else None,
        }
        for name, counter in self.counters.items():
            if name == "label" and not counter:
                continue
            if name == "success_dimension" and set(counter) == {NONE_LABEL}:
                continue
            out[name] = dict(counter.most_common())
        return out


def dataset_stats(source: CaseSource) -> dict[str, Any]:
    """Counts per task and label, multi-turn share, mean turns, mean query/response length in characters,
    and distributions of language, scenario, dimensions, difficulty and signal type; overall and per task.

    Iterates `source` as configured: without skip_invalid, the first invalid row raises `DataError`.
    """
    total = _TaskAcc()
    per_task: dict[str, _TaskAcc] = {}
    for case in source:
        total.add(case)
        per_task.setdefault(case.task, _TaskAcc()).add(case)
    overall = total.summary()
    return {
        "source": source.description,
        "is_demo": source.is_demo,
        "fingerprint": source.fingerprint(),
        "n_cases": total.n,
        "by_task": {task: acc.n for task, acc in sorted(per_task.items())},
        "by_label": overall.get("label", {}),
        "overall": overall,
        "tasks": {task: acc.summary() for task, acc in sorted(per_task.items())},
        "skipped": {"count": source.skipped.count, "entries": [str(e) for e in source.skipped.entries]},
    }


class ValidationReport(BaseModel):
    """The result of checking every row of a source."""

    source: str
    """Description of the source."""
    n_valid: int = 0
    """Rows that normalised into a case."""
    n_invalid: int = 0
    """Rows that did not."""
    errors: list[SkipEntry] = Field(default_factory=list)
    """The first `max_errors` problems, with file, line and field."""
    by_task: dict[str, int] = Field(default_factory=dict)
    """Valid cases per task."""
    n_duplicate_ids: int = 0
    """Cases whose id was already seen (same task)."""
    duplicate_ids: list[str] = Field(default_factory=list)
    """The first few duplicated ids."""

    @property
    def ok(self) -> bool:
        """No invalid rows and no duplicate ids."""
        return self.n_invalid == 0 and self.n_duplicate_ids == 0


def validate(source: CaseSource, *, max_errors: int = 100) -> ValidationReport:
    """Check every row (never raises for bad rows; `DataError` only for unreadable inputs)."""
    checked = source.with_options(skip_invalid=True, max_reasons=max_errors)
    report = ValidationReport(source=source.description)
    seen: set[tuple[str, str]] = set()
    by_task: Counter[str] = Counter()
    for case in checked:
        by_task[case.task] += 1
        key = (case.task, case.id)
        if key in seen:
            report.n_duplicate_ids += 1
            if len(report.duplicate_ids) < 20:
                report.duplicate_ids.append(case.id)
        seen.add(key)
    report.n_valid = sum(by_task.values())
    report.by_task = dict(sorted(by_task.items()))
    report.n_invalid = checked.skipped.count
    report.errors = list(checked.skipped.entries)
    return report
