"""Hand-written judge outputs and the verdict each must (or must not) give."""

from __future__ import annotations

import pytest

from uxbench.scoring import parse_binary, parse_likert, parse_three_class, strip_reasoning

# (output, lang, expected binary label); lang None = unknown
BINARY_CASES: list[tuple[str, str | None, str | None]] = [
    # bare answers, as a zero-shot prompt asks for
    ("好", "zh", "good"),
    ("差", "zh", "bad"),
    ("好。", "zh", "good"),
    (" 差\n", "zh", "bad"),
    ("good", "en", "good"),
    ("Bad.", "en", "bad"),
    ("GOOD!", "en", "good"),
    ("满意", "zh", "good"),
    ("不满意", "zh", "bad"),
    # negated good is bad, never good (the reference parser read 不好 as good)
    ("不好", "zh", "bad"),
    ("不太好", "zh", "bad"),
    ("不够好。", "zh", "bad"),
    ("不是很好", "zh", "bad"),
    ("并不好", "zh", "bad"),
    ("not good", "en", "bad"),
    ("No good.", "en", "bad"),
    ("It isn't good", "en", "bad"),
    ("This doesn't look good.", "en", "bad"),
    ("It is not very good", "en", "bad"),
    # markdown, quotes and brackets around the token
    ("**好**", "zh", "good"),
    ("「差」", "zh", "bad"),
    ("“好”", "zh", "good"),
    ("【差】", "zh", "bad"),
    ('"Bad."', "en", "bad"),
    ("`good`", "en", "good"),
    ("> **bad**", "en", "bad"),
    # ordinary words that contain 好 / 差 are not verdicts
    ("好的", "zh", None),
    ("最好的回答存在偏差", "zh", None),
    ("两者差异不大，好处是简洁", "zh", None),
    ("好的，我来判断。\n差", "zh", "bad"),
    ("差\n理由：回复存在理解偏差，好的地方不多。", "zh", "bad"),
    # explicit markers, last one wins
    ("分析：回复啰嗦。\n结论：差", "zh", "bad"),
    ("结论：**好**", "zh", "good"),
    ("答案是：差", "zh", "bad"),
    ("最终答案：好（用户满意）", "zh", "good"),
    ("The reply is long.\nVerdict: bad", "en", "bad"),
    ("**Verdict:** good", "en", "good"),
    ("Final answer: bad", "en", "bad"),
    ("Verdict: good\n...on reflection...\nVerdict: bad", "en", "bad"),
    ("结论：好\n不过再想想，用户要的是一句话。\n结论：差", "zh", "bad"),
    ("Final answer: \\boxed{差}", "zh", "bad"),
    ("Verdict: not good", "en", "bad"),
    ("结论：不太好", "zh", "bad"),
    # reasoning-model style
    ("<think>The user asked for one line; the reply is long. Maybe good?</think>\nbad", "en", "bad"),
    ("<think>用户只要一句话，回复很长。好像也还行……</think>\n\n结论：差", "zh", "bad"),
    ("the reply ignored the constraint. Verdict: good?</think>\nVerdict: bad", "en", "bad"),
    ("<think>Verdict: good", "en", "good"),  # cut off mid-thought: marker in the reasoning
    ("<think>I wonder whether it is good", "en", None),  # no marker in the reasoning: nothing
    ("好<think>\nVerdict: bad", None, "bad"),  # a stray unclosed tag after text hides nothing
    # JSON answers
    ('{"verdict": "good"}', None, "good"),
    ('{"verdict": -1}', None, "bad"),
    ('{"verdict": 1, "reason": "concise and correct"}', None, "good"),
    ('```json\n{"verdict": "差", "reason": "冗长"}\n```', "zh", "bad"),
    ("{'label': 'bad'}", None, "bad"),
    ('{"verdict": 0}', None, None),  # 0 is not a binary verdict
    # conflicting or missing signals
    ("Verdict: good\n\nbad", "en", None),
    ("好\n\nThe response is bad for this user.", None, None),
    ("The tone is good, but the answer is bad.", "en", None),
    ("结论：好。但其实回复不好", "zh", None),
    ("The response is not bad.", "en", None),  # a hedge, not a verdict
    ("中", "zh", None),  # neutral is no binary verdict
    ("", None, None),
    ("   \n  ", None, None),
    ("I cannot decide.", "en", None),
    ("The reply is fine overall.", "en", None),
]


@pytest.mark.parametrize(("text", "lang", "expected"), BINARY_CASES)
def test_binary_table(text: str, lang: str | None, expected: str | None) -> None:
    parsed = parse_binary(text, lang)
    assert parsed.label == expected, parsed.note
    assert parsed.note  # every reading says how it was made, or why it failed


def test_table_is_large_enough() -> None:
    assert len(BINARY_CASES) >= 40


def test_notes_name_the_rule() -> None:
    assert parse_binary("结论：差").note == "marker '结论'"
    assert parse_binary("差").note == "final line"
    assert parse_binary("Verdict: good\n\nbad").note.startswith("ambiguous")
    assert parse_binary("The tone is good, but the answer is bad.").note.startswith("ambiguous")
    assert parse_binary("").note == "empty output"


def test_reasoning_is_read_only_when_the_answer_is_empty() -> None:
    # A verdict in the separate reasoning text never overrides the answer.
    assert parse_binary("差", "zh", reasoning="结论：好").label == "bad"
    # An answer without a verdict does not fall back to the reasoning either.
    assert parse_binary("I am not sure.", "en", reasoning="Verdict: good").label is None
    # Empty answer: only an explicit marker in the reasoning counts, and the note says so.
    got = parse_binary("", "zh", reasoning="分析很长……\n结论：差")
    assert got.label == "bad" and got.note.startswith("from reasoning")
    assert parse_binary("", "en", reasoning="the reply seems good").label is None


def test_lang_limits_only_the_free_text_scan() -> None:
    # A bare English word is accepted in a zh prompt's answer, but stray English in zh prose is not scanned.
    assert parse_binary("bad", "zh").label == "bad"
    assert parse_binary("回复有 good 的地方", "zh").label is None
    assert parse_binary("回复有 good 的地方", None).label == "good"


THREE_CASES: list[tuple[str, str | None]] = [
    ("好", "good"),
    ("中", "neutral"),
    ("差", "bad"),
    ("neutral", "neutral"),
    ("结论：中", "neutral"),
    ("Verdict: neutral", "neutral"),
    ("一般", "neutral"),
    ('{"verdict": 0}', "neutral"),
    ("不好", "bad"),
    ("其中", None),
    ("中国", None),
    ("Verdict: good\n\nneutral", None),
]


@pytest.mark.parametrize(("text", "expected"), THREE_CASES)
def test_three_class_table(text: str, expected: str | None) -> None:
    assert parse_three_class(text).label == expected


LIKERT_CASES: list[tuple[str, int, int | None]] = [
    ("5", 7, 5),
    ("**6**", 7, 6),
    ("Score: 5/7", 7, 5),
    ("评分：六分", 7, 6),
    ("结论：3", 5, 3),
    ("Verdict: 4", 4, 4),
    ('{"score": 3}', 5, 3),
    ("I'd give it 4.", 7, 4),
    ("<think>Between 3 and 5... Score: 2</think>\n6", 7, 6),
    ("<think>Score: 2", 7, 2),
    ("The reply is fine.\nRating: 2 out of 5", 5, 2),
    ("9", 7, None),  # out of range
    ("0", 5, None),
    ("4.5", 7, None),  # not an integer
    ("Score: 5/10", 7, None),  # another scale
    ("On a scale of 1 to 7, I give 5", 7, None),  # several numbers, no marker
    ("good", 7, None),
    ("", 5, None),
]


@pytest.mark.parametrize(("text", "scale", "expected"), LIKERT_CASES)
def test_likert_table(text: str, scale: int, expected: int | None) -> None:
    parsed = parse_likert(text, scale)
    assert parsed.score == expected, parsed.note
    assert parsed.note


def test_strip_reasoning() -> None:
    assert strip_reasoning("<think>hmm</think>\n用户是学生。") == "用户是学生。"
    assert strip_reasoning("hmm</think>profile") == "profile"
    assert strip_reasoning("<think>never closed") == ""
