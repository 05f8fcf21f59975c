"""A small log and labels for `eval-signals` tests, written by hand so every figure can be computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

# (conversation, [user, assistant, user, ...]); no timestamps
CONVERSATIONS: list[tuple[str, list[str]]] = [
    ("c1", ["How do I sort a list in Python?", "Use list.sort() or sorted(list).",
            "No, that's wrong. It still doesn't work."]),
    ("c2", ["How do I reset my router password?", "Open the admin page and choose Reset.",
            "How do I reset my router password?"]),
    ("c3", ["Write a short poem about cats.", "Soft paws at dawn, a purr beside the door.",
            "Thank you, that worked perfectly!"]),
    ("c4", ["Write the first chapter of a story about a lighthouse keeper.", "Chapter one: the lamp ...",
            "continue"]),
    ("c5", ["Tell me about the history of Paris.", "Paris began as a Roman town called Lutetia.",
            "Write a haiku about ocean waves at night."]),
    ("c6", ["What is the capital of Australia?", "Canberra.", "What is the capital of Australia?"]),
    ("c7", ["Explain recursion in one sentence.", "A function that calls itself on a smaller input.",
            "I asked for an example."]),
    ("c9", ["hello there, anyone?"]),  # no reply: the prefilter drops it
]
# c7's label points at turn 4, which does not exist; c8 is not in the log at all
LABELS: list[dict[str, Any]] = [
    {"conversation_id": "c1", "u2_turn_index": 2, "stratum": "negative", "label": "complaint",
     "dissatisfied": True, "confidence": 3, "why": "says it is wrong"},
    {"conversation_id": "c2", "u2_turn_index": 2, "stratum": "similar", "label": "repeat", "dissatisfied": True},
    {"conversation_id": "c3", "u2_turn_index": 2, "stratum": "random", "label": "continue_positive",
     "dissatisfied": False},
    {"conversation_id": "c4", "u2_turn_index": 2, "stratum": "random", "label": "continue_neutral",
     "dissatisfied": False},
    {"conversation_id": "c5", "u2_turn_index": 2, "stratum": "random", "label": "rephrase", "dissatisfied": True},
    {"conversation_id": "c6", "u2_turn_index": 2, "stratum": "similar", "label": "continue_neutral",
     "dissatisfied": False, "why": "a quiz asks the same question again"},
    {"conversation_id": "c7", "u2_turn_index": 4, "stratum": "negative", "label": "complaint",
     "dissatisfied": True},
    {"conversation_id": "c8", "u2_turn_index": 2, "stratum": "random", "label": "continue_neutral",
     "dissatisfied": False},
    {"conversation_id": "c9", "u2_turn_index": 2, "stratum": "negative", "label": "dismiss", "dissatisfied": True},
]


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def write_fixture(root: Path) -> tuple[Path, Path]:
    log, labels = root / "log.jsonl", root / "labels.jsonl"
    with log.open("w", encoding="utf-8") as f:
        for cid, texts in CONVERSATIONS:
            for k, text in enumerate(texts):
                row = {"conversation_id": cid, "turn_index": k, "role": "user" if k % 2 == 0 else "assistant",
                       "content": text}
                f.write(json.dumps(row) + "\n")
    labels.write_text("".join(json.dumps(r) + "\n" for r in LABELS), encoding="utf-8")
    return log, labels
