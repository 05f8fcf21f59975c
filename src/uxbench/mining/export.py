"""Writing sampled cases in the row layouts the harness loads (`uxbench.data.loaders.load_cases`).

Files: task1_judge_bad.jsonl, task1_judge_good.jsonl, task2_eval.jsonl, task3_recovery.jsonl (always all
four, possibly empty). Case ids are `mined_<task>_NNNN`, numbered in the order `sample_cases` returns, so
they are stable for a given seed. Labels carry the Chinese taxonomy name (as the released files do) and a
`*_key` field with the English key. Every file is written to a temporary file and renamed into place.

Row layouts:
- Task 1: cid, ground_truth (-1 bad / +1 good), selected_history (the turns strictly before the query:
  turn_index, role, message, create_time, length), selected_turn_indices, source_query {turn_index,
  message}, agent_response_full, the dimension and scenario, signal_type, explanation, judge_scores,
  judge_average, qa_verdict / qa_issues / qa_notes, needs_context, overall_quality, lang.
- Task 2: cid, history [{role, content}] (before the query), history_turns, query, dimension, scenario,
  signal_type, reference_response (the reply the user disliked), lang.
- Task 3: cid, history [{role, content}] up to and including the query, query (repeated so that a
  complaint that repeats the query verbatim cannot be mistaken for a copy of it), failed_response,
  user_complaint (the next user turn), failure_dimension, scenario, signal_type, lang.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from uxbench.data.taxonomy import TaxonomyKind, get_entry, map_signal_type
from uxbench.errors import DataError
from uxbench.fileio import atomic_write_lines
from uxbench.mining.agents.models import Candidate, SampleTask
from uxbench.mining.records import MinedSession
from uxbench.mining.types import Turn

FILES: dict[SampleTask, str] = {
    "judge_bad": "task1_judge_bad.jsonl",
    "judge_good": "task1_judge_good.jsonl",
    "eval": "task2_eval.jsonl",
    "recovery": "task3_recovery.jsonl",
}
_SIGNAL_TYPES = {"builds_on": "deep_dive", "copied": "copied"}


def signal_type(signal: str | None) -> str | None:
    """The released signal-type key for a signal-stage name (complaint -> explicit_complaint, ...)."""
    if signal is None:
        return None
    return _SIGNAL_TYPES.get(signal) or map_signal_type(signal) or signal


def _zh(kind: TaxonomyKind, key: str | None) -> str | None:
    entry = get_entry(kind, key) if key else None
    return entry.zh if entry is not None else key


def _time(turn: Turn) -> str | None:
    return turn.created_at.strftime("%Y-%m-%d %H:%M:%S") if turn.created_at else None


class _Case:
    """One candidate with its session's turns split around the query."""

    def __init__(self, c: Candidate, item: MinedSession) -> None:
        self.c = c
        turns = {t.turn_index: t for t in item.session.turns}
        missing = [i for i in (c.query_turn_index, c.turn_index) if i is None or i not in turns]
        if missing:
            raise DataError(f"candidate {c.candidate_id}: turn {missing[0]} is not in its session")
        assert c.query_turn_index is not None
        self.query = turns[c.query_turn_index]
        self.reply = turns[c.turn_index]
        self.before = [t for t in item.session.turns if t.turn_index < c.query_turn_index]
        self.next = turns.get(c.next_user_turn) if c.next_user_turn is not None else None

    def chat(self, turns: list[Turn]) -> list[dict[str, str]]:
        return [{"role": t.role, "content": t.content} for t in turns]

    def common(self) -> dict[str, Any]:
        c = self.c
        return {
            "scenario": _zh("scenarios", c.scenario),
            "scenario_key": c.scenario,
            "signal_type": signal_type(c.signal),
            "signal": c.signal,
            "lang": c.lang,
        }


def _qa_fields(c: Candidate) -> dict[str, Any]:
    qa = c.qa or {}
    return {
        "qa_verdict": qa.get("verdict"),
        "qa_issues": list(qa.get("issues") or []),
        "qa_notes": qa.get("notes"),
        "needs_context": c.needs_context,
        "overall_quality": c.quality,
    }


def _judge_row(case: _Case, cid: str) -> dict[str, Any]:
    c = case.c
    bad = c.kind == "bad"
    kind: TaxonomyKind = "failure_dimensions" if bad else "success_dimensions"
    field = "failure_dimension" if bad else "success_dimension"
    row: dict[str, Any] = {
        "cid": cid,
        "ground_truth": -1 if bad else 1,
        "selected_history": [
            {"turn_index": t.turn_index, "role": t.role, "message": t.content, "create_time": _time(t),
             "length": len(t.content)}
            for t in case.before
        ],
        "selected_turn_indices": [t.turn_index for t in case.before],
        "source_query": {"turn_index": case.query.turn_index, "message": case.query.content},
        "agent_response_full": case.reply.content,
        ("dislike_turn_id" if bad else "liked_turn_id"): c.turn_index,
        field: _zh(kind, c.dimension),
        f"{field}_key": c.dimension,
    }
    if c.dimension_original is not None:
        row[f"{field}_raw"] = _zh(kind, c.dimension_original)
    row.update(case.common())
    row.update(
        signal_evidence=c.signal_evidence,
        explanation=c.explanation,
        judge_scores=dict(c.scores or {}),
        judge_average=c.mean_score,
        **_qa_fields(c),
    )
    return row


def _eval_row(case: _Case, cid: str) -> dict[str, Any]:
    c = case.c
    return {
        "cid": cid,
        "history": case.chat(case.before),
        "history_turns": len(case.before),
        "query": case.query.content,
        "dimension": _zh("failure_dimensions", c.failure_dimension),
        "dimension_key": c.failure_dimension,
        **case.common(),
        "reference_response": case.reply.content,
    }


def _recovery_row(case: _Case, cid: str) -> dict[str, Any]:
    c = case.c
    if case.next is None or case.next.role != "user":
        raise DataError(f"candidate {c.candidate_id}: a recovery case needs the user turn after the reply")
    return {
        "cid": cid,
        "history": case.chat([*case.before, case.query]),
        "query": case.query.content,
        "failed_response": case.reply.content,
        "user_complaint": case.next.content,
        "failure_dimension": _zh("failure_dimensions", c.failure_dimension),
        "failure_dimension_key": c.failure_dimension,
        **case.common(),
    }


_BUILDERS: dict[SampleTask, Callable[[_Case, str], dict[str, Any]]] = {
    "judge_bad": _judge_row, "judge_good": _judge_row, "eval": _eval_row, "recovery": _recovery_row,
}


def write_jsonl_atomic(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as JSON lines, atomically."""
    atomic_write_lines(path, (orjson.dumps(row) for row in rows))


def export_cases(
    selected: list[Candidate], sessions: Mapping[str, MinedSession], out_dir: Path
) -> dict[str, Path]:
    """Write the four task files; returns task -> path. `selected` is `sample_cases` output (with `task`)."""
    rows: dict[SampleTask, list[dict[str, Any]]] = {task: [] for task in FILES}
    for c in selected:
        if c.task is None:
            raise DataError(f"candidate {c.candidate_id} has no task: export the output of sample_cases")
        if (c.task == "judge_good") != (c.kind == "good"):
            raise DataError(f"candidate {c.candidate_id}: a {c.kind} case cannot go to {c.task}")
        if c.task == "eval" and c.needs_context:
            raise DataError(f"candidate {c.candidate_id} needs context it does not carry: not a Task 2 case")
        item = sessions.get(c.conversation_id)
        if item is None:
            raise DataError(f"candidate {c.candidate_id}: its session is not among the sessions given")
        bucket = rows[c.task]
        cid = f"mined_{c.task}_{len(bucket) + 1:04d}"
        bucket.append(_BUILDERS[c.task](_Case(c, item), cid))
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for task, name in FILES.items():
        path = out_dir / name
        write_jsonl_atomic(path, rows[task])
        paths[task] = path
    return paths
