"""Isolation over a 50-session run: what the model under test's loopback server received holds no persona private
text, no fact value before the user said it (after being asked), and no simulator reasoning."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

from sim_support import REFUND, ZH_REFUND, persona, write_personas

from uxbench.sim.run import execute
from uxbench.sim.spec import RoleSpec, SimSpec
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

REASONING = "SIMREASON-7f3a"
NO_KEY = "UXBENCH_TEST_NO_SUCH_KEY"


def _assistant(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    last = str(messages[-1]["content"])
    if "KX-99173" in last:
        return "Thanks. Your refund is on its way."
    if "KX-88120" in last:
        return "好的，退款已提交。"
    if re.search(r"(?i)how long|many days", last) or "到账" in last:
        return "It takes 5 business days." if re.search(r"[a-z]", last) else "一般3个工作日到账。"
    if len(messages) > 3 and len(messages) % 4 == 1:
        return "Could you say that again?"  # a failure now and then
    return "请提供订单号？" if re.search(r"[\u4e00-\u9fff]", last) else "Sure. What is your order number?"


def _said(line: str) -> str:
    """A prompt line without the instruction in front of the facts ("In this message, state: ..."): a realiser that
    repeats its instructions is discarded (`sim.markers.prompt_echo`), which is not what these tests are about."""
    return re.sub(r"^.*?(state|说出|fits|提到)\s*[:：]\s*", "", line.strip())


def test_the_model_under_test_sees_only_what_the_user_said(tmp_path: Path) -> None:
    sent: list[list[dict[str, Any]]] = []
    calls: Counter[str] = Counter()

    def assistant(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        sent.append(messages)
        return _assistant(messages, body)

    def realiser(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        key = str(messages)
        calls[key] += 1
        system = str(messages[0]["content"])
        lines = [_said(ln) for ln in system.splitlines() if re.search(r"KX-\d+", ln)
                 and not ln.lstrip().startswith("-")]  # what it was told to say, not the rules or the instruction
        text = " ".join(lines) or ("我需要帮助" if "用户" in system else "I need help with my kettle.")
        if calls[key] == 1 and len(sent) % 3 == 0:
            return f"Thought: {REASONING}, the user should push back.\n{text}"  # discarded, regenerated
        return text

    data = [dict(REFUND, profile={"description": "PRIVATE-DESC a retired sailor from Hull"}),
            dict(ZH_REFUND, profile={"description": "私人描述：退休的海员"})]
    path = write_personas(tmp_path / "p.jsonl", *data)
    with LoopbackServer(LoopbackConfig(responder=assistant)) as mut, \
            LoopbackServer(LoopbackConfig(responder=realiser)) as sim:
        spec = SimSpec(personas=[str(path)], trials=25, out=tmp_path / "run", n_boot=50, use_cache=False,
                       model=RoleSpec(model="openai:mut", args={"base_url": mut.base_url, "api_key_env": NO_KEY}),
                       simulator=RoleSpec(model="openai:sim", args={"base_url": sim.base_url, "api_key_env": NO_KEY}),
                       concurrency=8)
        result = asyncio.run(execute(spec))
    assert result.summary["n_sessions"] == 50
    assert result.summary["discarded"]["by_reason"].get("reasoning text", 0) > 0  # the path was exercised
    personas = [persona(d) for d in data]
    private = [p.profile.description for p in personas] + ["4111 2222 3333 4444", REASONING, "PRIVATE-DESC",
                                                           "私人描述", "on_request", "patience", "satisfaction"]
    asked = re.compile(r"(?i)order number|订单号")
    assert len(sent) >= 100
    for messages in sent:
        assert {m["role"] for m in messages} <= {"user", "assistant"}  # no system prompt, no persona
        text = "\n".join(str(m["content"]) for m in messages)
        for needle in private:
            assert needle not in text, needle
        for p in personas:
            value = p.fact("order").value
            first = next((i for i, m in enumerate(messages) if m["role"] == "user" and value in str(m["content"])),
                         None)
            if first is not None:  # the first time the user says it, the reply before asked for it
                before = [x for x in messages[:first] if x["role"] == "assistant"]
                assert before and asked.search(str(before[-1]["content"])), "stated before it was asked"


def test_generations_discarded_in_a_session_that_ended_unusable_are_counted(tmp_path: Path) -> None:
    """A realiser whose every output is reasoning text: each session ends in error after two discarded generations
    of a message, and those generations are counted with the discarded ones, not hidden in the error."""

    def realiser(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        return f"Thought: {REASONING}, the user should push back."

    path = write_personas(tmp_path / "p.jsonl", dict(REFUND, opener=None), dict(ZH_REFUND, opener=None))
    with LoopbackServer(LoopbackConfig(responder=_assistant)) as mut, \
            LoopbackServer(LoopbackConfig(responder=realiser)) as sim:
        spec = SimSpec(personas=[str(path)], trials=2, out=tmp_path / "run", n_boot=50, use_cache=False,
                       model=RoleSpec(model="openai:mut", args={"base_url": mut.base_url, "api_key_env": NO_KEY}),
                       simulator=RoleSpec(model="openai:sim", args={"base_url": sim.base_url, "api_key_env": NO_KEY}))
        summary = asyncio.run(execute(spec)).summary
    assert summary["n_errors"] == 4 and "unusable twice (reasoning text; reasoning text)" in summary["errors"][0]
    assert summary["discarded"]["generations"] == 8 and summary["discarded"]["by_reason"] == {"reasoning text": 8}
