"""Log adapters: canonical, product export, messages and ShareGPT rows -> Turns."""

from __future__ import annotations

from datetime import timedelta, timezone

import orjson
import pytest

from uxbench.errors import ConfigError, DataError
from uxbench.mining.logformat import detect_format, normalize_feedback, parse_row

UTC = timezone.utc


def canonical(**over: object) -> dict[str, object]:
    row: dict[str, object] = {"conversation_id": "c1", "turn_index": 1, "role": "assistant", "content": "hi"}
    row.update(over)
    return row


@pytest.mark.parametrize(
    ("value", "expected"),
    [("like", "like"), ("Thumbs-Up", "like"), ("thumbs_down", "dislike"), (1, "like"), (-1, "dislike"),
     ("-1", "dislike"), ("dislike", "dislike"), (0, None), ("", None), (None, None),
     ("THUMBSDOWN", "dislike")],
)
def test_feedback_spellings(value: object, expected: str | None) -> None:
    assert normalize_feedback(value) == expected


def test_feedback_rejects_booleans_and_unknown_words() -> None:
    for value in (True, "meh"):
        with pytest.raises(DataError):
            normalize_feedback(value)


def test_canonical_row_full() -> None:
    [turn] = parse_row(canonical(
        conversation_id=42, turn_index="3", role="Assistant", created_at=1714557600,
        feedback="thumbs_down", regeneration_index=2, message_id="m9",
        counters={"copy": 1, "share": "2"}, metadata={"model": "x"},
    ))
    assert turn.conversation_id == "42" and turn.turn_index == 3 and turn.role == "assistant"
    assert turn.feedback == "dislike" and turn.regeneration_index == 2 and turn.message_id == "m9"
    assert turn.counters == {"copy": 1, "share": 2} and turn.meta == {"model": "x"}


def test_canonical_regenerated_flag_and_content_parts() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image"}]
    [turn] = parse_row(canonical(regenerated=True, content=parts))
    assert turn.regeneration_index == 1 and turn.meta["regenerated"] is True and turn.content == "a"


def test_canonical_system_row_is_skipped() -> None:
    assert parse_row(canonical(role="system")) == []


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (canonical(role="narrator"), "role"),
        ({k: v for k, v in canonical().items() if k != "content"}, "content"),
        (canonical(turn_index=-1), "turn_index"),
        (canonical(turn_index="first"), "turn_index"),
        (canonical(conversation_id=""), "conversation_id"),
        (canonical(regenerated="yes"), "regenerated"),
        (canonical(counters=[1]), "counters"),
        (canonical(content=5), "content"),
    ],
)
def test_canonical_bad_rows_name_the_field(row: dict[str, object], field: str) -> None:
    with pytest.raises(DataError) as info:
        parse_row(row, "canonical")
    assert info.value.field == field


def product_row(**over: object) -> dict[str, object]:
    answer = {"content": [
        {"type": "deepSearch", "msg": {"steps": [{"title": "搜索: 天气"}, {"text": "思考中"}]}},
        {"type": "think", "msg": "先想一想"},
        {"type": "searchGuid", "items": [{"url": "https://example.com"}]},
        {"type": "text", "msg": "北京今天"},
        {"type": "text", "msg": "晴。"},
        {"type": "image", "url": "https://img"},
    ]}
    row: dict[str, object] = {
        "cid": "p1", "convidx": 2, "regenerateidx": 0, "modelprompt": "北京天气",
        "answer": orjson.dumps(answer).decode(), "promptcreatetime": "2024-05-01 10:00:00",
        "answercreatetime": "2024-05-01 10:00:07", "like_cnt": 0, "unlike_cnt": "1", "copy_cnt": 2,
        "click_regen_cnt": 1, "stopgenerate": 0, "messageid": "row7", "atom_ability": "AI搜索",
        "age": "25-30", "openid": "o-123", "gender": "f",
    }
    row.update(over)
    return row


def test_product_row_gives_user_and_assistant_turns() -> None:
    user, assistant = parse_row(product_row())
    assert (user.role, user.turn_index, user.content) == ("user", 4, "北京天气")
    assert (assistant.role, assistant.turn_index, assistant.content) == ("assistant", 5, "北京今天晴。")
    assert assistant.created_at is not None and user.created_at is not None
    assert assistant.created_at - user.created_at == timedelta(seconds=7)
    assert assistant.feedback == "dislike"
    assert assistant.counters == {"copy": 2, "regenerate_clicks": 1, "stop_generate": 0}
    assert user.message_id == "row7:user" and assistant.message_id == "row7:assistant"
    assert "搜索: 天气" in assistant.meta["reasoning"] and "先想一想" in assistant.meta["reasoning"]
    assert assistant.meta["atom_ability"] == "AI搜索"
    assert not {"age", "openid", "gender"} & set(assistant.meta) and user.meta == {}


def test_product_variants() -> None:
    _, liked = parse_row(product_row(unlike_cnt=0, like_cnt=3, answer=None, answer_msg="备用回复",
                                     regenerateidx=None, regeneateidx=2, umessageid="u1", amessageid="a1"))
    assert liked.feedback == "like" and liked.content == "备用回复" and liked.regeneration_index == 2
    assert liked.message_id == "a1"
    _, plain = parse_row(product_row(answer="{not json", unlike_cnt=0))
    assert plain.content == "{not json" and plain.feedback is None
    empty = orjson.dumps({"content": []}).decode()
    _, fallback = parse_row(product_row(answer=empty, **{"模型回复": "旧字段"}))
    assert fallback.content == "旧字段"


def test_product_outputs_wrapper_and_bad_rows() -> None:
    turns = parse_row({"outputs": [product_row(), product_row(convidx=3)]})
    assert [t.turn_index for t in turns] == [4, 5, 6, 7]
    with pytest.raises(DataError) as info:
        parse_row(product_row(convidx=None))
    assert info.value.field == "convidx"
    with pytest.raises(DataError) as info:
        parse_row(product_row(like_cnt="many"))
    assert info.value.field == "like_cnt"


def test_messages_and_sharegpt() -> None:
    row = {"messages": [{"role": "system", "content": "be nice"}, {"role": "user", "content": "q"},
                        {"role": "assistant", "content": "a", "feedback": "dislike", "id": "m2"}]}
    turns = parse_row(row)
    assert [(t.turn_index, t.role) for t in turns] == [(0, "user"), (1, "assistant")]
    assert turns[1].feedback == "dislike" and turns[1].message_id == "m2"
    assert all(t.created_at is None for t in turns)
    assert turns[0].conversation_id.startswith("conv-")
    assert parse_row(row)[0].conversation_id == turns[0].conversation_id  # a content hash: stable
    other = parse_row({"messages": [{"role": "user", "content": "different"}]})
    assert other[0].conversation_id != turns[0].conversation_id
    pairs = [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]
    share = parse_row({"id": "s1", "conversations": pairs})
    assert [(t.conversation_id, t.role, t.content) for t in share] == [
        ("s1", "user", "q"), ("s1", "assistant", "a")]
    with pytest.raises(DataError) as info:
        parse_row({"conversations": [{"from": "human"}]})
    assert info.value.field == "conversations[0].value"


def test_detect_format_and_override() -> None:
    assert detect_format(canonical()) == "canonical"
    assert detect_format(product_row()) == "product"
    assert detect_format({"outputs": []}) == "product"
    assert detect_format({"messages": []}) == "messages"
    assert detect_format({"conversations": []}) == "sharegpt"
    with pytest.raises(DataError):
        detect_format({"text": "hello"})
    with pytest.raises(DataError):
        parse_row(canonical(), "product")  # forced adapter: a canonical row has no cid
    with pytest.raises(ConfigError):
        parse_row(canonical(), "csv")
    with pytest.raises(DataError):
        parse_row(["not", "a", "dict"])
