"""Dataset statistics and validation over a `CaseSource` (one streaming pass each; nothing is kept per case
except ids for the duplicate check). The CLI's `uxbench data stats|validate` print what these return."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from uxbench.data.loaders import CaseSource, ReadReport, SkipEntry
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
        "read": source.read_report.model_dump(mode="json", exclude={"max_examples"}),
        "notes": source.read_report.notes(),
    }


_JUDGE_LABEL_KEYS = ("ground_truth", "label")


class ValidationReport(BaseModel):
    """The result of checking every row of a source."""

    source: str
    """Description of the source."""
    task: str | None = None
    """The task the rows were checked as; None = inferred per row, as `uxbench data` does without --task."""
    n_valid: int = 0
    """Rows that normalised into a case."""
    n_invalid: int = 0
    """Rows that did not."""
    errors: list[SkipEntry] = Field(default_factory=list)
    """The first `max_errors` problems, with file, line and field."""
    by_task: dict[str, int] = Field(default_factory=dict)
    """Valid cases per task."""
    by_file: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Valid cases per file and task: which task each file's rows load as."""
    n_duplicate_ids: int = 0
    """Cases whose id was already seen (same task) with other content."""
    duplicate_ids: list[str] = Field(default_factory=list)
    """The first few duplicated ids."""
    n_label_without_reply: int = 0
    """Rows read as Task 2 (eval) although they carry a Task 1 label (ground_truth): a Task 1 row that
    lacks its reply. Only checked when the task is inferred."""
    label_without_reply_ids: list[str] = Field(default_factory=list)
    """The first few of their ids."""
    read: ReadReport = Field(default_factory=ReadReport)
    """Exact duplicates left out, empty history messages, rows of other tasks."""
    empty_reason: str | None = None
    """Why no case was read, when none was."""

    @property
    def ok(self) -> bool:
        """Some cases, no invalid rows, no duplicate ids, no Task 1 row without its reply."""
        return (self.n_valid > 0 and self.n_invalid == 0 and self.n_duplicate_ids == 0
                and self.n_label_without_reply == 0)


def _has_label(case: EvalCase) -> bool:
    return any(case.meta.get(k) not in (None, "") for k in _JUDGE_LABEL_KEYS)


def validate(source: CaseSource, *, max_errors: int = 100) -> ValidationReport:
    """Check every row the way a run of `source.task` reads them (never raises for bad rows or for an
    empty source: both are in the report; `DataError` only for unreadable inputs)."""
    checked = source.with_options(skip_invalid=True, max_reasons=max_errors, allow_empty=True)
    report = ValidationReport(source=source.description, task=source.task)
    seen: set[tuple[str, str]] = set()
    by_task: Counter[str] = Counter()
    by_file: dict[str, Counter[str]] = {}
    for case in checked:
        by_task[case.task] += 1
        by_file.setdefault(case.source or "", Counter())[case.task] += 1
        key = (case.task, case.id)
        if key in seen:
            report.n_duplicate_ids += 1
            if len(report.duplicate_ids) < 20:
                report.duplicate_ids.append(case.id)
        seen.add(key)
        if source.task is None and isinstance(case, EvalCase) and _has_label(case):
            report.n_label_without_reply += 1
            if len(report.label_without_reply_ids) < 5:
                report.label_without_reply_ids.append(case.id)
    report.n_valid = sum(by_task.values())
    report.by_task = dict(sorted(by_task.items()))
    report.by_file = {name: dict(sorted(c.items())) for name, c in by_file.items()}
    report.n_invalid = checked.skipped.count
    report.errors = list(checked.skipped.entries)
    report.read = checked.read_report
    if report.n_valid == 0:
        report.empty_reason = checked.empty_reason()
    return report
