"""Turn one raw dataset row (a dict) into a `JudgeCase`, `EvalCase` or `RecoveryCase`.

Accepts every field variant of the official files and their documented descriptions:
`selected_history`/`source_query`/`agent_response_full` as well as `history`/`query`/`response`,
`messages` with or without the final user turn, histories stored as JSON or Python-literal text,
`message` or `content` in messages, product JSON payloads as replies, and label names from any of the
dataset's vocabularies. Rows of other prompt sets (Arena-Hard, AlpacaEval, MT-Bench, WildBench) are first
rewritten as Task 2 rows by `prompt_sets`. Fields that are not used are kept in `meta`. Problems raise
`DataError(field=...)`; the loader adds the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from uxbench.data.messages import parse_history, query_text, text_of
from uxbench.data.prompt_sets import to_eval_row
from uxbench.data.schema import (
    AnyCase,
    CaseLabels,
    EvalCase,
    JudgeCase,
    JudgeLabel,
    Message,
    RecoveryCase,
    TaskName,
)
from uxbench.data.taxonomy import (
    map_difficulty,
    map_failure_dimension,
    map_scenario,
    map_signal_type,
    map_success_dimension,
)
from uxbench.errors import DataError

TASKS: tuple[TaskName, ...] = ("judge", "eval", "recovery")
_ID_KEYS = ("cid", "id", "uuid", "case_id")
_HISTORY_KEYS = ("selected_history", "history", "messages")
_QUERY_KEYS = ("source_query", "query")
_RESPONSE_KEYS = ("agent_response_full", "liked_response_full", "response")
_REASONING_KEYS = ("agent_response_reasoning", "response_reasoning")
_REFERENCE_KEYS = ("reference_response", "agent_response_full", "response")
_FAILED_KEYS = ("failed_response",)
_COMPLAINT_KEYS = ("user_complaint", "complaint")
_FAILURE_KEYS = ("failure_dimension", "dimension")
_GOOD = {"1", "+1", "1.0", "good", "liked", "like", "positive", "pos"}
_BAD = {"-1", "-1.0", "bad", "disliked", "dislike", "unliked", "negative", "neg"}
Lang = Literal["zh", "en"]
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_LANGS: dict[str, Lang] = {"zh": "zh", "cn": "zh", "chinese": "zh", "中文": "zh", "en": "en", "english": "en"}


_TITLES = {"judge": "Task 1 (judge)", "eval": "Task 2 (eval)", "recovery": "Task 3 (recovery)"}


def _present(row: Mapping[str, Any], key: str) -> bool:
    value = row.get(key)
    return value is not None and value != "" and value != []


def _first(row: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:  # _present, inlined: called several times for every row
        value = row.get(key)
        if value is not None and value != "" and value != []:
            return key
    return None


def infer_task(row: Mapping[str, Any], *, default_label: JudgeLabel | None = None) -> TaskName:
    """recovery if the row has failed_response / user_complaint; judge if it has a reply and a label-ish
    field (or the file says bad/good); otherwise eval."""
    explicit = row.get("task")
    if isinstance(explicit, str) and explicit.strip().lower() in TASKS:
        return explicit.strip().lower()  # type: ignore[return-value]
    if _first(row, _FAILED_KEYS + _COMPLAINT_KEYS):
        return "recovery"
    labelish = _first(row, ("ground_truth", "label", "failure_dimension", "success_dimension"))
    if _first(row, _RESPONSE_KEYS) and (labelish or default_label is not None):
        return "judge"
    return "eval"


def parse_ground_truth(value: object, field: str = "ground_truth") -> JudgeLabel:
    """+1 / "good" / "liked" -> good, -1 / "bad" / "disliked" -> bad. 0 and booleans are ambiguous: error."""
    if isinstance(value, bool):
        raise DataError("is a boolean; use 1 (good) or -1 (bad)", field=field)
    text = str(value).strip().lower() if isinstance(value, (int, float, str)) else None
    if text in _GOOD:
        return "good"
    if text in _BAD:
        return "bad"
    if text in {"0", "0.0", "-0", "neutral"}:
        raise DataError("is 0, which is ambiguous; use 1 (good) or -1 (bad)", field=field)
    raise DataError(f"is {value!r:.40}; expected 1 / -1 or good / bad", field=field)


def _opt_str(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DataError(f"expected a string, got {type(value).__name__}", field=key)
    return value.strip() or None


def _labels(row: Mapping[str, Any], used: set[str]) -> CaseLabels:
    fkey = _first(row, _FAILURE_KEYS) or "failure_dimension"
    used.update({"scenario", "success_dimension", "difficulty", "signal_type", *_FAILURE_KEYS})
    scenario = _opt_str(row, "scenario")
    failure = _opt_str(row, fkey)
    success = _opt_str(row, "success_dimension")
    difficulty = _opt_str(row, "difficulty")
    signal = _opt_str(row, "signal_type")
    return CaseLabels(  # every value is a checked str or None; validating them (in Rust) beats model_construct
        scenario=scenario,
        scenario_key=map_scenario(scenario),
        failure_dimension=failure,
        failure_dimension_key=map_failure_dimension(failure),
        success_dimension=success,
        success_dimension_key=map_success_dimension(success),
        difficulty=map_difficulty(difficulty) or difficulty,
        signal_type=map_signal_type(signal) or signal,
    )


def _case_id(row: Mapping[str, Any], fallback: str | None, used: set[str]) -> str:
    key = _first(row, _ID_KEYS)
    if key is None:
        if fallback is None:
            raise DataError("is missing (every case needs an id)", field="cid")
        return fallback
    used.add(key)
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(f"expected a string or integer id, got {type(value).__name__}", field=key)
    text = str(value).strip()
    if not text:
        raise DataError("is empty", field=key)
    return text


def _lang(row: Mapping[str, Any], text: str, used: set[str]) -> Lang | None:
    used.update({"lang", "language"})
    given = row.get("lang", row.get("language"))
    if isinstance(given, str) and given.strip():
        code = _LANGS.get(given.strip().lower().split("-")[0].split("_")[0])
        if code is not None:
            return code
    # Cheap guess from the text: enough CJK characters means Chinese.
    sample = "".join(text[:800].split())[:400]
    if not sample:
        return None
    if len(_CJK.findall(sample)) / len(sample) >= 0.2:
        return "zh"
    return "en" if _LATIN.search(sample) else None


def _history_and_query(
    row: Mapping[str, Any], used: set[str], extra: dict[str, Any], *, need_query: bool
) -> tuple[list[Message], str]:
    """History before the turn under test, and that turn's user text (split off the history when needed)."""
    hkey = _first(row, _HISTORY_KEYS)
    history = parse_history(row[hkey], hkey) if hkey else []
    used.update(_HISTORY_KEYS)
    qkey = _first(row, _QUERY_KEYS)
    query: str | None = None
    if qkey is not None:
        used.update(_QUERY_KEYS)
        query, turn = query_text(row[qkey], qkey)
        if turn is not None:
            extra["source_query_turn_index"] = turn
        if not query.strip():
            raise DataError("is empty", field=qkey)
    if query is None:
        if not need_query:
            return history, ""
        if history and history[-1].role == "user" and history[-1].content.strip():
            return history[:-1], history[-1].content
        raise DataError(
            "no user query: give `query`/`source_query`, or end the history with the user turn", field="query"
        )
    if history and history[-1].role == "user" and history[-1].content.strip() == query.strip():
        history = history[:-1]  # `messages` that already end with the query
    return history, query


def _reply(
    row: Mapping[str, Any], keys: tuple[str, ...], used: set[str], *, required: bool
) -> tuple[str, str | None]:
    key = _first(row, keys)
    used.update(keys)
    if key is None:
        if required:
            raise DataError("is missing", field=keys[0])
        return "", None
    text, reasoning = text_of(row[key], key)
    if required and not text.strip():
        raise DataError("has no reply text (empty, or a payload without text blocks)", field=key)
    return text, reasoning


def _judge(
    row: Mapping[str, Any],
    base: dict[str, Any],
    used: set[str],
    extra: dict[str, Any],
    default: JudgeLabel | None,
) -> JudgeCase:
    history, query = _history_and_query(row, used, extra, need_query=True)
    response, payload_reasoning = _reply(row, _RESPONSE_KEYS, used, required=True)
    rkey = _first(row, _REASONING_KEYS)
    used.update(_REASONING_KEYS)
    reasoning = _opt_str(row, rkey) if rkey else None
    used.update({"ground_truth", "label"})
    gkey = _first(row, ("ground_truth", "label"))
    label: JudgeLabel | None = parse_ground_truth(row[gkey], gkey) if gkey else default
    if label is None:
        if _present(row, "success_dimension"):
            label = "good"
        elif _first(row, _FAILURE_KEYS):
            label = "bad"
        else:
            raise DataError(
                "is missing; give 1 (good) / -1 (bad), or put bad / good in the file name",
                field="ground_truth",
            )
    return JudgeCase(
        history=history,
        query=query,
        response=response,
        response_reasoning=reasoning or payload_reasoning,
        label=label,
        **base,
    )


def _eval(row: Mapping[str, Any], base: dict[str, Any], used: set[str], extra: dict[str, Any]) -> EvalCase:
    history, query = _history_and_query(row, used, extra, need_query=True)
    reference, _ = _reply(row, _REFERENCE_KEYS, used, required=False)
    return EvalCase(history=history, query=query, reference_response=reference.strip() or None, **base)


def _recovery(
    row: Mapping[str, Any], base: dict[str, Any], used: set[str], extra: dict[str, Any]
) -> RecoveryCase:
    failed, _ = _reply(row, _FAILED_KEYS, used, required=True)
    ckey = _first(row, _COMPLAINT_KEYS)
    if ckey is not None and isinstance(row[ckey], list) and any(isinstance(p, str) for p in row[ckey]):
        raise DataError(
            f"is a list of {len(row[ckey])} texts; a Task 3 complaint is the one user message after failed_response: "
            "give it as one string (earlier user messages belong in the history)", field=ckey)
    complaint, _ = _reply(row, _COMPLAINT_KEYS, used, required=False)
    if not complaint.strip():
        raise DataError(
            "is missing or empty: a Task 3 row needs the user's complaint, the user turn after failed_response",
            field=_first(row, _COMPLAINT_KEYS) or _COMPLAINT_KEYS[0],
        )
    history, query = _history_and_query(row, used, extra, need_query=False)
    # Some exports include the complaint and the failed reply at the end of the history: drop the copies.
    if history and history[-1].role == "user" and history[-1].content.strip() == complaint.strip():
        history = history[:-1]
    if history and history[-1].role == "assistant" and history[-1].content.strip() == failed.strip():
        history = history[:-1]
    if query:  # the query that the failed reply answered belongs at the end of the history
        history = [*history, Message(role="user", content=query)]
    return RecoveryCase(history=history, failed_response=failed, complaint=complaint, **base)


def normalize_row(
    row: object,
    *,
    task: TaskName | None = None,
    default_label: JudgeLabel | None = None,
    source: str | None = None,
    fallback_id: str | None = None,
) -> AnyCase:
    """Normalise one raw row.

    task: force the task (else the row's `task` field, else `infer_task`).
    default_label: judge label when the row has none (from a file name or HF config saying bad/good).
    source: stored on the case (`demo`, a path, `hf:repo/config`).
    fallback_id: id to use when the row has no `cid`/`id` (the loader passes `<file>:<line>`).
    """
    if not isinstance(row, Mapping):
        raise DataError(f"expected a JSON object, got {type(row).__name__}")
    converted = to_eval_row(row)  # Arena-Hard, AlpacaEval, MT-Bench, WildBench rows (data/prompt_sets.py)
    if converted is not None:
        kind, row = converted
        if task not in (None, "eval"):
            raise DataError(f"is a {kind} prompt row, which loads as a Task 2 (eval) case: run it with --task eval")
    chosen = task or infer_task(row, default_label=default_label)
    used: set[str] = {"task", "source"}
    extra: dict[str, Any] = {}
    base: dict[str, Any] = {
        "id": _case_id(row, fallback_id, used),
        "labels": _labels(row, used),
        "source": source,
    }
    try:
        case: AnyCase
        try:
            if chosen == "judge":
                case = _judge(row, base, used, extra, default_label)
                lang_text = case.query + case.response
            elif chosen == "eval":
                case = _eval(row, base, used, extra)
                lang_text = case.query
            else:
                case = _recovery(row, base, used, extra)
                lang_text = case.complaint + case.failed_response
        except DataError as problem:
            looks = infer_task(row, default_label=default_label) if task is not None else chosen
            if looks == chosen or problem.hint:
                raise
            raise DataError(problem.reason, field=problem.field, hint=(
                f"the row looks like a {_TITLES[looks]} row, not a {_TITLES[chosen]} one: pass --task {looks}"
            )) from None
        case.lang = _lang(row, lang_text, used)
        case.meta = {**{str(k): v for k, v in row.items() if k not in used}, **extra}
    except ValidationError as exc:  # a safety net: field checks above should catch these first
        err = exc.errors()[0]
        raise DataError(
            str(err.get("msg", "invalid value")), field=".".join(map(str, err.get("loc", ())))
        ) from None
    return case
