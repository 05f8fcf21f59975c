"""find_pii's gates (cheap tests that let a detector's pattern run only where it can match) lose no span:
find_pii equals the same detectors run on every text without gates, on hostile generated texts."""

from __future__ import annotations

import ipaddress
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from uxbench.mining import deid_names as names
from uxbench.mining import deid_rules as r


def ungated_find_pii(text: str) -> list[r.PiiSpan]:
    """Every pattern on every text, with find_pii's filters and overlap rule."""
    found = []
    for match in r.URL.finditer(text):
        value = match.group().rstrip(r._URL_TRAIL)
        if r.url_is_personal(value):
            found.append(r.PiiSpan("URL", match.start(), match.start() + len(value), value))
    found += [r.PiiSpan("EMAIL", m.start(), m.end(), m.group().lower()) for m in r.EMAIL.finditer(text)]
    found += names.find_names(text)  # the name rules have gates of their own, checked below
    if not r._DIGIT.search(text):
        return _resolve(found, text)
    found += [r.PiiSpan("ID", m.start(), m.end(), m.group().upper())
              for m in r.CN_ID.finditer(text) if r.cn_id_valid(m.group())]
    for match in r.CARD.finditer(text):
        digits, before = r._digits(match.group()), text[max(0, match.start() - 16):match.start()]
        if (13 <= len(digits) <= 19 and digits[0] in "23456" and r.luhn_valid(digits)
                and not (r._ORDER_BEFORE.search(before) and not r._CARD_WORDS.search(before))):
            found.append(r.PiiSpan("CARD", match.start(), match.end(), digits))
    found += [r.PiiSpan("PHONE", m.start(), m.end(), r._digits(m.group())[-11:]) for m in r.PHONE_CN.finditer(text)]
    for pattern in (r.PHONE_LANDLINE, r.PHONE_NATIONAL, r.PHONE_INTL, r.PHONE_NANP):
        for match in pattern.finditer(text):
            digits = r._digits(match.group())
            if pattern is r.PHONE_NATIONAL and (not 9 <= len(digits) <= 12 or r.date_like(match.group())):
                continue
            if 8 <= len(digits) <= 15 or pattern is not r.PHONE_INTL:
                norm = r._landline_norm(digits) if pattern is r.PHONE_LANDLINE else digits
                found.append(r.PiiSpan("PHONE", match.start(), match.end(), norm))
    for match in r.IPV4.finditer(text):
        value = match.group()
        if not (value.startswith(("127.", "255.")) or value == "0.0.0.0"
                or r._VERSION_BEFORE.search(text[max(0, match.start() - 10):match.start()])):
            found.append(r.PiiSpan("IP", match.start(), match.end(), value))
    for match in r.IPV6.finditer(text):
        value = match.group()
        try:
            address = ipaddress.IPv6Address(value)
        except ValueError:
            continue
        groups = [g for g in value.split(":") if g]
        if not (address.is_loopback or address.is_unspecified) and (
                len(groups) >= 3 or (len(value) >= 6 and any(c.isdigit() for c in value))):
            found.append(r.PiiSpan("IP", match.start(), match.end(), address.compressed))
    found += [r.PiiSpan("ADDRESS", m.start(), m.end(), m.group()) for m in r.CN_STREET.finditer(text)]
    found += [r.PiiSpan("ADDRESS", m.start(), m.end(), m.group()) for m in r.CN_ESTATE.finditer(text)]
    for match in r.EN_ADDRESS.finditer(text):
        if match.group("rest") or not re.match(r"[ \t]+[A-Z][a-z]", text[match.end():]):
            found.append(r.PiiSpan("ADDRESS", match.start(), match.end(), " ".join(match.group().lower().split())))
    return _resolve(found, text)


def _resolve(found: list[r.PiiSpan], text: str) -> list[r.PiiSpan]:
    found = [span for span in found if not r.is_placeholder(text, span)]
    found.sort(key=lambda s: (s.start, -(s.end - s.start), r._RANK[s.type]))
    chosen: list[r.PiiSpan] = []
    for span in found:
        if not chosen or span.start >= chosen[-1].end:
            chosen.append(span)
    return chosen


# Values at the edge of each gate (one digit short, one separator more, another script's digits ...)
PIECES = [
    "+86 138 1234 5678", "0086-139-1234-5678", "138\u30001234\xa05678", "１３８１２３４５６７８", "13812345678",
    "010-12345678", "0755-1234567", "010 12345678", "+1 (555) 123-4567", "+44 20 7946 0958", "+1 234 5678",
    "+٤٤ ٢٠ ٧٩٤٦ ٠٩٥٨", "(555) 123-4567", "555.123.4567", "555-123-4567", "555-123\t4567", "4111 1111 1111 1111",
    "4111-1111-1111-111", "3782 822463 10005", "6222021234567890123", "11010519491231002X", "440304199003073516",
    "192.168.1.20", "version 1.2.3.4", "127.0.0.1", "10.0.0.1.5", "fe80::1", "::1", "2001:db8:0:0:1:0:0:1",
    "1:2:3:4:5:6:7", "std::vector", "a::b", "ab:cd::ef12", "::ffff:1.2.3.4", "123 Main Street", "12B  Elm Ave.",
    "9\xa0Oak Rd, Springfield, IL 62704", "10 Best Street Foods", "7 Elm St Apt 4",
    "北京市朝阳区建国路88号3栋2单元501室", "阳光小区3栋2单元501", "幸福花园B座", "南京路100-2号",
    "https://x.org/a?token=1", "WwW.site.cn/a?token=1", "4222222222222", "4222 2222 2222 2",
    "a.b@example.com", " @user", "x@y.co", "订单号6222021234567890123", "1", "0", "-", ".", ":", "+", "(", ")", " ",
    "020-8765-4321", "0755 2345 6789", "(010)62345678", "+86 20 8765 4321", "020 7946 0958", "01 23 45 67 89",
    "089/1234567", "(02) 9876 5432", "我叫张伟", "张先生", "my name is John Smith", "Dear Ms. Smith,", "——李娜",
]
ALPHABET = [*"0123456789 -.():+@/#xXaAfFgGzZ\t\n号栋座路楼", "\u3000", "\xa0", "٣", "０", "St", "Street"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.sampled_from(ALPHABET)), max_size=12))
def test_gates_lose_no_span(parts: list[str]) -> None:
    text = "".join(parts)
    assert r.find_pii(text) == ungated_find_pii(text)


def test_gates_lose_no_span_on_the_edge_pieces() -> None:
    for piece in PIECES:
        for text in (piece, f"x{piece}y", f"电话{piece}。", f" {piece} "):
            assert r.find_pii(text) == ungated_find_pii(text), text
