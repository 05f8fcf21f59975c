"""The checks between the models and the code: JSON extraction, miner proposals against the session,
judge scores, QA reviews, the keep rule, and what the prompts show."""

from __future__ import annotations

import json

import pytest
from agents_support import complaint_session, mined

from uxbench.data.taxonomy import failure_dimensions, map_failure_dimension, scenarios
from uxbench.mining.agents import AgentConfig, extract_json, keep_decision, strip_reasoning
from uxbench.mining.agents.prompting import render, session_lang, taxonomy_list
from uxbench.mining.agents.proposals import parse_proposals, query_block
from uxbench.mining.agents.render import render_dialogue
from uxbench.mining.agents.reviews import Scores, parse_reviews, parse_scores

AXES5 = ("query_completeness", "signal_credibility", "representativeness", "severity", "annotation_clarity")


@pytest.mark.parametrize(
    "text",
    [
        '{"cases": []}',
        '<think>maybe {"cases": [1]} no</think>\n{"cases": []}',
        'reasoning without an opening tag</think>{"cases": []}',
        'Here it is:\n```json\n{"cases": []}\n```\nHope that helps {really}.',
        'Sure! {"note": "x"} and then {"cases": [],}',
        '{"result": {"cases": []}}',
        "[]",
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text, "cases") == {"cases": []}


def test_extract_json_gives_up_cleanly() -> None:
    assert extract_json("no json here", "cases") is None
    assert extract_json('{"other": 1}', "cases") is None
    assert strip_reasoning("<thinking>a</thinking> b") == "b"


def bad_case(**kw: object) -> dict[str, object]:
    case: dict[str, object] = {"turn_index": 1, "query_turn_index": 0, "failure_dimension": "factual_error",
                               "scenario": "information_knowledge", "signal": "complaint", "explanation": "x"}
    case.update(kw)
    return case


def proposals(*cases: dict[str, object], kind: str = "bad", max_cases: int = 5) -> tuple[object, list[str]]:
    item = complaint_session("c1")
    return parse_proposals(json.dumps({"cases": list(cases)}), item, kind,  # type: ignore[arg-type]
                           good_signals=("thumbs_up", "praise", "builds_on"), require_dissatisfied=True,
                           max_cases=max_cases)


def test_proposals_accept_keys_and_names() -> None:
    got, problems = proposals(bad_case(failure_dimension="事实性错误", scenario="Information & Knowledge Query",
                                       signal="explicit_complaint"))
    assert problems == []
    (p,) = got  # type: ignore[misc]
    assert (p.turn_index, p.query_turn_index, p.dimension, p.scenario, p.signal) == (
        1, 0, "factual_error", "information_knowledge", "complaint")


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        (bad_case(turn_index=2), "turn_index 2 is not an assistant turn"),
        (bad_case(turn_index=3, signal="praise"), "turn 3 is not marked DISSATISFIED"),
        (bad_case(query_turn_index=2), "query_turn_index 2 is not the user turn that reply 1 answered (0)"),
        (bad_case(failure_dimension="rudeness"), "failure_dimension 'rudeness' is not one of the listed keys"),
        (bad_case(scenario="other"), "scenario 'other' is not one of the listed keys"),
        (bad_case(signal="thumbs_down"), "signal 'thumbs_down' is not among the signals listed under turn 1 "
                                         "(complaint)"),
        (bad_case(explanation="  "), "explanation is empty"),
        ({"turn_index": "one"}, "cases[0].turn_index"),
    ],
)
def test_proposals_problems(case: dict[str, object], problem: str) -> None:
    got, problems = proposals(case)
    assert got is None and any(problem in p for p in problems), problems


def test_any_invalid_case_spoils_the_answer_and_duplicates_and_extras_are_dropped() -> None:
    got, problems = proposals(bad_case(), bad_case(turn_index=9))
    assert got is None and len(problems) == 1
    got, problems = proposals(bad_case(), bad_case(failure_dimension="verbosity"))
    assert problems == [] and [p.dimension for p in got] == ["factual_error"]  # type: ignore[attr-defined]
    good, problems = proposals({"turn_index": 3, "query_turn_index": 2, "success_dimension": "problem_solving",
                                "scenario": "work_productivity", "signal": "praise", "explanation": "y"},
                               kind="good")
    assert problems == [] and good[0].dimension == "problem_solving"  # type: ignore[index]
    _, problems = proposals(bad_case(), kind="good")
    assert any("not marked LIKED" in p for p in problems)


def test_query_turn_is_the_last_user_turn_before_the_reply() -> None:
    item = mined(("user", "Part one of my question."), ("user", "And part two: how do I do X?"),
                 ("assistant", "Wrong answer."), ("user", "That's wrong, not what I asked."), cid="q")
    assert query_block(item, 2) == [1, 0]
    got, problems = parse_proposals(json.dumps({"cases": [bad_case(turn_index=2, query_turn_index=0)]}), item,
                                    "bad", good_signals=(), require_dissatisfied=True, max_cases=5)
    assert problems == [] and got is not None and got[0].query_turn_index == 1


def test_scores_parsing() -> None:
    entry = dict.fromkeys(AXES5, 4)
    got, problems = parse_scores(json.dumps({"scores": [{"index": 0, **entry}, {"index": "1", **entry,
                                                                             "severity": "5"}]}), 2)
    assert problems == [] and got is not None and got[1].values["severity"] == 5 and got[0].mean == 4.0
    got, problems = parse_scores(json.dumps({"scores": {"0": {"scores": entry}}}), 1)
    assert problems == [] and got is not None and 0 in got
    got, problems = parse_scores(json.dumps({"scores": [{"index": 0, **entry, "severity": 4.5},
                                                        {"index": 5, **entry}]}), 2)
    assert got == {} and any("severity must be an integer" in p for p in problems)
    assert any("no valid index" in p for p in problems) and "no entry for index 1" in problems
    _, problems = parse_scores(json.dumps({"scores": [{"index": 0, **entry, "annotation_clarity": True}]}), 1)
    assert problems and "annotation_clarity" in problems[0]


def test_reviews_parsing() -> None:
    text = json.dumps({"reviews": [
        {"index": 0, "verdict": "Delete", "issues": "not_a_failure", "needs_context": "false"},
        {"index": 1, "verdict": "keep", "issues": [], "needs_context": False, "corrected_dimension": "冗余"},
        {"index": 2, "verdict": "keep", "issues": ["needs_context"], "corrected_dimension": "null"},
    ]})
    got, problems = parse_reviews(text, 3, map_failure_dimension)
    assert problems == [] and got is not None
    assert got[0].verdict == "reject" and got[0].issues == ["not_a_failure"]
    assert got[1].corrected_dimension == "verbosity" and got[2].needs_context
    _, problems = parse_reviews(json.dumps({"reviews": [{"index": 0, "verdict": "maybe",
                                                          "corrected_dimension": "nonsense"}]}), 1,
                                map_failure_dimension)
    assert len(problems) == 2


@pytest.mark.parametrize(
    ("values", "kept"),
    [((5, 4, 4, 4, 3), True), ((5, 5, 5, 4, 2), False), ((4, 4, 4, 4, 3), False), ((4, 4, 4, 4, 4), True),
     ((5, 5, 5, 5, 1), False)],
)
def test_keep_rule(values: tuple[int, ...], kept: bool) -> None:
    scores = Scores(dict(zip(AXES5, values, strict=True)))
    assert (keep_decision(scores, 4.0, 3) is None) is kept


def test_prompts_list_every_taxonomy_key_in_both_languages() -> None:
    for lang in ("en", "zh"):
        listed = taxonomy_list("failure_dimensions", lang)  # type: ignore[arg-type]
        assert all(f"- {e.key}" in listed for e in failure_dimensions())
        system = render(lang, "miner_bad", max_cases=5, dimensions=listed,  # type: ignore[arg-type]
                        scenarios=taxonomy_list("scenarios", lang), signals="complaint")  # type: ignore[arg-type]
        assert all(e.key in system for e in scenarios()) and "$" not in system
    assert "冗余啰嗦" in taxonomy_list("failure_dimensions", "zh")


def test_dialogue_rendering_and_language() -> None:
    item = complaint_session("c1")
    text = render_dialogue(item, {1: "DISSATISFIED"}, max_chars_per_turn=30, max_total_chars=100_000)
    assert "[1] assistant · 2024-05-01 09:01:00  <- DISSATISFIED" in text
    assert "signals: complaint (" in text and "more characters]" in text
    long = mined(("user", "Summarise this. " + "text " * 800), ("assistant", "word " * 1000),
                 ("user", "That is wrong."), cid="long")
    loose = render_dialogue(long, {}, max_chars_per_turn=1500, max_total_chars=100_000)
    tight = render_dialogue(long, {}, max_chars_per_turn=1500, max_total_chars=1000)
    assert len(loose) > 3000 and len(tight) <= 1000 and tight.count("more characters]") == 2
    zh = mined(("user", "你好，帮我查一下天气"), ("assistant", "好的"), cid="zh")
    assert session_lang(zh.session, "auto") == "zh" and session_lang(item.session, "auto") == "en"
    assert session_lang(item.session, "zh") == "zh"
    assert AgentConfig().keep_mean == 4.0 and AgentConfig().keep_min == 3
