"""Shared by the agent, sampling and export tests: sessions with real signals, and a scripted agent that a
real loopback HTTP server (OpenAI-compatible) serves.

The scripted agent answers each stage by rules. Directives written in a user turn steer the answers for
cases whose query is that turn: [[DIM:key]] [[SCEN:key]] [[SIG:name]] [[SCORES:5,5,4,4,4]] [[QA:verdict]]
[[MINER:mode]] [[JUDGE:mode]] [[QAMODE:mode]] [[WRAP:1]]; modes: garbage, garbage_once, badturn, missing,
missing_once, should_keep.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

from uxbench.mining.records import MinedSession
from uxbench.mining.signals import compute_signals
from uxbench.mining.types import Session, Turn
from uxbench.models.model import Model
from uxbench.models.registry import create_model_api
from uxbench.runtime.cache import ResponseCache
from uxbench.testing import LoopbackConfig, LoopbackServer

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
DIRECTIVE = re.compile(r"\[\[([A-Z]+):([^\]]*)\]\]")
TURN = re.compile(r"^\[(\d+)\] (user|assistant)[^\n]*\n(.*?)(?=^\[\d+\] (?:user|assistant)|\Z)", re.M | re.S)
LONG_REPLY = "You can let the router assign the address automatically through DHCP, which is the default. " * 2


def mined(*msgs: tuple[Any, ...], cid: str = "c1", duplicate_of: str | None = None) -> MinedSession:
    """msgs: (role, content[, extra turn fields]); one minute between turns."""
    turns = [
        Turn(conversation_id=cid, turn_index=i, role=role, content=content,
             created_at=T0 + timedelta(minutes=i), **(extra[0] if extra else {}))
        for i, (role, content, *extra) in enumerate(msgs)
    ]
    session = Session(conversation_id=cid, turns=turns, has_timestamps=True)
    return MinedSession(session=session, signals=compute_signals(session), duplicate_of=duplicate_of)


def complaint_session(cid: str, directives: str = "", *, query: str = "How do I set a static IP on Windows 11?",
                      liked: bool = False) -> MinedSession:
    """A reply the user complains about (turn 1), a fix (turn 3) the user thanks for (praise)."""
    msgs: list[tuple[Any, ...]] = [
        ("user", f"{query} {directives}".strip()),
        ("assistant", LONG_REPLY),
        ("user", "That is wrong, it is not what I asked."),
        ("assistant", "Open Settings > Network > Wi-Fi > Edit IP assignment and choose Manual.",
         {"feedback": "like"} if liked else {}),
        ("user", "Thanks, that worked perfectly!"),
    ]
    return mined(*msgs, cid=cid)


def directives(text: str) -> dict[str, str]:
    return {k: v for k, v in DIRECTIVE.findall(text)}


def turns_of(prompt: str) -> dict[int, tuple[str, str]]:
    return {int(m.group(1)): (m.group(2), m.group(3)) for m in TURN.finditer(prompt)}


def first_json_list(text: str) -> list[dict[str, Any]]:
    start = text.index("[")
    value, _ = json.JSONDecoder().raw_decode(text, start)
    assert isinstance(value, list)
    return value


class AgentScript:
    """The responder: (messages, request body) -> answer text. `calls` records (stage, attempt)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        system, prompt = str(messages[0]["content"]), str(messages[1]["content"])
        attempt = 1 if len(messages) <= 2 else 2
        if '"failure_dimension": "<key>"' in system:
            stage = "miner_bad"
        elif '"success_dimension": "<key>"' in system:
            stage = "miner_good"
        elif '{"scores": [' in system:
            stage = "judge"
        else:
            assert '{"reviews": [' in system, system[:200]
            stage = "qa"
        self.calls.append((stage, attempt))
        if stage.startswith("miner"):
            return self.miner(stage == "miner_good", prompt, attempt)
        return self.judge(prompt, attempt) if stage == "judge" else self.qa(prompt, attempt)

    @staticmethod
    def _broken(mode: str | None, attempt: int) -> bool:
        return mode == "garbage" or (mode == "garbage_once" and attempt == 1)

    def miner(self, good: bool, prompt: str, attempt: int) -> str:
        found = re.search(r"(?:Candidate assistant turns|候选助手轮次)[:：]\s*([\d, ]+)", prompt)
        assert found
        turns = turns_of(prompt)
        cases, wrap, mode = [], False, None
        for t in (int(x) for x in found.group(1).split(",")):
            q = max(i for i, (role, _) in turns.items() if role == "user" and i < t)
            d = directives(turns[q][1])
            mode = d.get("MINER", mode)
            wrap = wrap or "WRAP" in d
            listed = re.search(r"signals: (\w+)", turns[t][1])
            case = {
                "turn_index": 99 if mode == "badturn" else t,
                "query_turn_index": q,
                "scenario": d.get("SCEN", "information_knowledge"),
                "signal": d.get("SIG") or (listed.group(1) if listed else "none"),
                "explanation": "The user asked for X; the reply gave Y, and the user said so.",
            }
            case["success_dimension" if good else "failure_dimension"] = d.get(
                "GDIM" if good else "DIM", "accurate_answer" if good else "intent_misunderstanding")
            cases.append(case)
        if self._broken(mode, attempt):
            return "I think turn 1 is bad because the user complained."
        text = json.dumps({"cases": cases}, ensure_ascii=False)
        if wrap:
            return f"<think>Let me look at {{the turns}}.</think>Here you go:\n```json\n{text}\n```\nDone."
        return text

    def judge(self, prompt: str, attempt: int) -> str:
        turns = turns_of(prompt)
        entries = []
        mode = None
        for case in first_json_list(prompt):
            d = directives(turns[case["query_turn_index"]][1])
            mode = d.get("JUDGE", mode)
            if d.get("JUDGE") == "missing" or (d.get("JUDGE") == "missing_once" and attempt == 1):
                continue
            values = [int(x) for x in d.get("SCORES", "5,5,5,4,4").split(",")]
            entry: dict[str, Any] = {"index": case["index"], "notes": "ok"}
            entry.update(zip(("query_completeness", "signal_credibility", "representativeness",
                              "severity", "annotation_clarity"), values, strict=True))
            if d.get("JUDGE") == "should_keep":
                entry.update(should_keep=True, overall_quality="high", average=4.9)
            entries.append(entry)
        if self._broken(mode, attempt):
            return '{"scores": [{"index": 0, "query_completeness": "great"'
        return json.dumps({"scores": entries})

    def qa(self, prompt: str, attempt: int) -> str:
        reviews = []
        mode = None
        for case in first_json_list(prompt):
            d = directives(case["user_request"])
            mode = d.get("QAMODE", mode)
            if d.get("QAMODE") == "missing":
                continue
            verdict = d.get("QA", "keep")
            review: dict[str, Any] = {"index": case["index"], "verdict": verdict, "issues": [],
                                      "needs_context": False, "corrected_dimension": None, "notes": "fine"}
            if verdict == "needs_context":
                review.update(verdict="keep", needs_context=True, issues=["needs_context"])
            elif verdict == "unsafe":
                review.update(verdict="keep", issues=["unsafe"])
            elif verdict.startswith("correct="):
                review.update(verdict="keep", corrected_dimension=verdict.split("=", 1)[1],
                              issues=["wrong_dimension"])
            reviews.append(review)
        if self._broken(mode, attempt):
            return "All cases look fine to me."
        return json.dumps({"reviews": reviews})


@asynccontextmanager
async def served_agents(
    script: Any = None, cache: ResponseCache | None = None
) -> AsyncIterator[tuple[Model, Any, LoopbackServer]]:
    """A `Model` talking HTTP to a loopback server that runs `script` (an AgentScript or any responder)."""
    script = script or AgentScript()
    with LoopbackServer(LoopbackConfig(responder=script)) as server:
        api = create_model_api("openai:loopback", {"base_url": server.base_url})
        model = Model(api, cache=cache, max_concurrency=8)
        try:
            yield model, script, server
        finally:
            await model.aclose()
