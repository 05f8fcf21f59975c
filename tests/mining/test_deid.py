"""De-identification: detectors, validated IDs and cards, pseudonyms, change records, value scan."""

from __future__ import annotations

import gzip
import json
from datetime import date
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uxbench.errors import ConfigError
from uxbench.mining.deid import (
    MIN_SALT_CHARS,
    SALT_ENV,
    ChangeRecord,
    deidentify_session,
    redact_text,
    resolve_key,
    scan_for_values,
    value_hash,
)
from uxbench.mining.deid_rules import cn_id_valid, find_pii, luhn_valid
from uxbench.mining.types import Session, Turn

SALT = b"test-salt"


def make_id(first17: str) -> str:
    """A resident ID with its ISO 7064 MOD 11-2 check character (computed here, independently)."""
    weights = [2 ** (17 - i) % 11 for i in range(17)]
    remainder = sum(int(d) * w for d, w in zip(first17, weights, strict=True)) % 11
    return first17 + "10X98765432"[remainder]


def bad_check(valid: str) -> str:
    return valid[:17] + ("0" if valid[17] != "0" else "1")


def make_card(prefix: str, length: int) -> str:
    """A Luhn-valid card number (computed here)."""
    body = prefix + "7" * (length - len(prefix) - 1)
    for check in "0123456789":
        digits = [int(c) for c in body + check]
        total = sum(digits[-1::-2]) + sum(sum(divmod(2 * d, 10)) for d in digits[-2::-2])
        if total % 10 == 0:
            return body + check
    raise AssertionError("unreachable")


ID_A = make_id("11010519491231002")  # a well-known sample pattern: ends in X
ID_B = make_id("44030419900307351")
CARD_A = make_card("622202", 19)
CARD_B = make_card("4111", 16)


def kinds(text: str) -> list[tuple[str, str]]:
    return [(s.type, text[s.start:s.end]) for s in find_pii(text)]


def test_generated_ids_and_cards_are_what_the_validators_expect() -> None:
    assert ID_A.endswith("X") and cn_id_valid(ID_A) and cn_id_valid(ID_B)
    assert not cn_id_valid(bad_check(ID_A)) and not cn_id_valid(bad_check(ID_B))
    assert not cn_id_valid(make_id("11010519491331002"))  # month 13
    assert not cn_id_valid(make_id("99010519491231002"))  # no such region
    assert luhn_valid(CARD_A) and luhn_valid(CARD_B) and luhn_valid("4111111111111111")
    assert not luhn_valid(CARD_B[:-1] + str((int(CARD_B[-1]) + 1) % 10))


def test_ids_valid_and_invalid() -> None:
    text = f"身份证{ID_A}，另一个{bad_check(ID_B)}，小写{ID_A.lower()}"
    found = kinds(text)
    assert ("ID", ID_A) in found and ("ID", ID_A.lower()) in found
    assert all(bad_check(ID_B) not in value for _, value in found)


def test_cards_luhn_and_grouping() -> None:
    grouped = " ".join(CARD_B[i:i + 4] for i in range(0, 16, 4))
    invalid = CARD_B[:-1] + str((int(CARD_B[-1]) + 1) % 10)
    text = f"card {grouped}, 卡号{CARD_A}, wrong {invalid}"
    assert kinds(text) == [("CARD", grouped), ("CARD", CARD_A)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("手机13812345678", [("PHONE", "13812345678")]),
        ("电话 +86 139-1234-5678 或 0086 13912345678",
         [("PHONE", "+86 139-1234-5678"), ("PHONE", "0086 13912345678")]),
        ("座机010-12345678", [("PHONE", "010-12345678")]),
        ("call +1 (212) 736-4181 or 212-736-4181",
         [("PHONE", "+1 (212) 736-4181"), ("PHONE", "212-736-4181")]),
        ("UK +44 20 7946 0958, E.164 +14155552671",
         [("PHONE", "+44 20 7946 0958"), ("PHONE", "+14155552671")]),
        ("mail Jane.Doe+x@Example.co.uk now", [("EMAIL", "Jane.Doe+x@Example.co.uk")]),
        ("联系zhang_san@qq.com谢谢", [("EMAIL", "zhang_san@qq.com")]),
        ("ip 192.168.1.23 and 81.2.69.160.", [("IP", "192.168.1.23"), ("IP", "81.2.69.160")]),
        ("v6 2a02:c7f:1234::8a2e:370:7334 end", [("IP", "2a02:c7f:1234::8a2e:370:7334")]),
        ("地址：浙江省杭州市西湖区文三路90号3栋2单元501室，谢谢",
         [("ADDRESS", "浙江省杭州市西湖区文三路90号3栋2单元501室")]),
        ("我家在南京东路100号", [("ADDRESS", "南京东路100号")]),
        ("寄到阳光小区3栋2单元501室", [("ADDRESS", "阳光小区3栋2单元501室")]),
        ("I live at 127 Hollis Street, Apt 4B, Springfield, IL 62704.",
         [("ADDRESS", "127 Hollis Street, Apt 4B, Springfield, IL 62704")]),
        ("reset https://example.com/reset?token=abc123&x=1. ok", [("URL", "https://example.com/reset?token=abc123&x=1")]),
        ("share www.chat.example/s/550e8400-e29b-41d4-a716-446655440000", [
            ("URL", "www.chat.example/s/550e8400-e29b-41d4-a716-446655440000")]),
        ("login https://bob:hunter2@host.example/x", [("URL", "https://bob:hunter2@host.example/x")]),
        ("see https://x.example/?email=a@b.example", [("URL", "https://x.example/?email=a@b.example")]),
    ],
)
def test_detects(text: str, expected: list[tuple[str, str]]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "价格是1999元，2024年5月1日，共12345678件",
        "订单号：20240501123456789，快递单号 SF1234567890123",
        f"订单号：{make_card('62', 19)}",  # Luhn-valid but labelled as an order number
        "时间戳1714557600123，版本号 1.2.3.4, version 10.0.0.1",
        "localhost 127.0.0.1, mask 255.255.255.0, any 0.0.0.0, loopback ::1",
        "at 12:30:45, std::vector, a::b, MAC 00:1a:2b:3c:4d:5e",
        "docs https://docs.python.org/3/library/re.html#re.sub and https://example.com/how-to-install-python-3",
        "Top 10 Best Street Foods in Asia; 3 ways to cross the road",
        "北京市朝阳区很大，中山路很长",
        "ISBN 978-3-16-148410-0, 3.1415926535",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert kinds(text) == []


def session_with_pii() -> Session:
    return Session(
        conversation_id="conv-1",
        turns=[
            Turn(conversation_id="conv-1", turn_index=0, role="user",
                 content=f"我的电话13812345678，邮箱a.b@mail.cn，身份证{ID_A}",
                 meta={"contact": {"phone": 13812345678, "note": "备用 139 1234 5678"}, "n": 3}),
            Turn(conversation_id="conv-1", turn_index=1, role="assistant", content="收到。"),
            Turn(conversation_id="conv-1", turn_index=2, role="user",
                 content="再说一次：138-1234-5678 和 A.B@MAIL.CN，卡号" + CARD_A),
        ],
        regenerated=[
            Turn(conversation_id="conv-1", turn_index=1, role="assistant", content="联系 13812345678"),
        ],
        meta={"note": "from 10.1.2.3"},
    )


def test_session_pseudonyms_are_consistent() -> None:
    cleaned, record = deidentify_session(session_with_pii(), SALT)
    first, _, third = cleaned.turns
    assert first.content == "我的电话[PHONE_1]，邮箱[EMAIL_1]，身份证[ID_1]"
    assert third.content == "再说一次：[PHONE_1] 和 [EMAIL_1]，卡号[CARD_1]"
    assert first.meta == {"contact": {"phone": "[PHONE_1]", "note": "备用 [PHONE_2]"}, "n": 3}
    assert cleaned.regenerated[0].content == "联系 [PHONE_1]"
    assert cleaned.meta == {"note": "from [IP_1]"}
    assert record.counts() == {"URL": 0, "EMAIL": 2, "ID": 1, "CARD": 1, "PHONE": 5, "IP": 1, "ADDRESS": 0, "NAME": 0}
    change = record.changes[0]
    where = (change.type, change.turn_index, change.field, change.start, change.end)
    assert where == ("PHONE", 0, "content", 4, 15)
    assert change.value_hash == value_hash("PHONE", "13812345678", SALT)
    fields = {c.field for c in record.changes}
    assert fields >= {"meta.contact.phone", "meta.contact.note", "session.meta.note"}
    assert any(c.regenerated for c in record.changes)


def test_record_never_holds_an_original_value() -> None:
    originals = ["13812345678", "138-1234-5678", "a.b@mail.cn", ID_A, CARD_A, "10.1.2.3", "139 1234 5678"]
    cleaned, record = deidentify_session(session_with_pii(), SALT)
    dumped = record.model_dump_json() + cleaned.model_dump_json()
    assert not [v for v in originals if v in dumped]
    assert ChangeRecord.model_validate_json(record.model_dump_json()) == record


def test_hashes_depend_on_salt_and_numbering_restarts_per_conversation() -> None:
    session = session_with_pii()
    other = session.model_copy(update={"conversation_id": "conv-2"})
    (s1, r1), (s2, r2) = deidentify_session(session, SALT), deidentify_session(other, SALT)
    assert s1.turns == [t for t in s2.turns]  # same text -> same placeholders in each conversation
    assert [c.value_hash for c in r1.changes] == [c.value_hash for c in r2.changes]
    _, r3 = deidentify_session(session, b"another-salt")
    assert r3.changes[0].value_hash != r1.changes[0].value_hash
    with pytest.raises(ConfigError):
        deidentify_session(session, "")


def test_clean_session_is_unchanged() -> None:
    session = Session(conversation_id="c", turns=[Turn(conversation_id="c", turn_index=0, role="user",
                                                       content="今天天气怎么样？")])
    cleaned, record = deidentify_session(session, SALT)
    assert cleaned == session and record.changes == []


def test_redact_text() -> None:
    assert redact_text("call 13812345678 now") == "call [PHONE] now"


def test_key_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SALT_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    first = resolve_key(tmp_path / "out")
    assert first == resolve_key(tmp_path / "out") == resolve_key(None) and len(first) == 64
    assert (tmp_path / "config" / "uxbench" / "deid.key").stat().st_mode & 0o077 == 0
    assert not (tmp_path / "out").exists()  # nothing under the output
    monkeypatch.setenv(SALT_ENV, "mine-0123456789a")
    assert resolve_key(tmp_path / "out") == b"mine-0123456789a"


def test_scan_for_values_finds_every_encoding(tmp_path: Path) -> None:
    values = ["13812345678", "张三丰", "nobody@nowhere.example"]
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "plain.jsonl").write_bytes(orjson.dumps({"t": "x 13812345678"}) + b"\n")
    (tmp_path / "out" / "ascii.json").write_text(json.dumps({"name": "张三丰"}))  # \u escapes
    with gzip.open(tmp_path / "out" / "z.jsonl.gz", "wb") as handle:
        handle.write(b"pad " * 100_000 + "张三丰".encode())
    pq.write_table(pa.Table.from_pylist([{"a": "clean"}, {"a": "to nobody@nowhere.example"}]),
                   tmp_path / "out" / "t.parquet")
    (tmp_path / "out" / "clean.txt").write_text("[PHONE_1] [EMAIL_1]")
    hits = scan_for_values([tmp_path / "out"], values)
    found = sorted({(Path(h.path).name, h.value_index) for h in hits})
    assert found == [("ascii.json", 1), ("plain.jsonl", 0), ("t.parquet", 2), ("z.jsonl.gz", 1)]
    assert all(v not in h.model_dump_json() for h in hits for v in values)


def test_deidentified_output_passes_the_scan(tmp_path: Path) -> None:
    cleaned, record = deidentify_session(session_with_pii(), SALT)
    (tmp_path / "sessions.jsonl").write_text(cleaned.model_dump_json() + "\n")
    (tmp_path / "changes.jsonl").write_text(record.model_dump_json() + "\n")
    originals = ["13812345678", "138-1234-5678", "139 1234 5678", "a.b@mail.cn", "A.B@MAIL.CN", ID_A,
                 CARD_A, "10.1.2.3"]
    assert scan_for_values([tmp_path], originals) == []


@settings(max_examples=150, deadline=None)
@given(
    region=st.sampled_from(["11", "31", "44", "51", "65"]),
    rest=st.integers(0, 9999).map(lambda n: f"{n:04d}"),
    born=st.dates(min_value=date(1920, 1, 1), max_value=date(2020, 12, 31)),
    seq=st.integers(0, 999).map(lambda n: f"{n:03d}"),
    left=st.sampled_from(["身份证号", "ID: ", "号码是", ""]),
    right=st.sampled_from(["。", " thanks", "，请核对", ""]),
)
def test_every_valid_id_is_found_and_a_wrong_check_never(
    region: str, rest: str, born: date, seq: str, left: str, right: str
) -> None:
    valid = make_id(f"{region}{rest}{born:%Y%m%d}{seq}")
    assert kinds(f"{left}{valid}{right}") == [("ID", valid)]
    assert all(t != "ID" for t, _ in kinds(f"{left}{bad_check(valid)}{right}"))


@settings(max_examples=100, deadline=None)
@given(number=st.integers(13_000_000_000, 19_999_999_999), sep=st.sampled_from(["", " ", "-"]))
def test_mobiles_never_survive(number: int, sep: str) -> None:
    digits = str(number)
    if digits[1] in "012":  # not a mobile prefix (13-19)
        return
    shown = sep.join([digits[:3], digits[3:7], digits[7:]])
    session = Session(conversation_id="c", turns=[
        Turn(conversation_id="c", turn_index=0, role="user", content=f"电话{shown}，谢谢")])
    cleaned, _ = deidentify_session(session, SALT)
    assert cleaned.turns[0].content == "电话[PHONE_1]，谢谢"


@pytest.mark.parametrize("salt", ["a", "short-salt", "fifteen-chars-x"])
def test_a_short_key_is_refused_with_the_minimum(salt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression: UXBENCH_DEID_SALT=a was accepted, and the seeded phone numbers came back from
    # deid_changes.jsonl alone by trying the keys and the numbers.
    monkeypatch.setenv(SALT_ENV, salt)
    with pytest.raises(ConfigError, match=f"at least {MIN_SALT_CHARS}"):
        resolve_key(None)


def test_a_repeated_text_gets_the_same_spans_in_a_list_of_its_own() -> None:
    from uxbench.mining import deid_rules

    text = "Call 13812345678 or mail cerys.weetch@fastmail.co.uk. My name is Rosalind Ashwood."
    long_text = text + " filler" * (deid_rules._KEPT_MAX_CHARS // 7)  # past the kept length: scanned each time
    for value in (text, long_text):
        first = find_pii(value)
        first.append(first[0])  # a caller's change to its list does not reach the next caller
        again = find_pii("".join(list(value)))  # an equal text, another object
        assert again == deid_rules._scan(value) and again is not first
        assert [s.type for s in again] == ["PHONE", "EMAIL", "NAME"]
