"""The digit rules' newer gates lose nothing: the IPv6 tests run only where one pass over the shape finds "::" or
seven colons between hex groups (any letter there), and the card, ID and phone rules only on texts with 8 or more
digits: on generated texts, whenever the old test holds (or a rule finds a span) the gate holds too."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from uxbench.mining import deid_rules as r

HEX = [*"0123456789abcdefABCDEF:", "::", "٣", "０", "g", "G", ".", " ", "张", "\n", "fe80::1", "1:2:3:4:5:6:7:8"]


def _old_ipv6_test(text: str) -> bool:
    return bool(("::" in text and r._IPV6_ZIPPED_REVERSED.search(text[::-1])) or r._IPV6_FULL.search(text))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(HEX), max_size=24))
def test_the_ipv6_shape_gate_holds_wherever_the_old_tests_do(parts: list[str]) -> None:
    text = "".join(parts)
    if _old_ipv6_test(text):
        assert r._IPV6_SHAPE.search(r._shape(text)), text


def test_the_ipv6_shape_gate_on_written_cases() -> None:
    for text in ["fe80::1", "::", "a::b", "1:2:3:4:5:6:7:8", "ab:cd:ef:12:34:56:78:9a", "x::", "张::1",
                 "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "1:2:3:4:5:6:7", "std::vector"]:
        assert bool(r._IPV6_SHAPE.search(r._shape(text))) >= _old_ipv6_test(text), text


DIGITS = [*"0123456789 -.()+", "٣", "０", "x", "Card", "#", "4111", "1381234", "5678"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(DIGITS), max_size=14))
def test_card_id_and_phone_spans_need_eight_digits(parts: list[str]) -> None:
    text = "".join(parts)
    shape = r._shape(text)
    digits = shape.count(b"0")
    if digits < 8:
        joined = shape.translate(None, r._SEPARATORS)
        assert r._card_spans(text, joined) == [] and r._phone_spans(text, shape, joined, digits) == [], text
        assert not [m for m in r.CN_ID.finditer(text) if r.cn_id_valid(m.group())], text
