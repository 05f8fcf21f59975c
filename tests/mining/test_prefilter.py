"""Prefilter: empty, reply-less, too short and fully interrupted conversations are dropped and counted."""

from __future__ import annotations

import pickle

from uxbench.mining.prefilter import PrefilterConfig, drop_reason, is_interrupted, prefilter
from uxbench.mining.types import Session, Turn


def conv(cid: str, *msgs: tuple[str, str]) -> Session:
    turns = [
        Turn(conversation_id=cid, turn_index=i, role=role, content=text)
        for i, (role, text) in enumerate(msgs)
    ]
    return Session(conversation_id=cid, turns=turns)


def test_reasons_in_order() -> None:
    assert drop_reason(conv("a")) == "empty"
    assert drop_reason(conv("b", ("user", "  "), ("assistant", ""))) == "empty"
    assert drop_reason(conv("c", ("user", "你好"), ("user", "在吗"))) == "no_reply"
    assert drop_reason(conv("d", ("assistant", "您好，有什么可以帮您？"))) == "too_short"
    assert drop_reason(conv("e", ("user", "写首诗"), ("assistant", "回答已中断"))) == "all_interrupted"
    assert (
        drop_reason(
            conv("f", ("user", "hi"), ("assistant", "(no output)"), ("user", "?"), ("assistant", "ok"))
        )
        == "all_interrupted"
    )
    assert (
        drop_reason(
            conv(
                "g",
                ("user", "写首诗"),
                ("assistant", "[回答已中断]"),
                ("user", "继续"),
                ("assistant", "春眠不觉晓，处处闻啼鸟。"),
            )
        )
        is None
    )
    assert drop_reason(conv("h", ("user", "1+1"), ("assistant", "2"))) == "all_interrupted"


def test_interrupted_markers_are_matched_on_the_whole_reply() -> None:
    assert (
        is_interrupted("Answer interrupted.") and is_interrupted("  回答已中断。 ") and is_interrupted("嗯")
    )
    assert not is_interrupted(
        "The answer was interrupted by a power cut in the story, and then the hero woke up."
    )
    assert not is_interrupted("好的，没问题")
    assert is_interrupted("请稍候", PrefilterConfig(markers=("请稍候",)))
    assert not is_interrupted("ok", PrefilterConfig(min_reply_chars=2))
    # long replies: only the opening is normalised first, which must not change the verdict
    assert is_interrupted("-" * 300 + " [Answer   interrupted] " + "." * 300)
    assert is_interrupted("-=" * 200 + "(no output)")
    assert not is_interrupted("-" * 300 + " answer interrupted, then it went on " + "." * 300)
    assert not is_interrupted("interrupted " * 40)
    assert is_interrupted(" " * 300 + "回答已中断" + "…" * 300)  # not ASCII: normalised whole


def test_prefilter_batch_keeps_order_and_counts_reasons() -> None:
    batch = [
        conv("keep1", ("user", "北京天气"), ("assistant", "今天晴，15到25度。")),
        conv("empty"),
        conv("short", ("user", "hello")),
        conv("cut", ("user", "写首诗"), ("assistant", "回答已中断")),
        conv("keep2", ("user", "hi"), ("assistant", "Hello! How can I help?")),
        conv("cut2", ("user", "画只猫"), ("assistant", "图片下载失败")),
    ]
    result = prefilter(batch)
    assert [s.conversation_id for s in result.kept] == ["keep1", "keep2"]
    assert result.dropped == [
        ("empty", "empty"),
        ("short", "no_reply"),
        ("cut", "all_interrupted"),
        ("cut2", "all_interrupted"),
    ]
    assert result.counts == {"empty": 1, "no_reply": 1, "all_interrupted": 2}
    again = pickle.loads(pickle.dumps(prefilter))(batch, pickle.loads(pickle.dumps(PrefilterConfig())))
    assert again.dropped == result.dropped
