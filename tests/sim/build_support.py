"""A small real mining output for the persona-build tests: canonical log rows written here, mined by the real
deterministic stages (de-identification turns the phone numbers into placeholders)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uxbench.mining.pipeline.mined import mined_run


def _turns(cid: str, texts: list[str], start: int = 0) -> list[dict[str, Any]]:
    return [{"conversation_id": cid, "turn_index": i, "role": "user" if i % 2 == 0 else "assistant",
             "content": text, "created_at": f"2024-05-01T10:{i:02d}:00+00:00"} for i, text in enumerate(texts, start)]


CONVERSATIONS: dict[str, list[str]] = {
    "refund": [
        "My blender arrived cracked and I want a refund.",
        "Sorry to hear that. What is your phone number so I can find the order?",
        "It is 415-555-0199.",
        "Thanks. Please send a photo of the blender.",
        "That is wrong, I already told you it is cracked, just refund it.",
        "I understand. Please send a photo first.",
        "forget it",
    ],
    "router": [
        "How do I reset my router?",
        "Hold the reset button for ten seconds.",
        "Thanks, that worked! Now how do I change the Wi-Fi password?",
        "Open 192.168.0.1 in a browser and go to Wireless settings.",
        "Great, thank you.",
        "You're welcome.",
    ],
    "zh-order": [
        "我的快递一直没到，手机号13812345678，帮我查一下",
        "好的，请提供订单号。",
        "订单号是 20240517",
        "查到了，包裹在路上。",
        "还是不对，我问的是什么时候到",
        "预计明天送达。",
    ],
    "short": ["hi", "Hello! How can I help?"],
}


def write_log(path: Path) -> Path:
    rows = [row for cid, texts in CONVERSATIONS.items() for row in _turns(cid, texts)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def mined_output(tmp: Path) -> Path:
    """The mining output of the log above (deterministic stages only)."""
    return mined_run(write_log(tmp / "log.jsonl"), tmp / "mined", workers=1)
