"""Verdicts from probabilities: choice log-probabilities first, the first token's top list second."""

from __future__ import annotations

import math

import pytest

from uxbench.models.api import ModelOutput, TokenLogprobs, TopLogprob
from uxbench.scoring.logprob import choice_verdict


def test_choice_logprobs_give_the_normalised_probability() -> None:
    out = ModelOutput(text="The user", choice_logprobs={"good": math.log(0.02), "bad": math.log(0.06)})
    scored = choice_verdict(out, "good", "bad")
    assert scored is not None
    assert scored.label == "bad" and scored.p_good == pytest.approx(0.25)
    assert scored.note.startswith("choice logprobs")


def test_first_token_top_list_is_used_when_there_are_no_choice_scores() -> None:
    top = [TopLogprob(token="好", logprob=math.log(0.6)), TopLogprob(token=" 差", logprob=math.log(0.2)),
           TopLogprob(token="嗯", logprob=math.log(0.1))]
    out = ModelOutput(text="好", logprobs=[TokenLogprobs(token="好", logprob=math.log(0.6), top=top)])
    scored = choice_verdict(out, "好", "差")
    assert scored is not None and scored.label == "good" and scored.p_good == pytest.approx(0.75)


def test_case_and_spacing_variants_add_up() -> None:
    top = [TopLogprob(token="Good", logprob=math.log(0.3)), TopLogprob(token="bad", logprob=math.log(0.25)),
           TopLogprob(token=" good", logprob=math.log(0.2))]
    out = ModelOutput(text="Good", logprobs=[TokenLogprobs(token="Good", logprob=math.log(0.3), top=top)])
    scored = choice_verdict(out, "good", "bad")
    assert scored is not None and scored.p_good == pytest.approx(0.5 / 0.75) and scored.label == "good"


def test_only_one_verdict_token_is_said_and_none_is_none() -> None:
    one = [TopLogprob(token="bad", logprob=-0.1), TopLogprob(token="The", logprob=-3.0)]
    out = ModelOutput(text="bad", logprobs=[TokenLogprobs(token="bad", logprob=-0.1, top=one)])
    scored = choice_verdict(out, "good", "bad")
    assert scored is not None and scored.label == "bad" and "only one verdict token" in scored.note
    other = [TopLogprob(token="The", logprob=-0.1)]
    assert choice_verdict(ModelOutput(text="The", logprobs=[TokenLogprobs(token="The", logprob=-0.1, top=other)]),
                          "good", "bad") is None
    assert choice_verdict(ModelOutput(text="good"), "good", "bad") is None
