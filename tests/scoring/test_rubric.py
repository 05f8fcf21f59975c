"""Rubric formulations: the bundled rubrics, the aggregation rule, the answer parser, rubric files, pair ties."""

from __future__ import annotations

from pathlib import Path

import pytest

from uxbench.errors import ConfigError, DataError
from uxbench.metrics.ties import pair_ties
from uxbench.scoring.prompts import JudgeInput, PromptOptions, build_messages
from uxbench.scoring.rubric import BUNDLED_RUBRICS, aggregate, answer_skeleton, load_rubric
from uxbench.scoring.rubric_verdict import parse_rubric


def test_bundled_rubrics_load_with_their_scales() -> None:
    for name in BUNDLED_RUBRICS:
        rubric = load_rubric(name)
        assert rubric.id == name and len(rubric.digest()) == 64
    assert [(d.key, d.low, d.high) for d in load_rubric("mt_bench").dimensions] == [("overall", 1, 10)]
    flask = load_rubric("flask")
    assert len(flask.dimensions) == 12 and all((d.low, d.high) == (1, 5) for d in flask.dimensions)
    helpsteer = {d.key: d for d in load_rubric("helpsteer2").dimensions}
    assert set(helpsteer) == {"helpfulness", "correctness", "coherence", "complexity", "verbosity"}
    assert helpsteer["complexity"].weight == helpsteer["verbosity"].weight == 0  # descriptive, not a rating


@pytest.mark.parametrize(("score", "label"), [(6, "good"), (5, "bad"), (10, "good"), (1, "bad")])
def test_mt_bench_midpoint_is_bad(score: int, label: str) -> None:
    result = aggregate(load_rubric("mt_bench"), {"overall": score})
    assert result.label == label and result.value == pytest.approx((score - 1) / 9)


def test_weights_and_not_applicable_dimensions() -> None:
    helpsteer = load_rubric("helpsteer2")
    # quality attributes 3, 2, 2 -> (0.75 + 0.5 + 0.5) / 3 = 0.583 > 0.5; complexity and verbosity do not count
    base = {"helpfulness": 3, "correctness": 2, "coherence": 2}
    assert aggregate(helpsteer, {**base, "complexity": 0, "verbosity": 4}).value == pytest.approx(0.5833, abs=1e-3)
    assert aggregate(helpsteer, {**base, "complexity": 4, "verbosity": 0}).label == "good"
    flask = load_rubric("flask")
    scores: dict[str, int | None] = {d.key: (None if d.optional else 4) for d in flask.dimensions}
    assert aggregate(flask, scores).value == pytest.approx(0.75)  # N/A left out of the mean
    with pytest.raises(ValueError, match="may not be N/A"):
        aggregate(flask, {**scores, "readability": None})
    with pytest.raises(ValueError, match="outside 1-5"):
        aggregate(flask, {**scores, "readability": 6})


@pytest.mark.parametrize(("text", "value"), [
    ('{"overall": 7}', 7),
    ("Reasoning: the reply is fine but thin.\n\n{\"overall\": 4}", 4),
    ("<think>hmm</think>{'overall': 8,}", 8),  # single quotes, trailing comma
    ("overall: 9/10", 9),
    ("整体质量：3", 3),
    ('{"overall": "6"}', 6),
])
def test_parser_reads_json_and_lines(text: str, value: int) -> None:
    result, note = parse_rubric(text, load_rubric("mt_bench"))
    assert result is not None and result.scores == {"overall": value}, note


@pytest.mark.parametrize(("text", "why"), [
    ("", "empty output"),
    ("I think it is good.", "no rubric scores"),
    ('{"overall": 11}', "outside 1-10"),
    ('{"overall": 6.5}', "not an integer"),
    ("overall: 4/5", "expected out of 10"),
    ('{"overall": true}', "true/false"),
])
def test_parser_refuses_what_it_cannot_read(text: str, why: str) -> None:
    result, note = parse_rubric(text, load_rubric("mt_bench"))
    assert result is None and why in note


def test_parser_needs_every_dimension_and_accepts_na_where_optional() -> None:
    helpsteer = load_rubric("helpsteer2")
    result, note = parse_rubric('{"helpfulness": 3, "correctness": 3, "coherence": 4, "complexity": 1}', helpsteer)
    assert result is None and "'verbosity'" in note
    flask = load_rubric("flask")
    body = ", ".join(f'"{d.key}": {"N/A" if d.optional else 2}' for d in flask.dimensions)
    result, note = parse_rubric("{" + body + "}", flask)  # unquoted N/A repaired
    assert result is not None and result.label == "bad" and result.value == pytest.approx(0.25), note


def test_a_rubric_file_of_ones_own_and_its_errors(tmp_path: Path) -> None:
    good = tmp_path / "mine.yaml"
    good.write_text(
        "id: short_answers\ntitle: {en: Short answers, zh: 简短回答}\nthreshold: 0.6\ndimensions:\n"
        "  - {key: brevity, low: 0, high: 1, name: {en: Brevity, zh: 简短}, description: {en: 'at most 3 sentences',"
        " zh: 不超过三句}}\n", encoding="utf-8")
    rubric = load_rubric(str(good))
    assert rubric.id == "short_answers" and aggregate(rubric, {"brevity": 1}).label == "good"
    assert answer_skeleton(rubric) == '{"brevity": <0-1>}'
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text(encoding="utf-8").replace("threshold: 0.6", "threshold: 0.6\ncolour: red"),
                   encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.yaml.*field 'colour'"):
        load_rubric(str(bad))
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: [unclosed", encoding="utf-8")
    with pytest.raises(DataError, match="not valid YAML"):
        load_rubric(str(broken))
    with pytest.raises(ConfigError, match="Did you mean 'flask'"):
        load_rubric("flsk")


def test_prompt_lists_every_dimension_in_the_case_language() -> None:
    options = PromptOptions(formulation="rubric", rubric="helpsteer2", lang="zh")
    item = JudgeInput(history=[], query="推荐一本书", response="《活着》")
    user = build_messages(item, options)[1].content
    assert "有用性" in user and "helpfulness" in user and '"verbosity": <0-4>' in user
    with pytest.raises(ValueError, match="few_shot"):
        PromptOptions(formulation="rubric", strategy="few_shot")
    with pytest.raises(ValueError, match="rubric formulation"):
        PromptOptions(formulation="likert", rubric="flask")
    assert PromptOptions(formulation="rubric").rubric == "mt_bench"


def test_pair_ties_equal_hand_counts() -> None:
    # liked 3, 3, 4; disliked 3, 2 -> 6 pairs: ties (3,3) x2 = 2; liked higher: (3>2) x2 + (4>3) + (4>2) = 4
    out = pair_ties([3, 3, 4], [3, 2], n_boot=200)
    assert out["n_pairs"] == 6 and out["distinct_scores"] == 3
    assert out["tie_share"]["value"] == pytest.approx(2 / 6)
    assert out["liked_higher"]["value"] == pytest.approx(4 / 6)
    assert out["disliked_higher"]["value"] == pytest.approx(0.0)
    assert out["tie_share"]["ci_low"] <= 2 / 6 <= out["tie_share"]["ci_high"]
    assert pair_ties([1.0], [])["tie_share"] is None
