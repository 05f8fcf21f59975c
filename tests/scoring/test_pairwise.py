"""The pairwise judge: its answer parser, both orders against a real loopback server, tie on disagreement."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from uxbench.data.schema import Message
from uxbench.models.model import create_model
from uxbench.scoring.pairwise import PairwiseJudge, PairwiseSettings, candidate_of, combine
from uxbench.scoring.pairwise_verdict import parse_pick
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer


@pytest.mark.parametrize(("text", "pick"), [
    ("A", "A"), ("B", "B"), ("  b  ", "B"), ("**A**", "A"), ("Ａ", "A"), ("(B)", "B"), ("A.", "A"),
    ("平局", "tie"), ("「平局」", "tie"), ("tie", "tie"), ("Tie.", "tie"), ("neither", "tie"),
    ("Reply A", "A"), ("回复B更好", "B"), ("回复 A", "A"), ("A更好", "A"), ("B 胜出", "B"), ("我选A", "A"),
    ("I prefer A.", "A"), ("Reply A is better", "A"), ("Option B", "B"),
    ("Verdict: A", "A"), ("Verdict: b", "B"), ("结论：平局", "tie"), ("结论：回复A", "A"), ("结论：A。", "A"),
    ("Final answer: **Reply B**", "B"), ("**Verdict:** tie", "tie"), ("The answer is A", "A"),
    ("选择：B", "B"), ("答案是 A", "A"), ("Let me think.\nVerdict: B", "B"), ("Verdict: B\n\nB", "B"),
    ("B\nbecause it is shorter", "B"), ("<think>A is long</think>B", "B"),
    # never read: prose, lower-case articles, contradictions, nothing
    ("A good reply would be short.", None), ("The answer is a bit long", None), ("Both are fine but B", None),
    ("Verdict: A\nB", None), ("A\nsome reasoning\nB", None), ("I think B is better overall, but A", None), ("", None),
])
def test_parse_pick(text: str, pick: str | None) -> None:
    assert parse_pick(text).pick == pick


def test_parse_pick_reads_a_marker_in_reasoning_only_when_the_answer_is_empty() -> None:
    assert parse_pick("", reasoning="... so Verdict: B").pick == "B"
    assert parse_pick("", reasoning="A looks better").pick is None
    assert parse_pick("A", reasoning="Verdict: B").pick == "A"


def test_orders_map_back_to_candidates_and_disagreement_is_a_tie() -> None:
    assert [candidate_of(p, "ab") for p in ("A", "B", "tie", None)] == ["a", "b", "tie", None]
    assert [candidate_of(p, "ba") for p in ("A", "B", "tie", None)] == ["b", "a", "tie", None]
    assert combine("a", "a") == combine("a", "a") and combine("a", "a").winner == "a"
    assert combine("a", "a").consistent is True
    assert combine("tie", "tie").winner == "tie" and combine("tie", "tie").consistent is True
    for first, second in (("a", "b"), ("b", "a"), ("a", "tie"), ("tie", "b")):
        outcome = combine(first, second)  # type: ignore[arg-type]
        assert outcome.winner == "tie" and outcome.consistent is False
    assert combine(None, "a").winner is None and combine("a", None).consistent is None


def _replies(messages: list[dict[str, Any]]) -> tuple[str, str]:
    user = messages[-1]["content"]
    first = re.search(r"\[Reply A\]\n(.*?)\n\n\[Reply B\]", user, re.S)
    second = re.search(r"\[Reply B\]\n(.*?)\n\nAfter reading", user, re.S)
    assert first is not None and second is not None, user
    return first.group(1), second.group(1)


@pytest.fixture
def judge_server() -> Iterator[LoopbackServer]:
    """A judge that prefers the reply containing 'precise', and otherwise picks whatever is shown first
    (position bias); a reply containing 'garble' makes it answer nonsense."""

    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        first, second = _replies(messages)
        if "garble" in first + second:
            return "hmm, hard to say"
        if "precise" in first and "precise" not in second:
            return "A"
        if "precise" in second and "precise" not in first:
            return "Verdict: B"
        return "A"

    with LoopbackServer(LoopbackConfig(responder=respond)) as srv:
        yield srv


async def _compare(srv: LoopbackServer, reply_a: str, reply_b: str) -> Any:
    model = create_model("openai:loopback", {"base_url": srv.base_url})
    item = JudgeInput(history=[Message(role="user", content="hi"), Message(role="assistant", content="hello")],
                      query="How do I boil an egg?", response="", lang="en")
    try:
        return await PairwiseJudge(PairwiseSettings(lang="en")).compare(item, reply_a, reply_b, model)
    finally:
        await model.aclose()


def test_both_orders_are_asked_and_a_consistent_preference_wins(judge_server: LoopbackServer) -> None:
    outcome, ab, ba = asyncio.run(_compare(judge_server, "vague text", "precise steps"))
    assert judge_server.stats.requests == 2
    assert (ab.order, ab.pick, ab.winner) == ("ab", "B", "b")  # b shown second, picked as B
    assert (ba.order, ba.pick, ba.winner) == ("ba", "A", "b")  # b shown first, picked as A
    assert outcome.winner == "b" and outcome.consistent is True


def test_position_bias_becomes_a_tie_marked_inconsistent(judge_server: LoopbackServer) -> None:
    outcome, ab, ba = asyncio.run(_compare(judge_server, "one text", "other text"))
    assert ab.pick == ba.pick == "A"  # the judge always picked the first position
    assert (ab.winner, ba.winner) == ("a", "b")
    assert outcome.winner == "tie" and outcome.consistent is False


def test_an_unreadable_order_leaves_the_pair_undecided(judge_server: LoopbackServer) -> None:
    outcome, ab, _ = asyncio.run(_compare(judge_server, "garble", "precise"))
    assert ab.pick is None and "no choice found" in ab.note
    assert outcome.winner is None and outcome.consistent is None


def test_prompts_swap_the_replies_and_keep_one_language() -> None:
    judge = PairwiseJudge()
    item = JudgeInput(history=[], query="怎么煮鸡蛋？", response="")
    ab = judge.messages(item, "回复甲的内容", "回复乙的内容", "ab")[-1].content
    ba = judge.messages(item, "回复甲的内容", "回复乙的内容", "ba")[-1].content
    assert ab.index("回复甲的内容") < ab.index("回复乙的内容") and ba.index("回复乙的内容") < ba.index("回复甲的内容")
    assert "【回复 A】" in ab and "（无）" in ab and "平局" in ab
    assert set(judge.template_hashes()) == {"pairwise/zh/system.txt", "pairwise/zh/zero_shot.txt",
                                            "pairwise/en/system.txt", "pairwise/en/zero_shot.txt"}
    cot = PairwiseJudge(PairwiseSettings(strategy="cot", lang="en"))
    assert set(cot.template_hashes()) == {"pairwise/en/system.txt", "pairwise/en/cot.txt"}
    long = judge.messages(JudgeInput(history=[], query="q", response="", lang="en"), "x" * 5000, "", "ab")[-1].content
    assert "[truncated: 5000 characters in all]" in long and "(empty)" in long
