"""Raw log formats that `uxbench mine` reads, and the adapters that turn a row into `Turn`s.

Canonical format (``--log-format canonical``): JSON Lines (``.jsonl``, ``.jsonl.gz``) or Parquet, one object
per turn.

- ``conversation_id`` (required): string; an integer is turned into a string.
- ``turn_index`` (required): integer >= 0, the message's order in its conversation; user and assistant
  messages both count (user 0, assistant 1, user 2, ...).
- ``role`` (required): ``user`` or ``assistant`` (any case); ``system`` / ``tool`` rows are skipped.
- ``content`` (required): the text; a list of ``{"type": "text", "text": ...}`` parts is joined.
- ``created_at``: ISO 8601 (``2024-05-01T10:00:00+08:00``, ``...Z``, ``2024-05-01 10:00:00``) or epoch
  seconds / milliseconds (numbers above 10^11 are milliseconds), read by `uxbench.data.timestamps` (as the
  dataset's times are). Naive times are read as UTC; only differences between times are used.
- ``feedback``: ``like`` / ``dislike``; also ``thumbs_up`` / ``thumbs_down``, ``up`` / ``down``, ``1`` /
  ``-1``; ``0``, ``""`` and null mean none.
- ``regeneration_index``: 0 for the first reply, n for its n-th regeneration. A regenerated reply keeps the
  ``turn_index`` of the reply it replaces.
- ``regenerated``: ``true`` marks a regenerated reply (``regeneration_index`` 1 when no index is given). A
  regenerated reply given its own ``turn_index`` right after the reply it replaces is recognised too.
- ``message_id``: the source id; duplicate rows are dropped by it.
- ``counters``: object of integers (``copy``, ``share``, ``regenerate_clicks``, ``stop_generate``).
- ``metadata``: free object, carried as ``Turn.meta`` (and de-identified like the text).
Other top-level keys are ignored: put extra data under ``metadata``.

Product export (``--log-format product``), one row per exchange: ``cid``, ``convidx`` (exchange order),
``regenerateidx`` (or the misspelled ``regeneateidx``), ``modelprompt`` (user text), ``answer`` (a JSON
payload whose ``content[]`` blocks hold the reply in ``text`` blocks' ``msg``, reasoning in ``think`` /
``deepSearch`` blocks, and search or image cards, read by `uxbench.data.payload` as the dataset's replies
are; fallbacks ``answer_msg``, ``模型回复``),
``promptcreatetime`` / ``answercreatetime`` (``YYYY-MM-DD HH:MM:SS``), ``like_cnt`` / ``unlike_cnt``
(feedback; a dislike wins), ``copy_cnt`` / ``share_cnt`` / ``click_regen_cnt`` / ``stopgenerate``
(counters), ids ``messageid`` | ``message_id`` | ``MessageID`` | ``traceid`` and ``umessageid`` /
``amessageid``. A row gives a user turn (``turn_index`` 2*convidx) and an assistant turn (2*convidx+1), both
with ``regeneration_index`` = regenerateidx; a regenerated row repeats the prompt, which session building
keeps once. ``{"outputs": [row, ...]}`` is unwrapped. Reasoning goes to ``meta["reasoning"]``, product
classifiers (``atom_ability``, ``mas_intent``, ...) to ``meta``; user-profile fields (age, gender, openid,
...) are dropped on purpose. Texts are capped at 120,000 characters.

Conversation-level files: ``--log-format messages`` reads ``{"messages": [{"role", "content"}, ...]}`` (OpenAI
style; optional row ``conversation_id`` | ``id``; messages may carry ``created_at``, ``feedback``, ``id``);
``--log-format sharegpt`` reads ``{"conversations": [{"from": "human" | "gpt", "value"}], "id"}``. Turns are
numbered 0, 1, ... over the kept messages; without an id the conversation id is a hash of the content. Such
files usually have no timestamps, so the timing signals are reported as not computed.

``--log-format auto`` (the default) detects the format per row (`detect_format`). Every adapter is a pure
function ``row -> list[Turn]`` that raises `DataError` (naming the field) on a bad row; error messages never
quote field values, so reports built from them hold no personal data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from uxbench.data.payload import read_payload_field
from uxbench.data.timestamps import parse_timestamp
from uxbench.errors import ConfigError, DataError
from uxbench.mining.types import Feedback, Turn

FORMATS: tuple[str, ...] = ("auto", "canonical", "product", "messages", "sharegpt")
MAX_TEXT_CHARS = 120_000

_FEEDBACK: dict[str, Feedback] = {
    **dict.fromkeys(("like", "liked", "thumbs_up", "thumbsup", "up", "positive", "good", "1", "+1"), "like"),
    **dict.fromkeys(("dislike", "disliked", "unlike", "thumbs_down", "thumbsdown", "down", "negative", "bad",
                     "-1"), "dislike"),
}
_NO_FEEDBACK = {"", "0", "none", "null", "neutral"}
_USER_ROLES = {"user", "human", "prompter"}
_ASSISTANT_ROLES = {"assistant", "gpt", "bot", "model", "chatgpt", "ai", "bard", "bing"}
_SKIPPED_ROLES = {"system", "tool", "function", "developer", "observation"}
_ROLE_OF: dict[str, Literal["user", "assistant"]] = {
    **dict.fromkeys(_USER_ROLES, "user"), **dict.fromkeys(_ASSISTANT_ROLES, "assistant"),
}
_PRODUCT_META_KEYS = (
    "atom_ability", "real_ability", "output_category1", "output_category2", "output_category3", "mas_intent",
    "mas_1nd_intent", "mas_1nd_sub_intent", "mas_intent_v2_1st", "mas_intent_v2_2nd", "badcase_type",
    "is_online_search", "search_type", "is_search", "is_has_citation", "is_deep_seek", "chatmodel_type",
    "product_type", "terminal", "timecosttotal", "has_attachment", "chainid",
)
_PRODUCT_COUNTERS = {"copy_cnt": "copy", "share_cnt": "share", "click_regen_cnt": "regenerate_clicks",
                     "stopgenerate": "stop_generate"}
_PRODUCT_KEYS = ("convidx", "modelprompt", "answer")


def normalize_feedback(value: Any, field: str = "feedback") -> Feedback | None:
    """Map the accepted feedback spellings onto like / dislike / None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise DataError("feedback must be like / dislike or 1 / -1, not a boolean", field=field)
    if isinstance(value, (int, float)):
        return "like" if value > 0 else "dislike" if value < 0 else None
    if isinstance(value, str):
        raw = value.strip().lower()  # "-1" must be looked up before dashes become underscores
        for key in (raw, raw.replace("-", "_").replace(" ", "_"), raw.replace("-", "").replace(" ", "")):
            if key in _NO_FEEDBACK:
                return None
            if key in _FEEDBACK:
                return _FEEDBACK[key]
    raise DataError("feedback must be like / dislike (or thumbs_up / thumbs_down, 1 / -1)", field=field)


def _int(value: Any, field: str, *, default: int | None = None) -> int:
    if type(value) is int and value >= 0:  # the common value, settled first (not a bool: type, not isinstance)
        return value
    if value is None or value == "":
        if default is None:
            raise DataError("is required", field=field)
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        result = value
    elif isinstance(value, float) and value.is_integer():
        result = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        result = int(value.strip())
    else:
        raise DataError(f"must be an integer, got {type(value).__name__}", field=field)
    if result < 0:
        raise DataError("must not be negative", field=field)
    return result


def _id(value: Any, field: str) -> str:
    if type(value) is str:  # the common value, settled first
        stripped = value.strip()
        if stripped:
            return stripped
    if isinstance(value, float):
        # JSON integers beyond 64 bits arrive as floats: two ids could collapse into one, so refuse them.
        raise DataError("is a number but not an exact integer (a fraction, or an integer above 2^64, whose "
                        "digits JSON readers lose): write ids as strings", field=field)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
        raise DataError(f"must be a string or an integer, got {type(value).__name__}", field=field)
    if value is None or str(value).strip() == "":
        raise DataError("is required (a non-empty string or integer)", field=field)
    return str(value).strip()


def _opt_id(row: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


def _text(value: Any, field: str) -> str:
    if isinstance(value, str):
        return value[:MAX_TEXT_CHARS]
    if value is None:
        return ""
    if isinstance(value, list):  # OpenAI content parts; images and other parts carry no text
        parts = [p.get("text") if isinstance(p, dict) else p for p in value]
        return "\n".join(p for p in parts if isinstance(p, str))[:MAX_TEXT_CHARS]
    raise DataError(f"must be text, got {type(value).__name__}", field=field)


def _role(value: Any, field: str) -> Literal["user", "assistant"] | None:
    if type(value) is str and value in _ROLE_OF:  # a role written as the list spells it, settled first
        return _ROLE_OF[value]
    key = value.strip().lower() if isinstance(value, str) else ""
    if key in _USER_ROLES or key in _ASSISTANT_ROLES:
        return "user" if key in _USER_ROLES else "assistant"
    if key in _SKIPPED_ROLES:
        return None
    raise DataError("must be user or assistant (system and tool rows are skipped)", field=field)


def canonical_fields(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A canonical row's `Turn` fields, each checked and of its field's type (None for a system / tool row): what
    `parse_canonical` makes its Turn of, for a caller that only writes the turn out (`sessions.fields_line`)."""
    role = _role(row.get("role"), "role")
    if role is None:
        return None
    if "content" not in row:
        raise DataError("is required", field="content")
    regenerated = row.get("regenerated")
    if regenerated is not None and not isinstance(regenerated, bool):
        raise DataError("must be true or false", field="regenerated")
    regen = _int(row.get("regeneration_index"), "regeneration_index", default=1 if regenerated else 0)
    counters, meta = row.get("counters") or {}, row.get("metadata", row.get("meta")) or {}
    if type(counters) is not dict or type(meta) is not dict:  # (the common row has neither: two fresh {})
        for name, value in (("counters", counters), ("metadata", meta)):
            if not isinstance(value, dict):
                raise DataError("must be an object", field=name)
    if regenerated:
        meta = {**meta, "regenerated": True}
    created_at, feedback = row.get("created_at"), row.get("feedback")
    # Turn's field order (the serializer's); the checks run in the order they always have (the first error wins).
    # An absent optional field skips its reader's call (each gives None for None).
    return {
        "conversation_id": _id(row.get("conversation_id"), "conversation_id"),
        "turn_index": _int(row.get("turn_index"), "turn_index"), "role": role,
        "content": _text(row["content"], "content"),
        "created_at": None if created_at is None else parse_timestamp(created_at, "created_at"),
        "feedback": None if feedback is None else normalize_feedback(feedback), "regeneration_index": regen,
        "message_id": None if row.get("message_id") is None else _opt_id(row, "message_id"),
        "counters": {str(k): _int(v, f"counters.{k}", default=0) for k, v in counters.items()} if counters else {},
        "meta": meta,
    }


def parse_canonical(row: Mapping[str, Any]) -> list[Turn]:
    """One canonical row -> one Turn (none for a system / tool row)."""
    fields = canonical_fields(row)
    return [] if fields is None else [Turn(**fields)]


def parse_product(row: Mapping[str, Any]) -> list[Turn]:
    """One product-export row (or an ``{"outputs": [...]}`` wrapper) -> user Turn + assistant Turn."""
    outputs = row.get("outputs")
    if isinstance(outputs, list):
        turns: list[Turn] = []
        for item in outputs:
            if not isinstance(item, dict):
                raise DataError("must hold row objects", field="outputs")
            turns.extend(parse_product(item))
        return turns
    cid = _id(row.get("cid"), "cid")
    convidx = _int(row.get("convidx"), "convidx")
    regen_field = "regeneateidx" if row.get("regenerateidx") in (None, "") else "regenerateidx"
    regen = _int(row.get(regen_field), regen_field, default=0)
    if "modelprompt" not in row and not any(k in row for k in ("answer", "answer_msg", "模型回复")):
        raise DataError("a product row needs modelprompt and answer", field="modelprompt")
    payload = read_payload_field(row.get("answer"))
    answer, reasoning, kinds = payload.text, payload.reasoning, list(payload.block_types)
    fallback = [row[k] for k in ("answer_msg", "模型回复") if isinstance(row.get(k), str) and row[k].strip()]
    if not answer.strip() and fallback:
        answer = fallback[0]
    like = _int(row.get("like_cnt"), "like_cnt", default=0)
    unlike = _int(row.get("unlike_cnt"), "unlike_cnt", default=0)
    feedback: Feedback | None = "dislike" if unlike > 0 else "like" if like > 0 else None
    counters = {name: _int(row.get(key), key, default=0) for key, name in _PRODUCT_COUNTERS.items()
                if row.get(key) not in (None, "")}
    meta: dict[str, Any] = {k: row[k] for k in _PRODUCT_META_KEYS if row.get(k) not in (None, "")}
    if reasoning:
        meta["reasoning"] = reasoning[:MAX_TEXT_CHARS]
    if kinds:
        meta["answer_blocks"] = kinds
    row_id = _opt_id(row, "messageid", "message_id", "MessageID", "traceid", "traceID")
    user_id = _opt_id(row, "umessageid") or (f"{row_id}:user" if row_id else None)
    asst_id = _opt_id(row, "amessageid") or (f"{row_id}:assistant" if row_id else None)
    user = Turn(conversation_id=cid, turn_index=2 * convidx, role="user", regeneration_index=regen,
                content=_text(row.get("modelprompt"), "modelprompt"), message_id=user_id,
                created_at=parse_timestamp(row.get("promptcreatetime"), "promptcreatetime"))
    return [user, Turn(
        conversation_id=cid, turn_index=2 * convidx + 1, role="assistant", content=answer[:MAX_TEXT_CHARS],
        created_at=parse_timestamp(row.get("answercreatetime"), "answercreatetime"),
        feedback=feedback, regeneration_index=regen, message_id=asst_id, counters=counters, meta=meta,
    )]


def _conversation_id(row: Mapping[str, Any], messages: Any) -> str:
    digest = hashlib.sha1(orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return _opt_id(row, "conversation_id", "id", "cid", "conversation_hash") or f"conv-{digest[:16]}"


def _from_message_list(row: Mapping[str, Any], key: str, role_key: str, text_key: str) -> list[Turn]:
    messages = row.get(key)
    if not isinstance(messages, list):
        raise DataError("must be a list of messages", field=key)
    cid = _conversation_id(row, messages)
    turns: list[Turn] = []
    for position, message in enumerate(messages):
        where = f"{key}[{position}]"
        if not isinstance(message, dict):
            raise DataError("must be an object", field=where)
        role = _role(message.get(role_key), f"{where}.{role_key}")
        if role is None:
            continue
        if text_key not in message:
            raise DataError("is required", field=f"{where}.{text_key}")
        turns.append(Turn(
            conversation_id=cid, turn_index=len(turns), role=role,
            content=_text(message[text_key], f"{where}.{text_key}"),
            created_at=parse_timestamp(message.get("created_at", message.get("timestamp")), f"{where}.time"),
            feedback=normalize_feedback(message.get("feedback"), f"{where}.feedback"),
            message_id=_opt_id(message, "id", "message_id"),
        ))
    return turns


def parse_messages(row: Mapping[str, Any]) -> list[Turn]:
    """``{"messages": [{"role", "content"}, ...]}`` -> Turns numbered 0, 1, ... (system messages skipped)."""
    return _from_message_list(row, "messages", "role", "content")


def parse_sharegpt(row: Mapping[str, Any]) -> list[Turn]:
    """``{"conversations": [{"from", "value"}, ...]}`` -> Turns numbered 0, 1, ... (system skipped)."""
    return _from_message_list(row, "conversations", "from", "value")


ADAPTERS: dict[str, Callable[[Mapping[str, Any]], list[Turn]]] = {
    "canonical": parse_canonical, "product": parse_product, "messages": parse_messages,
    "sharegpt": parse_sharegpt,
}


def detect_format(row: Mapping[str, Any]) -> str:
    """Which adapter reads this row: canonical, product, messages or sharegpt."""
    if isinstance(row.get("messages"), list):
        return "messages"
    if isinstance(row.get("conversations"), list):
        return "sharegpt"
    if isinstance(row.get("outputs"), list) or ("cid" in row and any(k in row for k in _PRODUCT_KEYS)):
        return "product"
    if "conversation_id" in row and "role" in row:
        return "canonical"
    raise DataError(
        "unrecognised row shape", hint="expected a canonical turn, a product-export row, or a messages / "
        "ShareGPT conversation; pass --log-format to choose the adapter",
    )


def check_format(fmt: str) -> str:
    """``fmt`` if it names a format (or auto), else ConfigError."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown log format '{fmt}'; choose one of {', '.join(FORMATS)}")
    return fmt


def _invalid_value(exc: ValidationError) -> DataError:
    """A backstop for a value our adapters let through and Turn refuses; it names the field, never the value."""
    loc = ".".join(str(p) for p in exc.errors()[0]["loc"]) if exc.errors() else None
    return DataError("has an invalid value", field=loc or None)


def turn_of_fields(fields: dict[str, Any]) -> Turn:
    """The Turn of `canonical_fields`, with `parse_row`'s errors."""
    try:
        return Turn(**fields)
    except ValidationError as exc:
        raise _invalid_value(exc) from None


def parse_row_fields(row: Any, fmt: str = "auto") -> list[Turn] | dict[str, Any] | None:
    """`parse_row`, except that a canonical row gives its `canonical_fields` (None for a skipped row) and no Turn."""
    if not isinstance(row, dict):
        raise DataError(f"a row must be a JSON object, got {type(row).__name__}")
    name = detect_format(row) if check_format(fmt) == "auto" else fmt
    if name == "canonical":
        return canonical_fields(row)
    try:
        return ADAPTERS[name](row)
    except ValidationError as exc:  # our adapters check types first; this is a backstop without values
        raise _invalid_value(exc) from None


def parse_row(row: Any, fmt: str = "auto") -> list[Turn]:
    """Any supported row -> Turns, with the format detected per row unless ``fmt`` names one."""
    parsed = parse_row_fields(row, fmt)
    if isinstance(parsed, dict):
        return [turn_of_fields(parsed)]
    return [] if parsed is None else parsed
