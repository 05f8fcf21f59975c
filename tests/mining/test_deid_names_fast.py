"""find_names tries each English name rule only where a match can start (one Aho-Corasick pass finds the cues);
it must find exactly what running every rule over the whole text finds (`plain_find_names`, the rules as
written), on hostile generated texts and on the written cases of the other de-identification tests."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from uxbench.mining import deid_names as n
from uxbench.mining.deid_types import PiiSpan


def plain_find_names(text: str) -> list[PiiSpan]:
    """Every name rule run over the whole text with finditer."""
    spans: list[PiiSpan] = []
    if not text.isascii() and any(cue in text for cue in n._ZH_CUES):
        for pattern in (n.ZH_INTRO, n.ZH_SURNAME, n.ZH_ADDRESS, n.ZH_FIELD, n.ZH_SIGNATURE, n.ZH_LETTER_CLOSE):
            for m in pattern.finditer(text):
                if pattern is n.ZH_INTRO and not n._zh_intro_ok(m):
                    continue
                if pattern is n.ZH_ADDRESS and m.group("name") in n._WORD_SURNAMES:
                    continue
                if pattern is n.ZH_FIELD and n.creative_block(text, m.start(), m.end()):
                    continue
                group = "signed" if pattern is n.ZH_LETTER_CLOSE and m.group("signed") else "name"
                spans.append(PiiSpan("NAME", m.start(group), m.end(group), m.group(group)))
    for pattern in (n.EN_INTRO, n.EN_TITLE, n.EN_DEAR, n.EN_SIGNOFF, n.EN_FIELD):
        for m in pattern.finditer(text):
            group = "inline" if pattern is n.EN_SIGNOFF and m.group("inline") else "name"
            if not n._en_ok(m.group(group)):
                continue
            if pattern is n.EN_FIELD and n.creative_block(text, m.start(), m.end()):
                continue
            spans.append(n._span(m, group))
    for m in n.EN_I_AM.finditer(text):
        group = "name" if m.group("name") else "single"
        if n._i_am_ok(m.group(group)):
            spans.append(n._span(m, group))
    return spans


PIECES = [
    "My name is Rosalind Ashwood", "my name's Tom", "Call me Ishmael.", "I am called Ann", "I'm called Bo",
    "Mr. O'Brien", "Mrs Smith", "Ms. Lee", "Miss Marple", "Dr Who", "Prof. McGonagall", "Mx Jones",
    "Dear Jeff,", "Dear Mr. Smith:", "Dear Sir,", "Regards,\nCerys Weetch", "Best regards,\n\nAnna Lee",
    "Thanks. Regards,\nTom", "Regards, Cerys Weetch", "BEST REGARDS,\nJOHN", "Cheers!\nBob", "Best,\nAl",
    "Name: Percival Thistlewood", "Full name: Ann Lee", "Plugin Name: Page", "Contact person: Bob",
    "Signed: Al", "First Name: Enter", "* Name: EmberBlaze\n* Type: Fire", "Race: Elf", "Character:",
    "I am Daisy Jones-Brown", "I'm Tyler Jackson", "Hi, I'm Daisy.", "Hello there, I am Eve!",
    "Good morning, I'm Ann", "I am Chinese American", "İ", "我叫张伟", "此致\n敬礼！\n王小明", "祝好\n李四",
    "王小明 敬上", "姓名：林夜", "——陈晓明", "张先生", "Yours", "sincerely", ".", "!", "?", "\n", "\r\n", " ",
    "\t", ",", "Name", "name", "Mr", "Dear", "I am", "Hi", "regards", "Best Regards, Jo Ann", "Ann", "Lee",
    # sign-off phrases inside or overlapping others (searched leftmost-longest, not overlapping)
    "All the best,\nBob", "Best wishes!\nAnn", "thanksincerely\nTom", "Yours sincerely,\nEve", "Thanks again\nJo",
    "Kind Regards,\nIan", "best regards regards\nAl", "Yours truly,\n\nMay Lee",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10), st.lists(st.sampled_from([" ", "\n", "", ". "]),
                                                                 min_size=10, max_size=10))
def test_fast_names_equal_the_rules_run_everywhere(parts: list[str], joins: list[str]) -> None:
    text = "".join(part + join for part, join in zip(parts, joins, strict=False))
    assert n.find_names(text) == plain_find_names(text)


def test_fast_names_equal_on_the_written_cases() -> None:
    from test_deid_landlines_names import SEEDED
    from test_deid_residue import KEPT, RESIDUE, STILL_REMOVED

    texts = [t for t, _, _ in SEEDED] + [t for t, _, _ in RESIDUE] + KEPT + [t for t, _ in STILL_REMOVED]
    for text in texts:
        for variant in (text, f"x {text} y", f"{text}\n{text}", text.upper(), text.lower()):
            assert n.find_names(variant) == plain_find_names(variant), variant


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*n._ZH_CUES, "张", "x", " ", "—", "-", "－", "é", "İ", "长总"]), max_size=8))
def test_the_chinese_cue_pass_finds_a_cue_where_the_substring_tests_do(parts: list[str]) -> None:
    text = "".join(parts)
    assert bool(n._ZH_CUE_FINDER.find_matches_as_indexes(text)) == any(cue in text for cue in n._ZH_CUES)
