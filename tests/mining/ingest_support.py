"""Log rows for the reader tests: canonical turns and JSON Lines files of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import orjson


def turn_row(cid: str, index: int, text: object = "hello") -> dict[str, object]:
    """A canonical turn: even indices are the user's, odd ones the assistant's, one second apart."""
    return {"conversation_id": cid, "turn_index": index, "role": "user" if index % 2 == 0 else "assistant",
            "content": text, "created_at": 1714557600 + index}


def write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path
