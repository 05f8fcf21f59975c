"""Product reply payloads: one reading for the dataset loader and the log miner.

A payload is a JSON object (or its text) whose ``content`` is a list of typed blocks, or that block list
itself. The reading:

- ``text`` blocks (body in ``msg``, else ``text`` or ``content``) are the visible reply. Consecutive text
  blocks are pieces of one run of text (a streamed answer) and are joined as they are; text blocks with
  another block between them (an image, a search card) are separate paragraphs, joined by a blank line.
  Each paragraph is stripped of surrounding whitespace.
- ``think`` / ``thinking`` / ``reasoning`` / ``deepthink`` blocks and the strings nested in a
  ``deepSearch`` block (step texts, tool-call titles) are reasoning, one part per string, joined by a blank
  line.
- Search cards, images, files and other blocks carry no reply text.

Two entry points differ only in what counts as a payload. `unwrap_payload` (the dataset: a reply may be
any text, including JSON) accepts an object whose ``content`` blocks carry ``msg``, or a bare list of
blocks of known types; anything else is not a payload. `read_payload_field` (the log miner's ``answer``
field, which holds a payload by definition) reads every shape it can and falls back to the raw text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

import orjson

_REASONING_BLOCKS = frozenset({"think", "thinking", "reasoning", "deepthink"})
_NESTED_BLOCKS = frozenset({"deepsearch"})
_KNOWN_BLOCKS = _REASONING_BLOCKS | _NESTED_BLOCKS | {
    "text", "searchguid", "image", "imageguid", "video", "file", "card"}
_BODY_KEYS = ("msg", "text", "content")
_NESTED_TEXT_KEYS = frozenset({"msg", "content", "text", "think", "reasoning", "title"})
_MAX_DEPTH = 8
_MAX_PARTS = 200  # hostile input stays cheap


@dataclass(frozen=True)
class PayloadText:
    text: str
    """The visible reply."""
    reasoning: str | None
    """Reasoning and search steps, or None."""
    block_types: tuple[str, ...]
    """The `type` of every block, in order, as written."""


def _nested_strings(node: object, out: list[str], depth: int = 0) -> None:
    if depth > _MAX_DEPTH or len(out) > _MAX_PARTS:
        return
    if isinstance(node, Mapping):
        for key, val in node.items():
            if key in _NESTED_TEXT_KEYS and isinstance(val, str) and val.strip():
                out.append(val.strip())
            elif isinstance(val, (Mapping, list)):
                _nested_strings(val, out, depth + 1)
    elif isinstance(node, list):
        for item in node:
            _nested_strings(item, out, depth + 1)


def read_blocks(blocks: list[Any]) -> PayloadText:
    """The reading of a block list (items that are not objects are skipped)."""
    paragraphs: list[list[str]] = []
    reasoning: list[str] = []
    types: list[str] = []
    after_text = False
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        kind = str(block.get("type", ""))
        types.append(kind)
        lower = kind.lower()
        body = next((block[k] for k in _BODY_KEYS if isinstance(block.get(k), str)), None)
        if lower == "text":
            if body is not None:
                if not after_text:
                    paragraphs.append([])
                paragraphs[-1].append(body)
                after_text = True
            continue
        after_text = False
        if lower in _REASONING_BLOCKS and body is not None:
            if body.strip():
                reasoning.append(body.strip())
        elif lower in _REASONING_BLOCKS or lower in _NESTED_BLOCKS:
            _nested_strings({k: v for k, v in block.items() if k != "type"}, reasoning)
    text = "\n\n".join(p for p in ("".join(parts).strip() for parts in paragraphs) if p)
    return PayloadText(text, "\n\n".join(reasoning) or None, tuple(types))


def _is_block_list(blocks: object, *, known_types: bool) -> TypeGuard[list[Mapping[str, Any]]]:
    """Typed objects, at least one carrying `msg`; with `known_types`, every type a product block type
    (so that a reply which merely *is* a JSON list of typed objects is not mistaken for a payload)."""
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, Mapping) for b in blocks):
        return False
    types = [b.get("type") for b in blocks]
    if not all(isinstance(t, str) for t in types) or not any("msg" in b for b in blocks):
        return False
    return not known_types or all(str(t).lower() in _KNOWN_BLOCKS for t in types)


def _decode(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def unwrap_payload(value: object) -> tuple[str, str | None] | None:
    """(text, reasoning) of a product payload; None when `value` is not one (then it is plain text)."""
    if isinstance(value, str):
        text = value.strip()
        if not (text.startswith(("{", "[")) and '"type"' in text):
            return None
        value = _decode(text)
    if isinstance(value, Mapping):
        content = value.get("content")
        blocks = content if _is_block_list(content, known_types=False) else None
    else:
        blocks = value if _is_block_list(value, known_types=True) else None
    if blocks is None:
        return None
    read = read_blocks(blocks)
    return read.text, read.reasoning


def read_payload_field(value: object) -> PayloadText:
    """A field that holds a payload by definition: an object with ``content`` blocks, a block list, an
    object with ``msg`` / ``text``, or their JSON text; plain or unreadable text is the reply as it is."""
    if value is None:
        return PayloadText("", None, ())
    if isinstance(value, str):
        stripped = value.strip()
        decoded = _decode(stripped) if stripped.startswith(("{", "[")) else None
        if decoded is None:
            return PayloadText(value, None, ())  # plain text, or text that merely starts with a brace
        value = decoded
    blocks = value.get("content") if isinstance(value, Mapping) else value
    if isinstance(value, Mapping) and not isinstance(blocks, list):
        msg = value.get("msg", value.get("text"))
        return PayloadText(msg if isinstance(msg, str) else "", None, ())
    return read_blocks(blocks) if isinstance(blocks, list) else PayloadText("", None, ())
