"""Training rows for a judge of one's own: Task 1 files and `uxbench mine` outputs, each label with its source.

A row is one reply in its context (history, query, reply) with a good/bad label, the conversation it belongs to
(splits keep a conversation on one side) and, when known, when it happened (temporal split).

- Task 1 files: every field variant `uxbench.data.loaders.load_cases(..., task="judge")` reads. The label's
  source is the file, plus the case's signal type when it has one (mined cases carry `dislike`, ...).
- Mining outputs (a directory holding `signals.parquet` and `work/`): one row per assistant turn that has a
  label; the texts are the de-identified turns of the signal stage's shards (`work/04-signals`). Labels: a
  thumbs-down / thumbs-up wins (`thumbs_down`, `thumbs_up`); otherwise the rules' verdict (`dissatisfied` by
  its signals -> bad, `satisfied` -> good, sources `signals:complaint,rephrase` ...). A turn both thumbed up
  and down, or both dissatisfied and satisfied, is left out and counted; so are near-duplicate conversations
  (`duplicate_of`), replies without a user message before them, and rows whose user message or reply is
  empty (a Task 1 file cannot hold them, so `judge eval` could not read the test side back).

Conversation of a Task 1 case: `meta` conversation_id / conv_id / session_id / dialog_id when present; else the
part of the case id before `#` or `/` (`conv42#3`); else a fingerprint of the conversation's opening (its first
user message): cases cut from one conversation share their opening, so they share a side. Two different
conversations that open with the same words also share a side, which costs nothing but balance.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path

from uxbench.data.schema import JudgeCase
from uxbench.data.timestamps import parse_timestamp
from uxbench.judge_train.rows import LoadReport as LoadReport  # re-exported: callers import them from here
from uxbench.judge_train.rows import TrainRow as TrainRow

CONVERSATION_KEYS = ("conversation_id", "conv_id", "session_id", "dialog_id", "dialogue_id")
ID_SEPARATORS = ("#", "/")
TIME_KEYS = ("created_at", "answercreatetime", "answer_create_time", "create_time", "timestamp", "time", "date")


def conversation_of(case: JudgeCase) -> str:
    """The conversation a Task 1 case was cut from (see the module docstring)."""
    for key in CONVERSATION_KEYS:
        value = case.meta.get(key)
        if isinstance(value, (str, int)) and str(value).strip():
            return str(value).strip()
    for sep in ID_SEPARATORS:
        head, found, _ = case.id.partition(sep)
        if found and head:
            return head
    opening = next((m.content for m in case.history if m.role == "user"), case.query)
    return "opening:" + hashlib.sha256(opening.strip().encode()).hexdigest()[:16]


def time_of(case: JudgeCase) -> datetime | None:
    """When the judged exchange happened: a time field of the row, else the latest time in its history."""
    for key in TIME_KEYS:
        if key in case.meta:
            found = parse_timestamp(case.meta[key], key, lenient=True)
            if found is not None:
                return found
    times = [m.created_at for m in case.history if m.created_at is not None]
    return max(times) if times else None


def row_from_case(case: JudgeCase, source: str) -> TrainRow:
    signal = case.labels.signal_type
    return TrainRow(
        id=case.id, conversation=conversation_of(case), history=tuple(case.history), query=case.query,
        response=case.response, label=case.label, label_source=f"file:{source}" + (f":{signal}" if signal else ""),
        timestamp=time_of(case), lang=case.lang,
    )


def read_task1(path: str | Path, report: LoadReport, *, skip_invalid: bool = False) -> Iterator[TrainRow]:
    """Rows of a Task 1 file or directory (every field variant the loaders read)."""
    from uxbench.data.loaders import load_cases

    for case in load_cases(path, task="judge", skip_invalid=skip_invalid):
        if isinstance(case, JudgeCase):
            row = row_from_case(case, str(path))
            report.rows_by_source[row.label_source] += 1
            yield row


def is_mining_output(path: Path) -> bool:
    return path.is_dir() and (path / "signals.parquet").is_file()


def load_rows(paths: Sequence[str | Path], *, skip_invalid: bool = False) -> tuple[list[TrainRow], LoadReport]:
    """Every labelled row of `paths` (Task 1 files or directories, mining outputs), in input order."""
    from uxbench.judge_train.mined import read_mining_output

    report = LoadReport()
    rows: list[TrainRow] = []
    for path in paths:
        p = Path(path).expanduser()
        rows.extend(read_mining_output(p, report) if is_mining_output(p)
                    else read_task1(path, report, skip_invalid=skip_invalid))
    return rows, report


def class_counts(rows: Iterable[TrainRow]) -> dict[str, int]:
    counts = Counter(r.label for r in rows)
    return {"good": counts.get("good", 0), "bad": counts.get("bad", 0)}


def class_weights(rows: Sequence[TrainRow]) -> dict[str, float]:
    """`balanced` weights, n / (2 * n_class): each class weighs as much in the loss as the other."""
    counts = class_counts(rows)
    n = sum(counts.values())
    return {label: (n / (2.0 * c) if c else 0.0) for label, c in counts.items()}
