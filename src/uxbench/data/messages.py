"""Field-level parsing shared by the row normaliser: texts, histories, integers. Product payloads and
timestamps are read by `uxbench.data.payload` and `uxbench.data.timestamps` (shared with the log miner).

Every function raises `DataError(..., field=...)` on bad input; the loader adds file and line.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from typing import Any

from uxbench.data.payload import unwrap_payload
from uxbench.data.schema import Message, Role
from uxbench.data.timestamps import parse_timestamp
from uxbench.errors import DataError

_ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "gpt": "assistant",
    "system": "system",
}
_TEXT_KEYS = ("message", "content", "text", "msg")
_TIME_KEYS = ("create_time", "created_at", "timestamp", "time")
_MAX_LITERAL_CHARS = 2_000_000  # ast.literal_eval on huge strings is slow and memory-hungry


def parse_json_text(value: str, field: str) -> Any:
    """Decode a field stored as JSON text, falling back to a Python literal (single quotes, True/None)."""
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        pass
    if len(value) <= _MAX_LITERAL_CHARS:
        try:
            return ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError, OverflowError):
            pass
    raise DataError("is a string that is neither JSON nor a Python literal", field=field)


def text_of(value: object, field: str, *, allow_none: bool = False) -> tuple[str, str | None]:
    """(text, reasoning) of a text-valued field: a string, a product payload, or a list of text parts."""
    if value is None:
        if allow_none:
            return "", None
        raise DataError("is missing or null", field=field)
    unwrapped = unwrap_payload(value)
    if unwrapped is not None:
        return unwrapped
    if isinstance(value, str):
        return value, None
    if isinstance(value, list) and all(isinstance(p, (str, Mapping)) for p in value):
        # OpenAI-style content parts: keep the text ones.
        parts = [p if isinstance(p, str) else p.get("text") for p in value]
        return "".join(p for p in parts if isinstance(p, str)), None
    raise DataError(f"expected text, got {type(value).__name__}", field=field)


# --- integers ----------------------------------------------------------------------------------------


def as_int(value: object, field: str) -> int | None:
    """An optional integer field (ints, integral floats, digit strings)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise DataError("expected an integer, got a boolean", field=field)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdecimal() and len(value) < 20:
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise DataError(f"expected an integer, got {value!r:.40}", field=field)


# --- messages and histories ----------------------------------------------------------------------------


def _text_key(obj: Mapping[str, Any]) -> str | None:
    """The text field of a message: the first of message/content/text/msg that is set. Arrow-backed rows
    (Parquet, HF) carry every variant's key, with None where a row did not have it."""
    first = None
    for key in _TEXT_KEYS:
        if key in obj:
            if obj[key] is not None:
                return key
            first = first or key
    return first


def parse_message(raw: object, field: str) -> Message:
    """One message: `{role, message|content|text, reasoning?, create_time?, turn_index?}`."""
    if not isinstance(raw, Mapping):
        raise DataError(f"expected a message object, got {type(raw).__name__}", field=field)
    role_raw = raw.get("role", raw.get("speaker", raw.get("from")))
    role = _ROLES.get(role_raw.strip().lower()) if isinstance(role_raw, str) else None
    if role is None:
        raise DataError(
            f"unknown role {role_raw!r:.40} (expected user, assistant or system)", field=f"{field}.role"
        )
    key = _text_key(raw)
    text, reasoning = text_of(raw.get(key) if key else None, f"{field}.{key or 'message'}", allow_none=True)
    extra = raw.get("reasoning")
    if extra is not None and not isinstance(extra, str):
        raise DataError("expected text", field=f"{field}.reasoning")
    when = next((raw[k] for k in _TIME_KEYS if k in raw), None)
    # Every field is checked above (role a Role, text a str, a datetime or None, an int or None). The validating
    # constructor all the same: pydantic-core checks these five values in ~2 us, where model_construct, in
    # Python, takes ~9 us.
    return Message(
        role=role,
        content=text,
        reasoning=extra or reasoning or None,
        created_at=None if when is None else parse_timestamp(when, f"{field}.time", lenient=True),  # optional
        turn_index=as_int(raw.get("turn_index"), f"{field}.turn_index"),
    )


def parse_history(value: object, field: str) -> list[Message]:
    """A message list given as a list, as JSON text, or as a Python-literal string; None -> []."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        value = parse_json_text(value, field)
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if not isinstance(value, list):
        raise DataError(f"expected a list of messages, got {type(value).__name__}", field=field)
    return [parse_message(item, f"{field}[{i}]") for i, item in enumerate(value)]


def query_text(value: object, field: str) -> tuple[str, int | None]:
    """The user query: a string, or `{turn_index, message|content}` as in `source_query`."""
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, Mapping) and _text_key(decoded) is not None:
            value = decoded
    if isinstance(value, Mapping):
        key = _text_key(value) or "message"
        text, _ = text_of(value.get(key), f"{field}.{key}")
        return text, as_int(value.get("turn_index"), f"{field}.turn_index")
    text, _ = text_of(value, field)
    return text, None
