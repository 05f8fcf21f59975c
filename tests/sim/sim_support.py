"""Personas, assistants and runners shared by the simulator tests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from uxbench.sim.persona import Persona

REFUND = {
    "id": "refund-user", "lang": "en",
    "profile": {"description": "Bought a kettle that arrived broken."},
    "goal": [
        {"id": "refund", "request": "get a refund for the broken kettle",
         "rephrasings": ["can I have my money back for the kettle that came broken"],
         "check": {"any_of": ["refund is on its way"]}, "needs": ["order"]},
        {"id": "timing", "request": "how long the refund takes", "after": ["refund"],
         "check": {"any_of": ["5 business days"]}},
    ],
    "facts": [
        {"id": "order", "label": "order number", "value": "KX-99173", "disclose": "on_request",
         "ask_patterns": ["order number"]},
        {"id": "card", "label": "card number", "value": "4111 2222 3333 4444", "disclose": "never",
         "ask_patterns": ["card number"]},
    ],
    "patience": {"session": 2},
    "reactions": {"failure": {"rephrase": 1}, "failure_low": {"complain": 1}, "low_below": 0.5,
                  "exhausted": {"dismiss": 1, "leave": 0}, "like": 0.5, "dislike": 0.5},
}

ZH_REFUND = {
    "id": "zh-refund-user", "lang": "zh",
    "goal": [
        {"id": "refund", "request": "给坏掉的水壶退款", "rephrasings": ["水壶收到就坏了，能退钱吗"],
         "check": {"any_of": ["退款已提交"]}, "needs": ["order"]},
        {"id": "timing", "request": "退款多久到账", "after": ["refund"], "check": {"any_of": ["3个工作日"]}},
    ],
    "facts": [{"id": "order", "label": "订单号", "value": "KX-88120", "disclose": "on_request",
               "ask_patterns": ["订单号"]}],
    "patience": {"session": 2},
}


def persona(data: dict[str, Any] | None = None, **update: Any) -> Persona:
    return Persona.model_validate({**(data or REFUND), **update})


def write_personas(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def rules_file(path: Path, rules: list[tuple[str, str]], default: str) -> Path:
    """A scripted assistant (`scripted:file:PATH`): the first regex found in the last user message answers."""
    path.write_text(json.dumps({"rules": [{"pattern": p, "response": r} for p, r in rules], "default": default}),
                    encoding="utf-8")
    return path


def helpful_rules(path: Path) -> Path:
    """Asks for the order number, then gives the refund, then the timing (en and zh)."""
    return rules_file(path, [
        (r"KX-99173", "Thanks. Your refund is on its way."),
        (r"KX-88120", "好的，退款已提交。"),
        (r"(?i)how long|long until|money back|many days", "It takes 5 business days."),
        (r"到账|多久", "一般3个工作日到账。"),
        (r"(?i)refund|kettle|money", "Sure. What is your order number?"),
        (r"退款|水壶|退钱", "好的，请提供订单号？"),
    ], "Sorry, I am not sure.")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class FlakyAssistant:
    """A model under test for the demo personas, in-process: each reply helps with probability `p_help` (it asks
    for the item's on_request facts first, then answers with the item's check phrase), else it fails in one of
    several ways. Seeded by the conversation, so a session replays identically."""

    def __init__(self, personas: list[Persona], p_help: float = 0.5) -> None:
        self.personas = personas
        self.p_help = p_help

    def _persona(self, first: str) -> Persona | None:
        from uxbench.sim.gate import raises

        for p in self.personas:
            if p.opener == first or any(raises(first, p, g.id) for g in p.goal):
                return p
        return None

    def reply(self, messages: list[Any]) -> str:
        import hashlib
        import random

        texts = [m.content for m in messages]
        rng = random.Random(hashlib.sha256("\x00".join(texts).encode()).hexdigest())
        p = self._persona(texts[0])
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in texts[-1])
        if p is None or rng.random() >= self.p_help:
            return rng.choice(["对不起，我不太明白。", "这个问题我没法回答。", "你可以去网上搜一下。"] if zh else
                              ["Sorry, I am not sure what you mean.", "I cannot help with that.",
                               "You could try searching online for it."])
        said = " ".join(texts[0::2])
        from uxbench.sim.gate import raises

        for item in p.goal:
            if not any(raises(t, p, item.id) for t in texts[0::2]) and item != p.goal[0]:
                continue
            answered = any(phrase in t for t in texts[1::2] for phrase in item.check.any_of)
            if answered:
                continue
            for need in item.needs:
                fact = p.fact(need)
                if fact.mode == "on_request" and fact.value not in said:
                    return f"请提供您的{fact.label}？" if zh else f"Could you give me your {fact.label}?"
            phrase = item.check.any_of[0] if item.check.any_of else "done"
            return f"好的：{phrase}。" if zh else f"Here is what to do: {phrase}."
        return "还有别的问题吗？" if zh else "Anything else?"


class InProcessModel:
    """Wraps a reply function as a `Model`-like object for `Parties.assistant`."""

    def __init__(self, reply: Any, spec: str = "test:flaky") -> None:
        self.reply = reply
        self.spec = spec

    async def generate(self, messages: list[Any], config: Any = None, **_: Any) -> Any:
        from uxbench.models.api import ModelOutput, Usage

        text = self.reply(messages)
        return ModelOutput(text=text, usage=Usage(input_tokens=10, output_tokens=len(text) // 4 + 1))
