"""Other prompt sets as Task 2 cases: Arena-Hard v0.1 and v2, AlpacaEval, MT-Bench, WildBench (fixtures in
`prompt_sets/`, written for these tests in each set's field layout)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from uxbench.data.loaders import load_cases
from uxbench.data.normalize import normalize_row
from uxbench.data.prompt_sets import detect, to_eval_row
from uxbench.data.schema import EvalCase
from uxbench.errors import DataError

SETS = Path(__file__).with_name("prompt_sets")


def _cases(name: str, **kw: Any) -> list[EvalCase]:
    cases = list(load_cases(SETS / name, **kw))
    assert all(isinstance(c, EvalCase) for c in cases)
    return cases  # type: ignore[return-value]


def test_arena_hard_v01_first_turn_cluster_as_scenario() -> None:
    cases = _cases("arena_hard_v0.1_question.jsonl")
    assert [c.id for c in cases] == ["ah01a7c3", "ah02b9d1", "ah03c4e8"]
    first = cases[0]
    assert first.query.startswith("Write a Python function that merges two sorted lists")
    assert first.history == []
    assert first.labels.scenario == "Python Data Processing"
    assert first.meta == {"category": "arena-hard-v0.1", "prompt_set": "arena_hard_v0.1"}
    assert first.lang == "en"


def test_arena_hard_v2_prompt_and_category() -> None:
    cases = _cases("arena_hard_v2_question.jsonl")
    assert [(c.id, c.labels.scenario) for c in cases] == [
        ("v2-0001", "hard_prompt"), ("v2-0002", "creative_writing"), ("v2-0003", "hard_prompt")]
    assert cases[1].query == "Write a short poem about a lighthouse keeper's last night on duty."
    assert cases[0].meta == {"subcategory": "coding", "prompt_set": "arena_hard_v2"}


def test_alpaca_eval_instruction_input_and_reference_output_in_meta() -> None:
    cases = _cases("alpaca_eval.json")
    assert [c.id for c in cases] == ["alpaca_eval.json:1", "alpaca_eval.json:2", "alpaca_eval.json:3"]  # no id field
    assert cases[0].query == "Give three tips for keeping basil alive indoors."
    assert cases[1].query == "Translate the sentence into French.\n\nThe library closes at six."
    assert cases[2].labels.scenario == "oasst"
    assert cases[0].meta == {"output": "Give it sun, water when the soil is dry, and pinch the tops.",
                             "generator": "reference_model", "prompt_set": "alpaca_eval"}
    assert cases[0].reference_response is None  # another model's answer is not the case's own reply


def test_mt_bench_first_turn_only() -> None:
    cases = _cases("mt_bench_question.jsonl")
    assert [c.id for c in cases] == ["901", "902", "903"]
    assert cases[0].query == "Write a friendly email inviting a colleague to a team lunch on Friday."
    assert cases[0].meta["later_turns"] == ["Now rewrite it in a formal tone."]
    assert cases[1].meta["reference"] == ["720 degrees", "1440 degrees"]
    assert "later_turns" not in cases[2].meta
    assert [c.labels.scenario for c in cases] == ["writing", "math", "roleplay"]


def test_wildbench_history_and_last_user_message() -> None:
    cases = _cases("wildbench.jsonl")
    first = cases[0]
    assert first.id == "wb-s1"
    assert first.query == "My knees hurt after two sessions. What should I change?"
    assert [(m.role, m.content) for m in first.history] == [
        ("user", "I want to start running. Where do I begin?"),
        ("assistant", "Start with walk-run intervals three times a week."),
    ]
    assert first.labels.scenario == "Advice seeking"
    assert first.meta["checklist"][0] == "Does it suggest rest or lower volume?"
    assert first.meta["secondary_tags"] == ["Information seeking"]
    assert cases[1].history == [] and cases[2].lang == "zh"


def test_a_directory_of_every_set_loads_as_eval_with_and_without_task() -> None:
    assert len(list(load_cases(SETS))) == 15
    assert len(list(load_cases(SETS, task="eval"))) == 15


@pytest.mark.parametrize(("row", "expected"), [
    ({"query": "q", "instruction": "i"}, None),  # any UXBench field wins
    ({"history": [], "turns": ["t"]}, None),
    ({"conversation_input": [{"role": "user", "content": "x"}], "turns": ["t"], "instruction": "i"}, "wildbench"),
    ({"turns": [{"content": "x"}], "prompt": "p", "uid": "u"}, "arena_hard_v0.1"),
    ({"turns": ["x"], "instruction": "i"}, "mt_bench"),
    ({"prompt": "p", "uid": "u", "instruction": "i"}, "arena_hard_v2"),
    ({"prompt": "p"}, None),  # a bare prompt without uid is not recognised
    ({"instruction": "i"}, "alpaca_eval"),
    ({"cid": "x", "text": "y"}, None),
])
def test_detection_precedence(row: dict[str, Any], expected: str | None) -> None:
    assert detect(row) == expected


def test_uxbench_rows_are_untouched() -> None:
    row = {"cid": "c", "query": "q", "history": [], "instruction": "kept in meta"}
    assert to_eval_row(row) is None
    assert normalize_row(row).meta == {"instruction": "kept in meta"}


@pytest.mark.parametrize(("row", "field"), [
    ({"session_id": "s", "conversation_input": [{"role": "user", "content": "a"}, {"role": "assistant",
                                                                                    "content": "b"}]},
     "conversation_input"),
    ({"session_id": "s", "conversation_input": []}, "conversation_input"),
    ({"session_id": "s", "conversation_input": [{"role": "user", "content": "  "}]}, "conversation_input[0].content"),
    ({"question_id": 1, "turns": [""]}, "turns[0]"),
    ({"question_id": 1, "turns": [{"text": "x"}]}, "turns[0].content"),
    ({"uid": "u", "prompt": "   "}, "prompt"),
    ({"instruction": ""}, "instruction"),
])
def test_bad_rows_name_line_and_field(tmp_path: Path, row: dict[str, Any], field: str) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"uid": "ok", "prompt": "fine"}) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        list(load_cases(path))
    assert (info.value.source, info.value.line, info.value.field) == (str(path), 2, field)


def test_a_prompt_set_forced_to_another_task_says_to_use_eval() -> None:
    with pytest.raises(DataError, match=r"line 1: is a mt_bench prompt row.*--task eval"):
        list(load_cases(SETS / "mt_bench_question.jsonl", task="recovery"))
