"""The premature-disclosure detector in zh and en: full-width digits, Chinese numerals, values split by spaces
and grouped, and a value given after the assistant asked (not flagged)."""

from __future__ import annotations

import pytest

from uxbench.sim.disclosure import check_fact, compile_value, first_user_mention, mentions
from uxbench.sim.numerals import arabic_numbers

ORDER = "20240517"


@pytest.mark.parametrize("text", [
    "我的订单号是２０２４０５１７",  # full-width digits
    "订单号：二〇二四〇五一七",  # Chinese numerals read digit by digit
    "订单 2024 0517，麻烦查一下",  # split by a space
    "单号是 2024-05-17",  # grouped with hyphens
    "我的订单号：二零二四 零五一七",  # numerals, split
    "My order number is 2024 0517.",
    "order #20,240,517 please",  # digit grouping
    "it's two zero two four zero five one seven",  # English digit words
])
def test_an_order_number_is_found_however_it_is_written(text: str) -> None:
    assert mentions(ORDER, text), text


@pytest.mark.parametrize("text", [
    "我想查一下订单",
    "订单号我等会儿再找",
    "my order is 120240517",  # a longer number that contains it is another number
    "I ordered 2024 items on 05/17",  # words between the parts
    "我在2024年\n\n0517 这个店买的",  # two numbers on different lines
])
def test_an_order_number_is_not_found_where_it_is_not(text: str) -> None:
    assert not mentions(ORDER, text), text


def test_values_of_other_kinds() -> None:
    assert compile_value("[PHONE_1]").kind == "placeholder"
    assert mentions("[PHONE_1]", "call me at [PHONE_1] tomorrow")
    assert not mentions("[PHONE_1]", "call me at [PHONE_12]")
    assert compile_value("2").kind == "short_number"
    assert mentions("2", "两个人") and mentions("2", "we are two adults") and mentions("2", "2 people")
    assert not mentions("2", "room 12") and not mentions("2", "version 2.5")
    assert mentions("张伟", "我叫张 伟") and not mentions("张伟", "我叫张三")
    assert mentions("New York", "flying to new-york next week") and not mentions("York", "Yorkshire pudding")
    assert mentions("50000", "预算大概5万") and mentions("50000", "about 50k")
    assert mentions("12345", "一万二千三百四十五")
    assert mentions("13812345678", "手机 138 1234 5678") and mentions("13812345678", "幺三八一二三四五六七八")
    assert mentions("AB-7731", "ticket ab 7731") and not mentions("AB-7731", "ticket 7731")


def test_numeral_rewriting() -> None:
    assert arabic_numbers("一百零五") == "105" and arabic_numbers("十二") == "12" and arabic_numbers("二十") == "20"
    assert arabic_numbers("三千万") == "30000000" and arabic_numbers("one hundred and twenty") == "120"
    assert arabic_numbers("one and two") == "1 and 2" and arabic_numbers("twenty-one") == "21"
    assert arabic_numbers("oh well") == "oh well"


@pytest.mark.parametrize("lang,opener,ask,answer", [
    ("zh", "我的快递一直没到，帮我看看", "好的，请提供一下您的订单号？", "订单号是二〇二四〇五一七"),
    ("en", "My parcel never arrived, can you help?", "Sure, what is your order number?", "It's 2024 0517."),
])
def test_a_value_given_after_the_request_is_not_flagged(lang: str, opener: str, ask: str, answer: str) -> None:
    turns = [("user", opener), ("assistant", ask), ("user", answer)]
    finding = check_fact("order_number", ORDER, "on_request", turns, requested_at=1)
    assert finding.verdict == "ok" and finding.first_said == 2, lang


@pytest.mark.parametrize("lang,opener", [
    ("zh", "我的快递一直没到，订单号２０２４ ０５１７，帮我看看"),
    ("en", "My parcel (order two zero two four zero five one seven) never arrived."),
])
def test_a_value_in_the_opener_is_premature(lang: str, opener: str) -> None:
    turns = [("user", opener), ("assistant", "What is your order number?"), ("user", "as I said")]
    finding = check_fact("order_number", ORDER, "on_request", turns, requested_at=1)
    assert finding.verdict == "premature" and finding.first_said == 0, lang
    assert "before the assistant asked" in finding.evidence


def test_policies_never_opening_after_turn_and_not_said() -> None:
    turns = [("user", "hi"), ("assistant", "hello"), ("user", "my pin is 4321"), ("assistant", "ok"),
             ("user", "bye")]
    assert check_fact("pin", "4321", "never", turns, None).verdict == "forbidden"
    assert check_fact("pin", "4321", "opening", turns, None).verdict == "ok"
    assert check_fact("pin", "4321", "after_turn:2", turns, None).verdict == "ok"  # the 2nd user turn is allowed
    assert check_fact("pin", "4321", "after_turn:3", turns, None).verdict == "premature"
    assert check_fact("pin", "4321", "on_request", turns, None).verdict == "premature"  # never asked
    assert check_fact("zip", "90210", "on_request", turns, None).verdict == "not_said"
    assert first_user_mention("hello", turns) is None  # only user turns count
