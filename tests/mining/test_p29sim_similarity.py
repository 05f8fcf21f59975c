"""The rewritten lexical lookups of `similarity` agree with the formulations they replaced, on written texts."""

from __future__ import annotations

import itertools

import pytest

from uxbench.mining.signals import similarity as S
from uxbench.mining.signals.similarity import TextIndex, _tokenise, tokens


def _old_ascii_tokens_among(text: str, words: frozenset[str]) -> frozenset[str]:
    """`TextIndex.ascii_tokens_among` before the split past `_FIND_MAX_WORDS` words: every word found one by one."""
    flat, found = text.lower().replace("'", ""), []
    for word in words:
        if not word.isascii():
            continue
        at, size = flat.find(word), len(word)
        while at >= 0:
            end = at + size
            if (not at or not flat[at - 1].isalnum()) and (end == len(flat) or not flat[end].isalnum()):
                found.append(word)
                break
            at = flat.find(word, at + 1)
    return frozenset(found)


TEXTS = [
    "",
    "it",
    "It's the end of it; its END.",
    "don't   dont do n't 'quoted' rock'n'roll",
    "use_case snake_case under_score __init__ a_b",
    "x1 1x 2nd 10,000 3.14 v2.0 x-ray e-mail",
    "Because we use uses used USE, re-use: reuse?",
    "tab\tnew\nline\r\nend\x00null\x7fdel",
    "pythonpython python3 py thon",
    "The QUICK brown fox jumps over the lazy dog. " * 30,
    "start middle end",
]
# Content units are tokens: an ASCII one is a run of letters and digits (never "_" or "-"), so only those are asked.
WORDS = [
    frozenset(),
    frozenset({"it", "its", "end"}),
    frozenset({"dont", "rockn", "rocknroll", "quoted", "nt", "n"}),
    frozenset({"use", "case", "snake", "under", "score", "init", "a", "b", "usecase"}),
    frozenset({"x1", "1x", "2nd", "10", "000", "3", "14", "v2", "0", "x", "ray", "e", "mail"}),
    frozenset({"python", "python3", "py", "thon", "pythonpython", "café", "日本", "über"}),
    frozenset({"quick", "brown", "fox", "lazy", "dog", "cat", "the", "over", "end", "start", "middle", "null"}),
]


def _many(words: frozenset[str], extra: int) -> frozenset[str]:
    """`words` and `extra` words absent from every text, so that the split path is taken."""
    return words | {f"absent{i}" for i in range(extra)}


@pytest.mark.parametrize(("text", "words"), list(itertools.product(TEXTS, WORDS)))
def test_ascii_tokens_among_matches_old_and_tokens(text: str, words: frozenset[str]) -> None:
    for extra in (0, S._FIND_MAX_WORDS, S._FIND_MAX_WORDS + 5):
        asked = _many(words, extra)
        got = TextIndex(text).ascii_tokens_among(asked)
        assert got == _old_ascii_tokens_among(text, asked)
        assert got == asked & set(tokens(text)) == asked & set(_tokenise(text))


def test_split_threshold_edges() -> None:
    text = " ".join(f"w{i}" for i in range(0, 60, 2))
    for size in (S._FIND_MAX_WORDS - 1, S._FIND_MAX_WORDS, S._FIND_MAX_WORDS + 1, 60):
        words = frozenset(f"w{i}" for i in range(size))
        assert TextIndex(text).ascii_tokens_among(words) == _old_ascii_tokens_among(text, words)


def test_stop_words_ascii_part_is_stop_en() -> None:
    """`unit_groups` of an ASCII text is its `content_tokens` as a set because of this."""
    assert frozenset(w for w in S.STOP_WORDS if w.isascii()) == S._STOP_EN


UNIT_TEXTS = [
    *TEXTS,
    "How do I explain THE difference between a list and a tuple?",
    "what about it then",
    "i'm im I'M Im dont don't",
    "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ",  # not ASCII: the other path
    "混合 text 中文和English的句子",
    "Straße über café",
]


@pytest.mark.parametrize("text", UNIT_TEXTS)
def test_unit_groups_matches_content_units(text: str) -> None:
    units = S.content_units(text)
    got = S.unit_groups(text)
    assert got.all() == units == S._content_units(text)
    assert got.cjk == frozenset(u for u in units if S._CJK_CHAR.match(u))
    if text.isascii():
        assert got.cjk == frozenset() and got.words == frozenset(tokens(text)) - S._STOP_EN


LONG_TEXTS = [t * (1 + 1001 // len(t)) for t in TEXTS if t] + [" ".join(f"w{i}" for i in range(400))]


@pytest.mark.parametrize("text", LONG_TEXTS)
def test_found_in_long_tokenised_text_matches_lookup(text: str) -> None:
    """A long ASCII text read with its tokens (the previous message) finds the words the one-by-one lookup finds."""
    assert len(text) > S._CACHE_MAX_CHARS and text.isascii()
    for words in [*WORDS, frozenset({"w1", "w39", "w400", "w0", "w"})]:
        units = S.Units(frozenset(), words)
        got = S.found_in(units, TextIndex(text, tokenised=True)).words
        assert got == _old_ascii_tokens_among(text, words) == S.found_in(units, TextIndex(text)).words
