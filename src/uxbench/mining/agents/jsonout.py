"""Finding the JSON object in a model's answer: reasoning blocks, code fences and prose around it."""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_TAIL = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.S | re.I)
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def strip_reasoning(text: str) -> str:
    """The answer without <think>...</think> blocks (and without an opening block whose start was cut)."""
    text = _THINK.sub("", text)
    if re.search(r"</(?:think|thinking|reasoning)>", text, re.I):
        text = _THINK_TAIL.sub("", text, count=1)
    return text.strip()


def _objects(chunk: str) -> list[dict[str, Any]]:
    """Every JSON object that decodes, left to right (a trailing comma is forgiven)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = chunk.find("{")
    while pos != -1:
        obj: Any = None
        end = pos + 1
        try:
            obj, end = decoder.raw_decode(chunk, pos)
        except json.JSONDecodeError:
            try:
                obj, _ = decoder.raw_decode(_TRAILING_COMMA.sub(r"\1", chunk[pos:]))
            except json.JSONDecodeError:
                obj = None
        if isinstance(obj, dict):
            found.append(obj)
        pos = chunk.find("{", max(end, pos + 1))
    return found


def extract_json(text: str, key: str) -> dict[str, Any] | None:
    """The first JSON object holding `key`, from fenced blocks first, then the whole answer.

    A bare list is accepted as `{key: list}` (models sometimes drop the wrapper)."""
    body = strip_reasoning(text)
    chunks = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    for chunk in chunks:
        for obj in _objects(chunk):
            if key in obj:
                return obj
            # One level of wrapping, e.g. {"result": {"cases": [...]}}.
            inner = next((v for v in obj.values() if isinstance(v, dict) and key in v), None)
            if inner is not None:
                return inner
    for chunk in chunks:
        stripped = chunk.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(_TRAILING_COMMA.sub(r"\1", stripped))
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(value, list):
                return {key: value}
    return None
