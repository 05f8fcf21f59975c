"""Rows of other prompt sets, read as Task 2 (eval) cases for the cross-benchmark check.

A row is recognised by its fields, in this order (the first that applies wins):

1. a row with any UXBench field (`query`, `source_query`, `history`, `messages`, `selected_history`,
   `failed_response`, `user_complaint`, `complaint`, `agent_response_full`, `response`) is a UXBench row:
   it is not a prompt-set row, whatever else it holds;
2. `conversation_input` (a list of `{role, content}`): **WildBench**. The last message (a user one) is the
   query, the earlier ones the history; scenario = `primary_tag`; `session_id` is the id;
3. `turns` as a list of objects (`[{content}]`): **Arena-Hard v0.1**; scenario = `cluster` (every v0.1 row's
   `category` is the same `arena-hard-v0.1`, kept in meta); id = `question_id`;
4. `turns` as a list of strings: **MT-Bench**; the first turn is the query (later ones: `later_turns` in meta);
   scenario = `category`; id = `question_id`;
5. `prompt` (a string) with `uid`: **Arena-Hard v2**; scenario = `category` (`subcategory` in meta);
6. `instruction` (a string): **AlpacaEval** (a JSON list); an Alpaca-style non-empty `input` is appended to
   the instruction after a blank line; scenario = `dataset`; no id field, so the file and line are the id.

The row handed to the normaliser has `task: eval`, the id, `query`, `history`, `scenario` and
`prompt_set` (the set's name); every other field of the source row is passed through, so it ends up in the
case's `meta` (AlpacaEval's reference `output` and `generator`, WildBench's `checklist`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from uxbench.errors import DataError

PromptSet = Literal["wildbench", "arena_hard_v0.1", "mt_bench", "arena_hard_v2", "alpaca_eval"]
UXBENCH_FIELDS = (
    "query", "source_query", "history", "messages", "selected_history", "failed_response", "user_complaint",
    "complaint", "agent_response_full", "response",
)


def detect(row: Mapping[str, Any]) -> PromptSet | None:
    """The prompt set a row belongs to, by the precedence in the module docstring; None for other rows."""
    if any(key in row for key in UXBENCH_FIELDS):
        return None
    if "conversation_input" in row:
        return "wildbench"
    turns = row.get("turns")
    if isinstance(turns, list) and turns:
        return "arena_hard_v0.1" if isinstance(turns[0], Mapping) else "mt_bench"
    if isinstance(row.get("prompt"), str) and "uid" in row:
        return "arena_hard_v2"
    if isinstance(row.get("instruction"), str):
        return "alpaca_eval"
    return None


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise DataError(f"expected text, got {type(value).__name__}", field=field)
    if not value.strip():
        raise DataError("is empty: there is no prompt to answer", field=field)
    return value


def _label(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    return value.strip() or None if isinstance(value, str) else None


def _wildbench(row: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    conversation = row.get("conversation_input")
    if not isinstance(conversation, list) or not conversation:
        raise DataError("expected a non-empty list of {role, content} messages", field="conversation_input")
    last = conversation[-1]
    if not isinstance(last, Mapping) or last.get("role") != "user":
        raise DataError("does not end with a user message (the query to answer)", field="conversation_input")
    query = _text(last.get("content"), f"conversation_input[{len(conversation) - 1}].content")
    return ({"cid": row.get("session_id"), "query": query, "history": conversation[:-1],
             "scenario": _label(row, "primary_tag")}, {"conversation_input", "session_id"})


def _turns(row: Mapping[str, Any], kind: PromptSet) -> tuple[dict[str, Any], set[str]]:
    turns = row["turns"]
    if kind == "arena_hard_v0.1":
        if not isinstance(turns[0], Mapping):
            raise DataError("expected objects with `content`", field="turns[0]")
        query = _text(turns[0].get("content"), "turns[0].content")
        scenario, used = _label(row, "cluster"), {"question_id", "cluster", "turns"}
    else:
        query = _text(turns[0], "turns[0]")
        scenario, used = _label(row, "category"), {"question_id", "category", "turns"}
    fields: dict[str, Any] = {"cid": row.get("question_id"), "query": query, "history": [], "scenario": scenario}
    if len(turns) > 1:
        fields["later_turns"] = turns[1:]  # not asked: Task 2 answers one query
    return fields, used


def _arena_v2(row: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    return ({"cid": row.get("uid"), "query": _text(row["prompt"], "prompt"), "history": [],
             "scenario": _label(row, "category")}, {"uid", "prompt", "category"})


def _alpaca(row: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    query = _text(row["instruction"], "instruction")
    extra = row.get("input")
    used = {"instruction", "dataset"}
    if isinstance(extra, str):
        used.add("input")
        if extra.strip():
            query = f"{query.rstrip()}\n\n{extra.strip()}"
    return {"query": query, "history": [], "scenario": _label(row, "dataset")}, used


def to_eval_row(row: Mapping[str, Any]) -> tuple[PromptSet, dict[str, Any]] | None:
    """(set name, the row in UXBench's Task 2 layout) for a prompt-set row; None for any other row."""
    kind = detect(row)
    if kind is None:
        return None
    if kind == "wildbench":
        fields, used = _wildbench(row)
    elif kind in ("arena_hard_v0.1", "mt_bench"):
        fields, used = _turns(row, kind)
    elif kind == "arena_hard_v2":
        fields, used = _arena_v2(row)
    else:
        fields, used = _alpaca(row)
    rest = {k: v for k, v in row.items() if k not in used and k not in fields}
    out = {**rest, **{k: v for k, v in fields.items() if v is not None}, "task": "eval", "prompt_set": kind}
    return kind, out
