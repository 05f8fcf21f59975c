"""The signal stage's fast paths give what the plain formulations they replace give, on tricky written inputs.

Each test keeps the earlier formulation here (a few lines) and compares it with the code now used: byte tables
instead of `str.translate`, a text's cached tokens instead of a scan for each word, the prefilters' word sets
cut down to the words they test, the turn's fields built in the model's order.
"""

from __future__ import annotations

import unicodedata

import pytest

from uxbench.mining.signals import SignalConfig, compute_signals
from uxbench.mining.signals import similarity as sim
from uxbench.mining.signals.detect import dissatisfied_score
from uxbench.mining.signals.fastre import WordRegex, lowered, words_of
from uxbench.mining.signals.literals import WORD
from uxbench.mining.signals.results import TurnSignals
from uxbench.mining.types import Session, Turn

_TO_SPACE = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
_NON_WORD = str.maketrans("", "", "".join(chr(c) for c in range(128) if not chr(c).isalnum()))

TEXTS = [
    "", " ", "'", "''a'", "a", "A1", "don't", "Don'T stop!", "x\x1cy\x1dz\x1e\x1fw", "tab\there\r\nnew\x0bline\x0c",
    "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./", "snake_case and kebab-case", "3.14, 2,718 and 1e9", "C++ / C# / F#",
    "  leading and trailing  ", "UPPER lower MiXeD", "x" * 70 + "!!", "." * 80 + "ab", "a." * 40, "\x00\x7f",
    "é", "naïve café", "中文和English混合", "İstanbul", "ﬁle ＡＢＣ １２３", "emoji 😀 ok", "ß straße",
    "'quoted' “curly”",
]


def _old_tokenise(text: str) -> tuple[str, ...]:
    if text.isascii():
        return tuple(text.lower().replace("'", "").translate(_TO_SPACE).split())
    return tuple(sim._TOKEN.findall(unicodedata.normalize("NFKC", text).casefold().replace("'", "")))


def _old_normalise(text: str) -> str:
    if text.isascii():
        return text.lower().translate(_NON_WORD)
    return sim._NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


@pytest.mark.parametrize("text", TEXTS)
def test_byte_tables_give_what_str_translate_gave(text: str) -> None:
    assert sim._tokenise(text) == _old_tokenise(text)
    assert sim.normalise(text) == _old_normalise(text)
    for chars in (0, 1, 2, 5, 40):
        assert sim.normalised_longer_than(text, chars) == (len(_old_normalise(text)) > chars)


@pytest.mark.parametrize("reference", [*TEXTS, "the dont stop word-list 3 14 x y", "a1 b2 a1b2 ab12"])
def test_found_in_by_tokens_or_by_scanning_agree(reference: str) -> None:
    """A reference marked `tokenised` is read through its tokens; otherwise an ASCII one is scanned word by word."""
    queries = ["dont don t stop word list 3 14 x y a1 b2 ab1 ab12 é 中文 english upper 混合 the",
               "leading trailing new line tab here kebab case snake_case c f 1e9"]
    for query in queries:
        units = sim.unit_groups(query)
        scanned = sim.found_in(units, sim.TextIndex(reference))
        read = sim.found_in(units, sim.TextIndex(reference, tokenised=True))
        assert scanned == read
        assert read.words == units.words & set(sim.tokens(reference))


def test_changed_tokens_is_kept_for_the_same_pair() -> None:
    first = sim.changed_tokens("write chapter 1 of the story", "write chapter 2 of the story")
    assert first == (("1",), ("2",))
    assert sim.changed_tokens("write chapter 1 of the story", "write chapter 2 of the story") is first
    assert sim.changed_tokens("a b", "a c") == (("b",), ("c",))


def test_prefilter_word_sets_hold_only_the_words_tested() -> None:
    """`words_of` keeps the words some prefilter tests; a pattern made later adds its own (and the kept sets
    are dropped), so it still matches as its plain regex does."""
    text = "zzqx the frobnicator is not working at all"
    low = lowered(text)
    assert words_of(low) <= set(WORD.findall(low))
    assert "zzqx" not in words_of(low) and "working" in words_of(low)
    late = WordRegex(r"\bfrobnicator is (?:broken|not working)\b|\bzzqx frobs\b")
    assert "frobnicator" in words_of(lowered(text))
    for candidate in (text, "The FROBNICATOR is broken.", "zzqx frobs", "zzqx frob", ""):
        plain = late.fast.search(candidate.lower())
        found = late.search(candidate)
        assert (found and found.span()) == (plain and plain.span())


def _turn(index: int, role: str, content: str, **extra: object) -> Turn:
    return Turn.model_validate({"conversation_id": "c", "turn_index": index, "role": role, "content": content,
                                **extra})


def test_turn_fields_come_in_the_model_order_with_the_same_verdicts() -> None:
    chat = Session(conversation_id="c", turns=[
        _turn(0, "user", "write a haiku about rain"),
        _turn(1, "assistant", "Rain taps the window", feedback="dislike"),
        _turn(2, "user", "that's wrong, write a haiku about rain"),
        _turn(3, "assistant", "Soft rain on the roof"),
        _turn(4, "user", "thanks, perfect"),
        _turn(5, "assistant", "Glad it helped"),
    ])
    config = SignalConfig()
    found = compute_signals(chat, config)
    assert len(found) == 3
    for ts in found:
        assert list(ts.__dict__) == list(TurnSignals.model_fields)
        # `recovery` counts as set once `attach_recovery` assigns it, as on a model made any other way
        assert ts.model_fields_set == set(TurnSignals.model_fields) - ({"recovery"} if ts.recovery is None else set())
        values = {name: ts.signal(name) for name in ("thumbs_down", "regenerate", "complaint", "dismiss", "repeat",
                                                    "rephrase", "skim", "topic_change", "conversation_end")}
        assert ts.dissatisfied_score == dissatisfied_score(values, config)
        assert TurnSignals.model_validate(ts.model_dump()) == ts
    assert found[0].dissatisfied and found[0].recovery is not None
    assert found[-1].conversation_end.fired and found[-1].complaint.evidence == "no follow-up message"


def test_prefilter_words_of_ascii_text_equal_the_regex_split() -> None:
    for text in [*TEXTS, "it's not working at all, the 2nd time", "Still_wrong: not-working!!"]:
        low = lowered(text)
        assert words_of(low) == _vocabulary() & set(WORD.findall(low))


def _vocabulary() -> frozenset[str]:
    from uxbench.mining.signals import fastre

    return fastre._VOCABULARY
