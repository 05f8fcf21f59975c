"""The GRM protocol's probability verdict, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from uxbench.models.api import ModelOutput, TokenLogprobs, TopLogprob
from uxbench.scoring.probability import normalize_token, read_probability_verdict


def step(token: str, p: float, *top: tuple[str, float]) -> TokenLogprobs:
    return TokenLogprobs(token=token, logprob=math.log(p),
                         top=[TopLogprob(token=t, logprob=math.log(q)) for t, q in top])


def out(text: str, *steps: TokenLogprobs) -> ModelOutput:
    return ModelOutput(text=text, logprobs=list(steps))


def test_choice_logprobs_give_the_exact_share() -> None:
    o = ModelOutput(text="The user", choice_logprobs={"good": math.log(0.02), "bad": math.log(0.06)})
    r = read_probability_verdict(o, "good", "bad")
    assert r.status == "full" and r.label == "bad" and r.score == pytest.approx(0.25)
    assert r.source == "choice logprobs" and r.emitted is None and not r.mismatch


def test_both_words_in_the_top_list() -> None:
    o = out("好", step("好", 0.6, ("好", 0.6), (" 差", 0.2), ("嗯", 0.1)))
    r = read_probability_verdict(o, "好", "差")
    assert r.status == "full" and r.label == "good" and r.score == pytest.approx(0.75)
    assert r.emitted == "good" and not r.mismatch


def test_variants_are_merged_case_space_and_full_width() -> None:
    o = out("Good", step("Good", 0.3, ("Good", 0.3), ("bad", 0.25), (" good", 0.1), ("ＧＯＯＤ", 0.1)))
    r = read_probability_verdict(o, "good", "bad")
    assert r.p_good == pytest.approx(0.5) and r.p_bad == pytest.approx(0.25)
    assert r.score == pytest.approx(0.5 / 0.75)
    assert normalize_token(" ＧＯＯＤ ") == "good"


def test_only_one_word_among_the_top_is_partial_not_certain() -> None:
    """Regression: a first token "You" with "good" at p=0.05 far down the list used to score 1.000."""
    o = out("You", step("You", 0.6, ("You", 0.6), ("The", 0.2), ("good", 0.05)))
    r = read_probability_verdict(o, "good", "bad")
    assert r.status == "partial" and r.score == pytest.approx(0.05) and r.label == "bad"
    only_bad = out("The", step("The", 0.5, ("The", 0.5), ("bad", 0.1)))
    r2 = read_probability_verdict(only_bad, "good", "bad")
    assert r2.status == "partial" and r2.score == pytest.approx(0.9) and r2.label == "good"


def test_neither_word_is_unscorable() -> None:
    o = out("The", step("The", 0.7, ("The", 0.7), ("You", 0.2)))
    r = read_probability_verdict(o, "good", "bad")
    assert r.status == "unscorable" and r.score is None and r.label is None
    assert read_probability_verdict(ModelOutput(text="good"), "good", "bad").status == "unscorable"


def test_a_leading_blank_token_is_skipped() -> None:
    o = out("\n差", step("\n", 0.9, ("\n", 0.9), ("好", 0.05)), step("差", 0.7, ("差", 0.7), ("好", 0.3)))
    r = read_probability_verdict(o, "好", "差")
    assert r.position == 1 and r.status == "full" and r.score == pytest.approx(0.3) and r.label == "bad"


def test_threshold_and_mismatch_with_the_emitted_word() -> None:
    o = out("bad", step("bad", 0.45, ("bad", 0.45), ("good", 0.4)))
    r = read_probability_verdict(o, "good", "bad", threshold=0.4)
    assert r.score == pytest.approx(0.4 / 0.85) and r.label == "good" and r.emitted == "bad" and r.mismatch


def test_emitted_token_missing_from_its_own_top_list_still_counts() -> None:
    o = out("good", step("good", 0.3, ("The", 0.5), ("bad", 0.1)))
    r = read_probability_verdict(o, "good", "bad")
    assert r.status == "full" and r.score == pytest.approx(0.75)
