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
