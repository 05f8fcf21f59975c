"""The recovery-strategy rules (Chinese and English openings) and the model-label parser of the audit."""

from __future__ import annotations

import pytest

from uxbench.mining.pipeline.audit import ComplaintReply, parse_strategy, summarise
from uxbench.scoring.strategies import classify_opening, opening


@pytest.mark.parametrize(("reply", "strategy", "cue"), [
    ("抱歉，刚才的回答有误。正确的做法是先打开设置。", "apology", "抱歉"),
    ("Sorry about that! Here are the right steps: open Settings.", "apology", "sorry"),
    ("My apologies, I misread the question.", "apology", "my apologies"),
    ("您说得对，上面的步骤适用于旧版本。", "agreement", "您说得对"),
    ("You're right, that was the Windows 10 menu.", "agreement", "you're right"),
    ("之前的回答混淆了两个版本。新版的步骤如下。", "error_diagnosis", "之前的回答"),
    ("I misunderstood what you meant by static. Let me fix that.", "error_diagnosis", "i misunderstood"),
    ("I don't have access to live prices, so the figure was an estimate.", "error_diagnosis",
     "i don't have access"),
    ("哈哈，这次翻车了。正确答案是42。", "humor", "哈哈"),
    ("Oops, wrong recipe. Here's the vegan one.", "humor", "oops"),
    ("请问您用的是哪个版本的系统？", "clarification", "请问"),
    ("Could you clarify which router model you have?", "clarification", "could you clarify"),
    ("Which version of Windows are you on?", "clarification", None),
    ("以下是修改后的代码：", "direct_fix", "以下是"),
    ("Here is the corrected query: SELECT 1.", "direct_fix", "here is"),
    ("Open Settings, then Network.", "direct_fix", None),
])
def test_openings(reply: str, strategy: str, cue: str | None) -> None:
    assert classify_opening(reply) == (strategy, cue)


def test_the_cue_that_comes_first_wins_and_ties_go_to_the_earlier_strategy() -> None:
    assert classify_opening("You're right, and sorry for the confusion.")[0] == "agreement"
    assert classify_opening("Sorry, you're right.")[0] == "apology"
    assert classify_opening("确实是我的错。")[0] == "agreement"


def test_opening_is_the_first_sentence_or_two_when_short() -> None:
    assert opening("好的。以下是新的版本，请查看。然后是别的。") == "好的。 以下是新的版本，请查看。"
    assert opening("Right. Sorry about that.") == "right. sorry about that."
    assert classify_opening("The answer is below. Sorry for the mix-up.")[0] == "direct_fix"
    assert classify_opening("I bought a lollipop.")[0] == "direct_fix"  # "lol" is a word, not a substring


def test_model_labels_are_parsed_strictly() -> None:
    assert parse_strategy('{"strategy": "apology"}') == "apology"
    assert parse_strategy('Sure! ```json\n{"strategy": "Direct Fix"}\n```') == "direct_fix"
    assert parse_strategy('{"strategy": "blame"}') is None
    assert parse_strategy("apology") is None


def test_summary_counts_fallbacks_and_replies_never_given() -> None:
    def item(reply: str | None, outcome: str | None) -> ComplaintReply:
        return ComplaintReply(conversation_id="c", failed_turn=1, complaint_turn=2, reply_turn=3 if reply else None,
                              complaint="wrong", reply=reply, outcome=outcome)

    items = [item("Sorry!", "recovered"), item("Sorry again.", "failed"), item("Here is it.", "unknown"),
             item(None, "user_gave_up")]
    rules = summarise("d", items)
    rows = {r.strategy: r for r in rules.strategies}
    assert rules.complaints == 4 and rules.with_reply == 3 and rules.without_reply == 1
    assert rows["apology"].count == 2 and rows["apology"].recovered_rate == 0.5
    assert rows["direct_fix"].recovered_rate is None  # only an unknown outcome
    labelled = summarise("d", items, ["humor", None, "humor"], model="m")
    rows = {r.strategy: r for r in labelled.strategies}
    assert labelled.model_fallbacks == 1 and rows["humor"].count == 2 and rows["apology"].count == 1
