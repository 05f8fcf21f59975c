"""Row normalisation: every field variant of the official files, and the errors for bad rows."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from uxbench.data.normalize import infer_task, normalize_row, parse_ground_truth
from uxbench.data.payload import unwrap_payload
from uxbench.data.schema import EvalCase, JudgeCase, RecoveryCase
from uxbench.data.timestamps import parse_timestamp
from uxbench.errors import DataError

HISTORY = [
    {"turn_index": 0, "role": "user", "message": "hi", "create_time": "2025-05-01 10:00:00"},
    {"turn_index": 1, "role": "assistant", "message": "hello!", "create_time": "2025-05-01 10:00:03"},
]


def judge_row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cid": "uxbench_ux_judge_0001",
        "ground_truth": -1,
        "source_query": {"turn_index": 2, "message": "How long to boil an egg?"},
        "selected_history": HISTORY,
        "agent_response_full": "About 9 minutes for hard-boiled.",
        "failure_dimension": "冗余啰嗦",
        "scenario": "信息与知识查询",
        "difficulty": "hard",
        "signal_type": "dislike",
        "judge_scores": {"severity": 4},
    }
    row.update(over)
    return row


def test_official_judge_shape() -> None:
    case = normalize_row(judge_row(), source="x.jsonl")
    assert isinstance(case, JudgeCase)
    assert case.id == "uxbench_ux_judge_0001"
    assert case.query == "How long to boil an egg?"
    assert [m.content for m in case.history] == ["hi", "hello!"]
    assert case.history[0].created_at == datetime(2025, 5, 1, 10, 0, 0, tzinfo=timezone.utc)
    assert case.history[1].turn_index == 1
    assert case.label == "bad"
    assert case.labels.failure_dimension == "冗余啰嗦"
    assert case.labels.failure_dimension_key == "verbosity"
    assert case.labels.scenario_key == "information_knowledge"
    assert case.labels.difficulty == "hard"
    assert case.meta == {"judge_scores": {"severity": 4}, "source_query_turn_index": 2}
    assert case.source == "x.jsonl"
    assert case.lang == "en"
    assert case.n_turns == 2


def test_simplified_judge_shape_with_content_and_string_query() -> None:
    row = {
        "cid": 7,
        "label": "good",
        "history": [{"role": "user", "content": "你好"}, {"role": "assistant", "content": "你好呀"}],
        "query": "推荐一本书",
        "response": "《活着》",
        "success_dimension": "准确回答",
    }
    case = normalize_row(row)
    assert isinstance(case, JudgeCase)
    assert case.id == "7" and case.label == "good" and case.lang == "zh"
    assert case.labels.success_dimension_key == "accurate_answer"
    assert [m.role for m in case.history] == ["user", "assistant"]


@pytest.mark.parametrize(
    "history",
    [
        json.dumps(HISTORY),
        str(
            [{"role": "user", "message": "hi"}, {"role": "assistant", "message": "hello!"}]
        ),  # Python literal
    ],
)
def test_history_as_text(history: str) -> None:
    case = normalize_row(judge_row(selected_history=history))
    assert [m.content for m in case.history] == ["hi", "hello!"]


def test_source_query_as_json_text_and_history_ending_with_query() -> None:
    row = judge_row(
        source_query=json.dumps({"turn_index": 2, "content": "again?"}),
        selected_history=[*HISTORY, {"role": "user", "message": "again?"}],
    )
    case = normalize_row(row)
    assert case.query == "again?"  # type: ignore[union-attr]
    assert len(case.history) == 2


def test_query_that_is_json_but_not_an_object_with_text_is_kept() -> None:
    case = normalize_row(judge_row(source_query='{"a": 1}'))
    assert case.query == '{"a": 1}'  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "label"),
    [
        (1, "good"),
        (-1, "bad"),
        ("+1", "good"),
        ("-1", "bad"),
        ("good", "good"),
        ("BAD", "bad"),
        (1.0, "good"),
    ],
)
def test_ground_truth_values(value: object, label: str) -> None:
    assert parse_ground_truth(value) == label


@pytest.mark.parametrize("value", [0, "0", True, False, 2, "maybe", [1]])
def test_ambiguous_ground_truth_is_an_error(value: object) -> None:
    with pytest.raises(DataError) as info:
        normalize_row(judge_row(ground_truth=value))
    assert info.value.field == "ground_truth"


def test_label_inference_without_ground_truth() -> None:
    row = judge_row()
    del row["ground_truth"]
    assert normalize_row(row).label == "bad"  # type: ignore[union-attr]  (failure_dimension present)
    good = {**row, "success_dimension": "共情支持"}
    del good["failure_dimension"]
    assert normalize_row(good).label == "good"  # type: ignore[union-attr]
    assert normalize_row(good, default_label="bad").label == "bad"  # type: ignore[union-attr]  (file name wins)
    bare = {k: v for k, v in good.items() if k != "success_dimension"}
    with pytest.raises(DataError, match="ground_truth"):
        normalize_row(bare, task="judge")


def test_product_payload_response_is_unwrapped() -> None:
    payload = {
        "content": [
            {"type": "think", "msg": "plan the answer"},
            {"type": "deepSearch", "msg": "", "steps": [{"toolCall": {"title": "searched egg times"}}]},
            {"type": "searchGuid", "msg": "", "docs": [{"title": "Eggs", "url": "https://example.com"}]},
            {"type": "text", "msg": "Boil for 9 minutes.", "marks": []},
            {"type": "image", "msg": "", "url": "https://example.com/egg.png"},
            {"type": "text", "msg": "Then cool in ice water."},
        ]
    }
    for value in (payload, json.dumps(payload)):
        case = normalize_row(judge_row(agent_response_full=value))
        assert case.response == "Boil for 9 minutes.\n\nThen cool in ice water."  # type: ignore[union-attr]
        reasoning = case.response_reasoning  # type: ignore[union-attr]
        assert reasoning is not None and "plan the answer" in reasoning and "searched egg times" in reasoning


def test_explicit_reasoning_field_wins_over_payload() -> None:
    payload = json.dumps({"content": [{"type": "think", "msg": "inner"}, {"type": "text", "msg": "out"}]})
    case = normalize_row(judge_row(agent_response_full=payload, agent_response_reasoning="shown"))
    assert case.response_reasoning == "shown"  # type: ignore[union-attr]


def test_payload_without_text_is_an_error() -> None:
    payload = json.dumps({"content": [{"type": "image", "msg": "", "url": "u"}]})
    with pytest.raises(DataError) as info:
        normalize_row(judge_row(agent_response_full=payload))
    assert info.value.field == "agent_response_full"


def test_json_looking_replies_are_not_payloads() -> None:
    code = '[{"type": "fruit", "msg": "apple"}]'
    assert unwrap_payload(code) is None
    assert unwrap_payload('{"content": "just text"}') is None
    assert unwrap_payload('[{"type": "text", "msg": "hi"}]') == ("hi", None)
    case = normalize_row(judge_row(agent_response_full=code))
    assert case.response == code  # type: ignore[union-attr]


def test_payload_in_history_messages() -> None:
    hist = [
        {"role": "user", "message": "q"},
        {
            "role": "assistant",
            "message": json.dumps({"content": [{"type": "text", "msg": "a"}, {"type": "think", "msg": "r"}]}),
        },
    ]
    case = normalize_row(judge_row(selected_history=hist))
    assert case.history[1].content == "a" and case.history[1].reasoning == "r"


def test_eval_messages_with_and_without_query() -> None:
    msgs = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    split = normalize_row({"cid": "e1", "messages": msgs})
    assert isinstance(split, EvalCase) and split.query == "c" and len(split.history) == 2
    same = normalize_row({"cid": "e2", "messages": msgs, "query": "c"})
    assert isinstance(same, EvalCase) and same.query == "c" and len(same.history) == 2
    appended = normalize_row({"cid": "e3", "messages": msgs[:2], "query": "c"})
    assert isinstance(appended, EvalCase) and appended.query == "c" and len(appended.history) == 2
    with pytest.raises(DataError) as info:
        normalize_row({"cid": "e4", "messages": msgs[:2]})
    assert info.value.field == "query"


def test_eval_official_demo_shape() -> None:
    row = {
        "cid": "uxbench_ux_eval_0001",
        "query": "太长了，压缩成两句话",
        "history": [{"role": "user", "content": "润色周报"}, {"role": "assistant", "content": "……"}],
        "history_turns": 2,
        "scenario": "办公与效率",
        "difficulty": None,
        "dimension": "冗余啰嗦",
        "scene_l1": "内容生成",
    }
    case = normalize_row(row)
    assert isinstance(case, EvalCase)
    assert case.labels.failure_dimension_key == "verbosity"
    assert case.labels.difficulty is None
    assert case.meta == {"history_turns": 2, "scene_l1": "内容生成"}
    assert case.reference_response is None


def test_recovery_shape_and_trailing_copies() -> None:
    row = {
        "cid": "r1",
        "history": [
            {"role": "user", "message": "5 miles in km?"},
            {"role": "assistant", "message": "3.1 km"},
            {"role": "user", "message": "wrong"},
        ],
        "failed_response": "3.1 km",
        "user_complaint": "wrong",
        "failure_dimension": "事实性错误",
    }
    case = normalize_row(row)
    assert isinstance(case, RecoveryCase)
    assert [m.content for m in case.history] == ["5 miles in km?"]
    assert case.complaint == "wrong" and case.failed_response == "3.1 km"
    with pytest.raises(DataError) as info:
        normalize_row({**row, "user_complaint": "  "})
    assert info.value.field == "user_complaint"


def test_task_inference() -> None:
    assert infer_task(judge_row()) == "judge"
    assert infer_task({"query": "q", "history": []}) == "eval"
    assert infer_task({"query": "q", "response": "r"}) == "eval"
    assert infer_task({"query": "q", "response": "r"}, default_label="good") == "judge"
    assert infer_task({"failed_response": "x", "user_complaint": "y"}) == "recovery"
    assert infer_task({"task": "recovery"}) == "recovery"


def test_forced_task_reads_a_judge_row_as_eval() -> None:
    case = normalize_row(judge_row(), task="eval")
    assert isinstance(case, EvalCase)
    assert case.reference_response == "About 9 minutes for hard-boiled."


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (judge_row(selected_history=[{"role": "robot", "message": "x"}]), "selected_history[0].role"),
        (judge_row(selected_history=[{"role": "user", "message": 5}]), "selected_history[0].message"),
        (judge_row(selected_history="not json ["), "selected_history"),
        (judge_row(selected_history={"a": 1}), "selected_history"),
        (
            judge_row(selected_history=[{"role": "user", "message": "x", "turn_index": "abc"}]),
            "selected_history[0].turn_index",
        ),
        (judge_row(source_query={"turn_index": 1}), "source_query.message"),
        (judge_row(source_query="  "), "source_query"),
        (judge_row(agent_response_full=12), "agent_response_full"),
        (judge_row(scenario=3), "scenario"),
        (judge_row(cid=None, id=None), "cid"),
        (judge_row(cid=True), "cid"),
    ],
)
def test_errors_name_the_field(row: dict[str, Any], field: str) -> None:
    with pytest.raises(DataError) as info:
        normalize_row(row)
    assert info.value.field == field
    assert field in str(info.value)


def test_fallback_id_and_non_object_row() -> None:
    row = judge_row()
    del row["cid"]
    assert normalize_row(row, fallback_id="f.jsonl:3").id == "f.jsonl:3"
    with pytest.raises(DataError, match="JSON object"):
        normalize_row([1, 2])


def test_lang_field_and_guess() -> None:
    assert normalize_row(judge_row(lang="zh-CN")).lang == "zh"
    assert normalize_row(judge_row(lang="klingon")).lang == "en"  # unknown code: guessed from text
    assert normalize_row(judge_row(source_query="红烧肉怎么做", agent_response_full="先焯水")).lang == "zh"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # A time without a zone is UTC (it was a naive datetime here, an aware one in the miner).
        ("2025-05-01 10:00:00", datetime(2025, 5, 1, 10, 0, 0, tzinfo=timezone.utc)),
        ("2025-05-01T10:00:00Z", datetime(2025, 5, 1, 10, 0, 0, tzinfo=timezone.utc)),
        (1746093600, datetime(2025, 5, 1, 10, 0, 0, tzinfo=timezone.utc)),
        (1746093600000, datetime(2025, 5, 1, 10, 0, 0, tzinfo=timezone.utc)),
        ("1746093600", datetime(2025, 5, 1, 10, 0, 0, tzinfo=timezone.utc)),
        ("yesterday", None),
        (float("nan"), None),
        (10**30, None),
        (True, None),
        (None, None),
    ],
)
def test_timestamps(value: object, expected: datetime | None) -> None:
    assert parse_timestamp(value, lenient=True) == expected


def test_unicode_digit_strings_do_not_crash() -> None:
    assert parse_timestamp("²", lenient=True) is None
    with pytest.raises(DataError) as info:
        normalize_row(judge_row(selected_history=[{"role": "user", "message": "x", "turn_index": "²"}]))
    assert info.value.field == "selected_history[0].turn_index"


def test_null_text_variant_next_to_a_set_one() -> None:
    # Arrow-backed rows carry every key seen in the column, with None where a row lacked it.
    hist = [{"role": "user", "message": None, "content": "from content"}]
    case = normalize_row(judge_row(selected_history=hist, source_query={"message": None, "content": "q?"}))
    assert case.history[0].content == "from content"
    assert case.query == "q?"  # type: ignore[union-attr]
