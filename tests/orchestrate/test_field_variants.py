"""Every field variant of the official task2_eval and task3_recovery rows (method notes 1.4 and 1.5), and the
other prompt sets, run end to end: one file per variant through `execute`, the model under test a real
OpenAI-compatible loopback server that logs the messages it received, the judge `scripted:always-good`.
Each test checks the exact messages of every case and that every case was generated and scored."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from run_support import write_jsonl

from uxbench.errors import DataError
from uxbench.orchestrate.runner import JudgeSpec, RunSpec, execute
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

Chat = tuple[tuple[str, str], ...]
REPLY = "Sorry about that. Here is a better answer."
PROMPT_SETS = Path(__file__).parents[1] / "data" / "prompt_sets"


def U(text: str) -> tuple[str, str]:
    return ("user", text)


def A(text: str) -> tuple[str, str]:
    return ("assistant", text)


def _msgs(chat: Chat, key: str = "content") -> list[dict[str, str]]:
    return [{"role": role, key: text} for role, text in chat]


class Recorder:
    """The loopback responder: logs every request's messages, answers REPLY."""

    def __init__(self) -> None:
        self.seen: list[Chat] = []

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        self.seen.append(tuple((str(m["role"]), str(m["content"])) for m in messages))
        return REPLY


def _run(tmp_path: Path, task: str, data: Path) -> tuple[dict[str, Any], list[Chat], Path]:
    recorder = Recorder()
    with LoopbackServer(LoopbackConfig(responder=recorder)) as srv:
        spec = RunSpec(
            task=task, model="openai:loopback", model_args={"base_url": srv.base_url}, data=str(data),
            judge=JudgeSpec(model="scripted:always-good"), out=tmp_path / "run", concurrency=4, use_cache=False,
        )
        result = asyncio.run(execute(spec))
    return result.summary, recorder.seen, result.run_dir


def _check_complete(summary: dict[str, Any], n: int) -> None:
    assert (summary["n_samples"], summary["n_generated"], summary["n_errors"]) == (n, n, 0)
    (judge,) = summary["judges"].values()
    assert judge["n_score_errors"] == 0
    assert judge["metrics"]["n_scored"] == n and judge["metrics"]["n_good"] == n


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif path.suffix == ".json":
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    else:
        write_jsonl(path, rows)
    return path


# --- Task 2 ---------------------------------------------------------------------------------------------------
H = (U("第一轮问题"), A("第一轮回答"))
LABELS = {"scenario": "信息与知识查询", "difficulty": "hard", "dimension": "事实性错误"}


def _eval_variants() -> dict[str, tuple[str, list[dict[str, Any]], list[Chat]]]:
    """name -> (file name, rows, the chat each row must produce)."""
    q = "最后的问题 {}"
    v: dict[str, tuple[str, list[dict[str, Any]], list[Chat]]] = {
        # run_eval's layout: `messages` is the whole chat, ending with the query; a system message passes through
        "messages_ending_with_query": ("m.jsonl", [
            {"cid": "m1", "messages": _msgs((*H, U(q.format("m1"))))},
            {"cid": "m2", "messages": _msgs((("system", "你是助手"), *H, U(q.format("m2"))))},
        ], [(*H, U(q.format("m1"))), (("system", "你是助手"), *H, U(q.format("m2")))]),
        # `messages` already ending with `query`: the query is not sent twice
        "messages_and_the_same_query": ("mq.jsonl", [
            {"cid": "mq", "messages": _msgs((*H, U(q.format("mq")))), "query": q.format("mq")},
        ], [(*H, U(q.format("mq")))]),
        # `messages` without the query, `query` apart: appended
        "messages_then_query": ("mt.jsonl", [
            {"cid": "mt", "messages": _msgs(H), "query": q.format("mt")},
        ], [(*H, U(q.format("mt")))]),
        # the 200-row demo's layout
        "history_list_and_demo_fields": ("h.jsonl", [
            {"cid": "h1", "query": q.format("h1"), "history": _msgs(H), "history_turns": 2, **LABELS,
             "signal_type": "dislike", "overall_quality": "high", "representativeness": "high",
             "scene_l1": "学习", "scene_l2": "考试", "intent_l1": "查询", "intent_l2": "事实", "sector_l1": "教育",
             "sector_l2": "高教"},
        ], [(*H, U(q.format("h1")))]),
        "history_json_string": ("hj.jsonl", [
            {"cid": "hj", "query": q.format("hj"), "history": json.dumps(_msgs(H), ensure_ascii=False)},
        ], [(*H, U(q.format("hj")))]),
        "history_python_literal": ("hp.jsonl", [
            {"cid": "hp", "query": q.format("hp"), "history": str(_msgs(H))},
        ], [(*H, U(q.format("hp")))]),
        "history_with_message_key": ("hm.jsonl", [
            {"cid": "hm", "query": q.format("hm"), "history": _msgs(H, key="message")},
        ], [(*H, U(q.format("hm")))]),
        # 0-turn rows, in every way a file says "no history"
        "zero_turn_rows": ("z.jsonl", [
            {"cid": "z1", "query": q.format("z1"), "history": [], "history_turns": 0},
            {"cid": "z2", "query": q.format("z2"), "history": "[]"},
            {"cid": "z3", "query": q.format("z3"), "history": ""},
            {"cid": "z4", "query": q.format("z4"), "history": None},
            {"cid": "z5", "query": q.format("z5")},
        ], [(U(q.format(f"z{i}")),) for i in range(1, 6)]),
        # the Task 1 envelope names
        "selected_history_and_source_query": ("s.jsonl", [
            {"cid": "s1", "source_query": {"turn_index": 2, "message": q.format("s1")},
             "selected_history": [
                 {"turn_index": 0, "role": "user", "message": H[0][1], "create_time": "2024-05-01 10:00:00"},
                 {"turn_index": 1, "role": "assistant", "message": H[1][1], "create_time": "2024-05-01 10:00:09"}]},
        ], [(*H, U(q.format("s1")))]),
        "dimension_alias_and_null_difficulty": ("d.jsonl", [
            {"cid": "d1", "query": q.format("d1"), "history": _msgs(H), "dimension": "冗余啰嗦", "difficulty": None},
        ], [(*H, U(q.format("d1")))]),
        "json_list_file": ("list.json", [
            {"cid": "j1", "query": q.format("j1"), "history": _msgs(H)},
            {"cid": "j2", "query": q.format("j2"), "history": []},
        ], [(*H, U(q.format("j1"))), (U(q.format("j2")),)]),
        # Arrow rows carry every key of every row (None where a row lacked it)
        "parquet_mixed_message_keys": ("p.parquet", [
            {"cid": "p1", "query": q.format("p1"), "history": _msgs(H)},
            {"cid": "p2", "query": q.format("p2"), "history": _msgs(H, key="message")},
        ], [(*H, U(q.format("p1"))), (*H, U(q.format("p2")))]),
    }
    return v


EVAL = _eval_variants()


@pytest.mark.parametrize("variant", sorted(EVAL))
def test_task2_variant_runs_end_to_end(tmp_path: Path, variant: str) -> None:
    name, rows, expected = EVAL[variant]
    summary, seen, _ = _run(tmp_path, "eval", _write(tmp_path / name, rows))
    assert Counter(seen) == Counter(expected)
    _check_complete(summary, len(rows))


def test_task2_labels_reach_the_breakdowns(tmp_path: Path) -> None:
    name, rows, _ = EVAL["history_list_and_demo_fields"]
    summary, _, _ = _run(tmp_path, "eval", _write(tmp_path / name, rows))
    (judge,) = summary["judges"].values()
    breakdowns = judge["metrics"]["breakdowns"]
    assert list(breakdowns["difficulty"]) == ["hard"]
    assert list(breakdowns["dimension"]) == ["factual_error"]
    assert list(breakdowns["history_messages"]) != ["(none)"]


# --- Task 3 ---------------------------------------------------------------------------------------------------
FAILED = "这是一个失败的回答"


def _recovery_variants() -> dict[str, tuple[str, list[dict[str, Any]], list[Chat]]]:
    c = "你答错了 {}"

    def row(cid: str, **fields: Any) -> dict[str, Any]:
        return {"cid": cid, "failed_response": FAILED, "failure_dimension": "事实性错误",
                "scenario": "信息与知识查询", **fields}

    def chat(cid: str, history: Chat = H) -> Chat:
        return (*history, A(FAILED), U(c.format(cid)))

    return {
        "official_message_key": ("r.jsonl", [row("r1", history=_msgs(H, "message"), user_complaint=c.format("r1"))],
                                 [chat("r1")]),
        "content_key": ("rc.jsonl", [row("rc", history=_msgs(H), user_complaint=c.format("rc"))], [chat("rc")]),
        "history_json_string": ("rj.jsonl", [
            row("rj", history=json.dumps(_msgs(H, "message"), ensure_ascii=False), user_complaint=c.format("rj"))],
            [chat("rj")]),
        "history_python_literal": ("rp.jsonl", [
            row("rp", history=str(_msgs(H, "message")), user_complaint=c.format("rp"))], [chat("rp")]),
        # an export whose history already ends with the failed reply and the complaint: not sent twice
        "history_with_the_failure_in_it": ("rf.jsonl", [
            row("rf", history=_msgs((*H, A(FAILED), U(c.format("rf")))), user_complaint=c.format("rf"))],
            [chat("rf")]),
        "complaint_and_dimension_aliases": ("ra.jsonl", [
            {"cid": "ra", "history": _msgs(H), "failed_response": FAILED, "complaint": c.format("ra"),
             "dimension": "事实性错误"}], [chat("ra")]),
        "zero_turn_rows": ("rz.jsonl", [
            row("rz1", history=[], user_complaint=c.format("rz1")),
            row("rz2", user_complaint=c.format("rz2")),
            row("rz3", history="[]", user_complaint=c.format("rz3")),
        ], [chat(f"rz{i}", ()) for i in (1, 2, 3)]),
        # the query the failed reply answered, given apart: it closes the history
        "history_and_query": ("rq.jsonl", [
            row("rq", history=_msgs(H), query="追问 rq", user_complaint=c.format("rq"))],
            [(*H, U("追问 rq"), A(FAILED), U(c.format("rq")))]),
        "messages_instead_of_history": ("rm.jsonl", [
            row("rm", messages=_msgs(H), user_complaint=c.format("rm"))], [chat("rm")]),
        "parquet": ("r.parquet", [
            row("rpq1", history=_msgs(H, "message"), user_complaint=c.format("rpq1")),
            row("rpq2", history=_msgs(H), user_complaint=c.format("rpq2")),
        ], [chat("rpq1"), chat("rpq2")]),
    }


RECOVERY = _recovery_variants()


@pytest.mark.parametrize("variant", sorted(RECOVERY))
def test_task3_variant_runs_end_to_end(tmp_path: Path, variant: str) -> None:
    name, rows, expected = RECOVERY[variant]
    summary, seen, _ = _run(tmp_path, "recovery", _write(tmp_path / name, rows))
    assert Counter(seen) == Counter(expected)
    _check_complete(summary, len(rows))
    rules = summary["recovery_strategies"]["classifiers"]["rules"]
    assert rules["distribution"]["apology"]["k"] == len(rows)  # REPLY opens with "Sorry"


@pytest.mark.parametrize("complaint", [None, "", "  \n "])
def test_a_task3_row_without_a_complaint_stops_the_run_naming_file_line_and_field(
    tmp_path: Path, complaint: str | None,
) -> None:
    good = {"cid": "ok", "history": _msgs(H), "failed_response": FAILED, "user_complaint": "不对"}
    bad = {"cid": "bad", "history": _msgs(H), "failed_response": FAILED}
    if complaint is not None:
        bad["user_complaint"] = complaint
    data = write_jsonl(tmp_path / "task3.jsonl", [good, good | {"cid": "ok2"}, bad])
    with pytest.raises(DataError) as info:
        _run(tmp_path, "recovery", data)
    assert (info.value.source, info.value.line, info.value.field) == (str(data), 3, "user_complaint")
    assert "complaint" in info.value.reason


# --- other prompt sets as Task 2 cases ------------------------------------------------------------------------
def test_other_prompt_sets_run_as_task2(tmp_path: Path) -> None:
    summary, seen, _ = _run(tmp_path, "eval", PROMPT_SETS)
    _check_complete(summary, 15)
    assert len(seen) == 15
    assert (U("Write a friendly email inviting a colleague to a team lunch on Friday."),) in seen  # MT-Bench turn 1
    wild = next(chat for chat in seen if chat[-1][1].startswith("My knees hurt"))
    assert wild == (U("I want to start running. Where do I begin?"),
                    A("Start with walk-run intervals three times a week."),
                    U("My knees hurt after two sessions. What should I change?"))
    (judge,) = summary["judges"].values()
    assert {"Python Data Processing", "writing", "Advice seeking"} <= set(judge["metrics"]["breakdowns"]["scenario"])
