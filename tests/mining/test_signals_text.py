"""The text detectors one by one: similarity, cues, complaint, dismiss, praise, skim arithmetic."""

from __future__ import annotations

import pytest

from uxbench.mining.signals.complaint import find_complaint
from uxbench.mining.signals.cues import (
    anaphora_cue,
    continuation_cue,
    extends,
    same_instruction_new_payload,
    slot_change,
)
from uxbench.mining.signals.dismiss import find_dismiss
from uxbench.mining.signals.feedback import find_praise
from uxbench.mining.signals.followup import rule_label
from uxbench.mining.signals.similarity import normalise, reading_units, similarity, tokens
from uxbench.mining.signals.timing import skim_from_gap


def test_normalise_and_tokens_treat_cjk_characters_and_latin_words_alike() -> None:
    assert normalise("  Hello, World！ 你好。") == "helloworld你好"
    assert tokens("用Python读取 JSON文件") == ("用", "python", "读", "取", "json", "文", "件")
    assert reading_units("你好 world of code") == 5


def test_similarity_is_not_fooled_by_shared_characters_or_question_frames() -> None:
    # Character-set Jaccard scores long unrelated texts as similar; the token measures do not.
    a = "Can you help me write a summary of the quarterly sales report for my team"
    b = "What documents do I need to file my personal income tax return online"
    char_set_jaccard = len(set(a.lower()) & set(b.lower())) / len(set(a.lower()) | set(b.lower()))
    assert similarity(a, b) < 0.1 and char_set_jaccard > 0.6
    assert similarity("请帮我写一份公司季度销售情况的总结报告", "我想知道个人所得税在网上怎么申报") < 0.15
    assert similarity("how do I boil pasta", "how do I change a flat tire") == 0.0
    assert similarity("how do I boil pasta", "how do I change a flat tire", "token_indel") >= 0.5
    assert similarity("怎么读取json文件", "怎么读取json文件？？") == 1.0
    for method in ("content_indel", "token_indel", "char_indel", "token_set", "char_bigram_dice"):
        assert similarity("same text", "same text", method) == 1.0
        assert 0.0 <= similarity("abc def", "xyz", method) <= 1.0


@pytest.mark.parametrize(
    "text",
    [
        "continue",
        "Go on.",
        "keep going",
        "继续",
        "接着写",
        "再来一个",
        "再讲一个",
        "下一段：Rising seas",
        "还有吗",
        "now the same for JavaScript",
        "Do the same for the second paragraph",
        "next scene please",
        "give me another one",
        "3 more please",
        "写下一章",
    ],
)
def test_continuation_cues(text: str) -> None:
    assert continuation_cue(text) is not None


@pytest.mark.parametrize(
    "text", ["how do I continue a loop in python", "继续教育学院在哪", "what is next.js"]
)
def test_continuation_cue_needs_more_than_the_word(text: str) -> None:
    # Known limit: "continue" inside a real question is not a request to go on; these must not fire.
    assert continuation_cue(text) is None


def test_structural_continuations() -> None:
    assert same_instruction_new_payload(
        "Translate to French: The meeting is at 3 pm.", "Translate to French: Please bring your laptop."
    )
    assert same_instruction_new_payload("翻译：今天天气很好", "翻译：今天天气很好") is None
    assert slot_change("write chapter 1 of a mystery story", "write chapter 2 of the mystery story")
    assert slot_change("帮我解释一下第一章的内容", "帮我解释一下第二章的内容")
    assert slot_change("how do I undo a commit", "how do I undo a merge") is None
    assert extends("Write a function to parse CSV", "Write a function to parse CSV and add unit tests for it")
    assert extends("list the planets in order", "list the planets in order again") is None


@pytest.mark.parametrize(
    "text",
    [
        "不对吧，1公斤是2.2磅",
        "错了，应该是1081",
        "答非所问",
        "你没理解我的意思",
        "说了半天一部电影都没推荐",
        "这根本不是异步的",
        "我问的是怎么取消自动续费",
        "还是报错",
        "that's wrong, it's 12",
        "this doesn't work",
        "useless answer",
        "You didn't understand my question at all",
        "Wrong. Spiders have eight legs.",
        "that's not what I asked for",
        "this returns the minimum, not the maximum",
        "you're wrong, it was 1989",
    ],
)
def test_complaints_fire(text: str) -> None:
    assert find_complaint(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "不错，就用这个了",
        "没错，谢谢",
        "错误码404是什么意思",
        "你说得对，我之前记错了",
        "这样写对不对",
        "垃圾分类怎么做",
        "not bad at all",
        "no problem, that works",
        "nothing wrong with that",
        "you're right, my mistake",
        "what's wrong with my approach?",
        "Is there anything wrong with using a fast charger?",
        "how do I handle errors",
        "没关系，谢谢",
    ],
)
def test_complaints_do_not_fire_on_praise_or_neutral_text(text: str) -> None:
    assert find_complaint(text) is None


def test_complaint_reads_only_the_opening_of_long_messages() -> None:
    # a complaint opens a long message when there is one; deeper down it is pasted material
    assert find_complaint("不对" + "很长的内容" * 100) is not None
    assert find_complaint("很长的内容" * 100 + "不对") is None
    assert find_complaint("很长的内容" * 100 + "不对", max_chars=10_000) is not None


@pytest.mark.parametrize(
    ("text", "dismiss"),
    [
        ("算了", True),
        ("不用了", True),
        ("没事了", True),
        ("算了算了，我自己改吧", True),
        ("行吧，那不用了", True),
        ("随便你吧", True),
        ("forget it", True),
        ("never mind", True),
        ("whatever", True),
        ("nvm", True),
        ("ok forget it", True),
        ("never mind, I'll figure it out myself", True),
        ("好的谢谢", False),
        ("ok thanks", False),
        ("谢谢", False),
        ("got it, thanks", False),
        ("嗯", False),
        ("算了，那你帮我把这一整段很长很长的文字翻译成英文然后再润色一遍并且加上标题和摘要吧", False),
    ],
)
def test_dismiss(text: str, dismiss: bool) -> None:
    assert (find_dismiss(text) is not None) is dismiss


@pytest.mark.parametrize(
    ("text", "praise"),
    [
        ("谢谢", True),
        ("太棒了，正是我需要的", True),
        ("perfect, thanks!", True),
        ("not bad at all", True),
        ("不太对", False),
        ("not helpful", False),
        ("有什么好用的记账App", False),
        ("Correct the grammar: she go", False),
    ],
)
def test_praise(text: str, praise: bool) -> None:
    assert (find_praise(text) is not None) is praise


def test_anaphora() -> None:
    for text in (
        "那如果文件是GBK编码的呢",
        "这个药孕妇能吃吗",
        "what about reading it line by line?",
        "and if I want it descending?",
        "does that change at high altitude?",
    ):
        assert anaphora_cue(text) is not None, text
    for text in ("帮我写一封辞职信", "how do I change a flat tire"):
        assert anaphora_cue(text) is None, text


def test_rule_label_maps_onto_the_llm_label_set() -> None:
    reply = "Here is an answer."
    assert rule_label("how do I undo a git commit", reply, "how do I undo a git commit?") == "repeat"
    assert rule_label("q", reply, "that's wrong") == "complaint"
    assert rule_label("q", reply, "forget it") == "dismiss"
    assert rule_label("write a story", reply, "continue") == "continue"
    assert (
        rule_label("how do I boil pasta", reply, "write a cover letter for a marketing job") == "topic_change"
    )
    assert rule_label("q", reply, "thanks!") == "other"
    assert rule_label(None, reply, "hello there") == "other"


def test_skim_arithmetic() -> None:
    reply = "字" * 300
    assert skim_from_gap(reply, 10, seconds_per_unit=0.15, max_gap_s=30, min_reply_chars=50).fired is True
    assert skim_from_gap(reply, 60, seconds_per_unit=0.15, max_gap_s=30, min_reply_chars=50).fired is False
    # 0.1 s/unit but over the absolute cap: not a skim
    assert (
        skim_from_gap("字" * 400, 40, seconds_per_unit=0.15, max_gap_s=30, min_reply_chars=50).fired is False
    )
    assert skim_from_gap(reply, -5, seconds_per_unit=0.15, max_gap_s=30, min_reply_chars=50).fired is None


@pytest.mark.parametrize("text", ["", "a", "!!", "a!b", "ab", "abc", "  a b c ", "x" * 200 + "!" * 500,
                                  "!" * 300 + "abc", "é", "éé!é", "İİ", "你好吗", "你", "a.b.c.d.e" * 30])
def test_normalised_longer_than_is_the_length_of_normalise(text: str) -> None:
    from uxbench.mining.signals.similarity import normalised_longer_than

    for chars in (0, 1, 2, 3, 10, 100, 1000):
        assert normalised_longer_than(text, chars) == (len(normalise(text)) > chars)
