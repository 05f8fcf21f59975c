"""Properties of the verdict parsers over generated text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from uxbench.scoring import parse_binary, parse_likert, parse_three_class

FAST = settings(deadline=None, max_examples=150)

LANGS = st.sampled_from([None, "zh", "en"])
NEGATED_GOOD = [
    "不好",
    "不太好",
    "不够好",
    "不是很好",
    "并不好",
    "算不上好",
    "not good",
    "no good",
    "isn't good",
    "is not good",
    "not very good",
    "doesn't look good",
    "Not Good",
]
# Noise that tries hard to make the parser say good before the negated ending.
GOOD_BAIT = st.sampled_from(
    ["", "Verdict: good\n", "结论：好\n", '{"verdict": 1}\n', "好\n", "good ", "**好**"]
)
TRAILING = st.sampled_from(["", ".", "。", "!", "！", "**", "」", "”", " ", "\n"])
# Words that contain 好 / 差 (or good / bad) without being verdicts.
FILLER_WORDS = [
    "好的",
    "最好",
    "偏差",
    "差异",
    "好处",
    "差不多",
    "好像",
    "只好",
    "误差",
    "相差",
    "友好",
    "美好",
    "差距",
    "正好",
    "goodbye",
    "badminton",
    "goods",
    "回复",
    "用户",
    "分析",
]
FILLER = st.lists(
    st.tuples(st.sampled_from(FILLER_WORDS), st.sampled_from(["", " ", "，", "。", "\n", "、"])),
    max_size=25,
).map(lambda pairs: "".join(w + s for w, s in pairs))
CLEAR_VERDICTS = [
    ("结论：好", "good"),
    ("结论：差", "bad"),
    ("Verdict: good", "good"),
    ("Verdict: bad", "bad"),
    ("差", "bad"),
    ("好", "good"),
    ("**差**", "bad"),
    ("「好」", "good"),
    ('{"verdict": -1}', "bad"),
]


@FAST
@given(st.text(), LANGS, st.one_of(st.none(), st.text()))
def test_arbitrary_text_never_raises(text: str, lang: str | None, reasoning: str | None) -> None:
    binary = parse_binary(text, lang, reasoning=reasoning)
    assert binary.label in (None, "good", "bad") and binary.note
    three = parse_three_class(text, lang, reasoning=reasoning)
    assert three.label in (None, "good", "bad", "neutral") and three.note
    likert = parse_likert(text, 7, reasoning=reasoning)
    assert (likert.score is None or 1 <= likert.score <= 7) and likert.note


@FAST
@given(
    GOOD_BAIT,
    st.text(),
    st.sampled_from(["", " ", "\n", "：", ": "]),
    st.sampled_from(NEGATED_GOOD),
    TRAILING,
)
def test_text_ending_in_negated_good_is_never_good(
    bait: str, noise: str, sep: str, phrase: str, trailing: str
) -> None:
    text = bait + noise + sep + phrase + trailing
    assert parse_binary(text).label != "good"
    assert parse_three_class(text).label != "good"
    assert parse_binary(text, "zh").label != "good"


@FAST
@given(st.text(), LANGS)
def test_final_verdict_marker_after_noise_wins(noise: str, lang: str | None) -> None:
    assert parse_binary(noise + "\nVerdict: bad", lang).label == "bad"
    assert parse_binary(noise + "\n结论：差", lang).label == "bad"
    assert parse_three_class(noise + "\nVerdict: neutral", lang).label == "neutral"


@FAST
@given(FILLER, st.sampled_from(CLEAR_VERDICTS), FILLER)
def test_words_containing_the_characters_do_not_flip_a_clear_verdict(
    before: str, verdict: tuple[str, str], after: str
) -> None:
    text, expected = verdict
    # Filler after a bare token would make its line not bare; keep bare tokens on their own line.
    output = f"{before}\n{text}\n{after}"
    assert parse_binary(output, "zh").label == expected
    assert parse_binary(output).label == expected


@FAST
@given(st.text(), st.integers(min_value=4, max_value=7), st.data())
def test_likert_marker_after_noise(noise: str, scale: int, data: st.DataObject) -> None:
    score = data.draw(st.integers(min_value=1, max_value=scale))
    assert parse_likert(f"{noise}\nScore: {score}", scale).score == score
    assert parse_likert(f"{noise}\n评分：{score}", scale).score == score
