"""Non-ASCII texts' name cues and sign-off phrases are searched in their UTF-8 bytes (offsets mapped back), and
the URL and e-mail marks (``://``, ``www.`` in any case, ``@``) in the same pass as the sign-off phrases: each
must agree with the str formulation it replaced."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from test_deid_names_fast import PIECES, plain_find_names

from uxbench.mining import deid_names as n
from uxbench.mining import deid_rules as r

ODD = ["é", "张", "😀", "\u212a", "İ", "ſ", "’", "I’m Ann", "Thanks,\n张伟", "Dear Zoë,", "Regards,\nÉmile",
       "谢谢\nBest,\nAl", "\u212aind regards,\nBob", "thanKs\nTom", "ＷＷＷ.", "ẞ", "Σ", "Name：张三",
       "My name is José"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from([*PIECES, *ODD]), max_size=10),
       st.lists(st.sampled_from([" ", "\n", "", ". ", "é", "张"]), min_size=10, max_size=10))
def test_names_of_non_ascii_texts_equal_the_rules_run_everywhere(parts: list[str], joins: list[str]) -> None:
    text = "".join(part + join for part, join in zip(parts, joins, strict=False))
    assert n.find_names(text) == plain_find_names(text)


def test_names_on_written_non_ascii_cases() -> None:
    for text in ["张先生 Dear Zoë,\nRegards,\nÉmile", "😀 My name is Rosalind Ashwood 😀", "é\nBest regards,\nAnn Lee",
                 "\u212a Thanks,\nTom", "İ Regards,\nTom", "I’m Tyler Jackson é", "", "é", "姓名：林夜\nName: Al"]:
        for variant in (text, f"ü{text}", f"{text}\n{text}"):
            assert n.find_names(variant) == plain_find_names(variant), variant


def test_only_the_listed_characters_lower_to_ascii() -> None:
    odd = {chr(c) for c in range(0x80, sys.maxunicode + 1) if any(ch.isascii() for ch in chr(c).lower())}
    assert odd == set(n._LOWER_TO_ASCII)


def test_char_offsets_of_byte_offsets() -> None:
    text = "a张😀b\u212ac é"
    data = text.encode()
    wanted = {len(text[:i].encode()): i for i in range(len(text) + 1)}
    assert n._char_offsets(data, list(wanted)) == wanted
    assert n._char_offsets(data, []) == {}
    assert n._char_offsets(data, [len(data), 0, len(data)]) == {0: 0, len(data): len(text)}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*n._ZH_CUES, "张", "x", " ", "—", "-", "－", "é", "İ", "长总", "😀"]), max_size=8))
def test_the_chinese_cue_bytes_pass_finds_a_cue_where_the_substring_tests_do(parts: list[str]) -> None:
    text = "".join(parts)
    assert bool(n._ZH_CUE_BYTES.find_matches_as_indexes(text.encode())) == any(cue in text for cue in n._ZH_CUES)


def test_only_w_and_dot_lower_to_w_or_dot() -> None:
    for code in range(sys.maxunicode + 1):
        lowered = chr(code).lower()
        if "w" in lowered or "." in lowered:
            assert chr(code) in "Ww." and len(lowered) == 1


def _marks(text: str) -> dict[bytes, int]:
    """The marks `deid_rules._scan` reads off `deid_names.lower_cues`, with the byte offset of each one's first."""
    found: dict[bytes, int] = {}
    for which, at, _ in n.lower_cues(text.encode()):
        if which >= n.PHRASES:
            found.setdefault(n.MARKS[which - n.PHRASES], at)
    return found


def _url_mark(text: str) -> bool:
    marks = _marks(text)
    return b"://" in marks or b"www." in marks


MARKED = ["www.", "WwW.", "://", "@", ":/", "ww.", "w.", "Best regards", "THANKS", "yours", "www", "/", ":"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*MARKED, "ＷＷＷ.", "张", " ", "İ", "\u212a", "ſ", "x", "\n", "é"]), max_size=10))
def test_the_marks_equal_the_substring_tests(parts: list[str]) -> None:
    text = "".join(parts)
    assert _url_mark(text) == ("://" in text or "www." in text.lower())
    assert _marks(text).get(b"@", -1) == text.encode().find(b"@")


def test_the_marks_on_written_cases() -> None:
    for text in ["", "www.", "WwW.", "ww.", "w.w.w.", "wwww", "张WWW.x", "ＷＷＷ.", "xwww.", "www", "WW W.", "a://b",
                 "best://", "Thanks@x", "yours@www.x", "regards:// www.x", "é@", "@@"]:
        assert _url_mark(text) == ("://" in text or "www." in text.lower()), text
        assert _marks(text).get(b"@", -1) == text.encode().find(b"@"), text


def test_no_mark_can_overlap_a_sign_off_phrase() -> None:
    # Two occurrences overlap only if one holds the other, or a suffix of one is a prefix of the other: then
    # a leftmost-longest search may report one and skip the other. No mark and phrase can, so each is found.
    phrases = [phrase.encode() for phrase in n._SIGNOFF_LITERALS]
    assert len(phrases) == n.PHRASES
    for mark in n.MARKS:
        for other in [*phrases, *(m for m in n.MARKS if m != mark)]:
            assert mark not in other and other not in mark
            assert not any(mark.endswith(other[:k]) or other.endswith(mark[:k]) for k in range(1, len(other) + 1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*MARKED, *n._SIGNOFF_LITERALS, "BEST", " ", "\n", "w", "s"]), max_size=10))
def test_the_phrases_are_found_as_without_the_marks(parts: list[str]) -> None:
    text = "".join(parts).encode()
    alone = n._SIGNOFF_STARTS.find_matches_as_indexes(text.lower().decode())
    assert [hit for hit in n.lower_cues(text) if hit[0] < n.PHRASES] == alone


@given(st.text(alphabet="0123456789a٣０𝟘 .:\n", max_size=12))
def test_has_digit_equals_the_regex_test(text: str) -> None:
    assert r._has_digit(text) == (r._DIGIT.search(text) is not None)


def test_has_digit_on_written_cases() -> None:
    for text in ["", "abc", "a9", "0", "x\n5", "١", "٣ x", "０", "𝟘", "²", "½", "ab c"]:
        assert r._has_digit(text) == (r._DIGIT.search(text) is not None), text


@given(st.binary(max_size=16).map(lambda raw: raw.translate(r._SHAPE)))
def test_the_ipv4_shape_opens_with_digit_dot_digit(shape: bytes) -> None:
    if r._IPV4_SHAPE.search(shape):
        assert b"0.0" in shape
