"""Did the assistant ask the user for a fact? Code that reads a reply the way a person would, in en and zh.

One entry point for the whole simulator (the rules assessor, the UFS code checks, the scripted free-mode user,
persona building): `asks_for(reply, label, patterns)` for one fact, `asked_facts(reply, targets)` for several.

A fact is asked for when one of the reply's **request sentences** names it:

1. Request sentences: the reply is split into sentences (code blocks and inline code dropped); a sentence asks the
   user something when it is a question addressed to the user ("Could you tell me your city?", "What's your
   budget?", "请问您的城市是？", "您在哪个城市？") or a request ("Please provide your order number.", "Let me know
   the model.", "I'll need your policy number.", "请提供订单号。", "麻烦发一下您的型号"). Offers and pleasantries
   ("Would you like me to ...?", "Is there anything else I can help with?", "还有什么可以帮您？") are not requests,
   and neither are questions inside content the assistant writes for the user: quoted text, dialogue lines
   ("Interviewer: What is your name?") and a list of questions introduced as questions to ask, an interview, a
   survey or a questionnaire.
2. Naming the fact: the persona's `ask_patterns` match the sentence, or the label's words are all there, each as
   itself, its plural or a word of the same concept (`asks_lexicon`: "city" is named by "where do you live",
   "location", "town"; "amount" by "how much"; "订单号" by "订单编号"; "城市" by "在哪里", "哪个城市").

The measured precision and recall on 711 real assistant turns, against the literal patterns this replaced, are in
docs/SIMULATION.md (`bench/asks_dev.py`). A second opinion from multilingual embeddings (the judge extra's
encoder, `bench/asks_dev_e5.py`) was measured there and not adopted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from uxbench.sim.asks_lexicon import WEAK_WORDS, concept_words, zh_concept_phrases
from uxbench.sim.asks_sentences import request_sentences

__all__ = ["AskTarget", "asked_facts", "asks_anything", "asks_for", "names_fact", "request_sentences"]

_CJK_RE = re.compile("[\u3400-\u9fff]")
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NOT_A_FACT_RE = re.compile(r"\bup[- ]to[- ]date\b|\bto date\b")
_COUNT_LABEL_RE = re.compile(r"^\s*(number|amount|count|quantity) of\b")
_LABEL_STOP = frozenset(
    "the a an of your my his her their its to for in on at and or with from by this that these those "
    "full exact current last first".split()
)


@dataclass(frozen=True)
class AskTarget:
    """What the detector needs to know of a fact: its id, its label and the persona's `ask_patterns`."""

    id: str
    label: str
    patterns: tuple[str, ...] = ()


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error:
        return None


def _stem(word: str) -> str:
    """Plural folding only ("cities" -> "city", "addresses" -> "address"; "address", "status" stay)."""
    word = word.removesuffix("'s")
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("sses"):
        return word[:-2]
    for suffix in ("ies", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=4096)
def _label_words(label: str) -> tuple[str, ...]:
    words = [w for w in _WORD_RE.findall(fold(label)) if w not in _LABEL_STOP]
    return tuple(dict.fromkeys(_stem(w) for w in words))


def _en_covered(word: str, folded: str, stems: set[str]) -> bool:
    """`word` (stemmed) is in the sentence, or a word or phrase of its concepts is (`folded`: the sentence's
    words joined by single spaces, padded)."""
    if word in stems:
        return True
    for phrase in concept_words(word):
        if " " in phrase or "-" in phrase:
            if f" {phrase} " in folded:
                return True
        elif _stem(phrase) in stems:
            return True
    return False


def _names_en(label: str, sentence: str) -> bool:
    words = _label_words(label)
    strong = tuple(w for w in words if w not in WEAK_WORDS)
    if strong and _COUNT_LABEL_RE.match(fold(label)):
        strong = (words[0], *strong)  # "number of travellers": the count matters as much as who
    words = strong or words
    if not words:
        return False
    folded = " " + " ".join(_WORD_RE.findall(_NOT_A_FACT_RE.sub(" ", fold(sentence)))) + " "
    stems = {_stem(w) for w in folded.split()}
    return all(_en_covered(w, folded, stems) for w in words)


def _names_zh(label: str, sentence: str) -> bool:
    key = re.sub(r"[\s的]", "", fold(label))
    text = re.sub(r"\s", "", fold(sentence))
    if not key:
        return False
    if key in text:
        return True
    if any(phrase in text for phrase in zh_concept_phrases(key)):
        return True
    bigrams = {key[i : i + 2] for i in range(len(key) - 1)} or {key}
    found = sum(1 for b in bigrams if b in text)
    return len(key) >= 3 and found / len(bigrams) >= 0.5


def names_fact(sentence: str, label: str, patterns: Sequence[str] = ()) -> bool:
    """The sentence names the fact: a pattern matches it, or the label's words (or words of their concepts) are
    all in it."""
    if any((p := _compiled(pattern)) is not None and p.search(sentence) for pattern in patterns):
        return True
    if _CJK_RE.search(label):
        return _names_zh(label, sentence)
    return _names_en(label, sentence)


def asks_for(reply: str, label: str, patterns: Sequence[str] = ()) -> bool:
    """True when the assistant's `reply` asks the user for the fact called `label` (`patterns`: the persona's
    `ask_patterns`, regular expressions, case-insensitive)."""
    return any(names_fact(s, label, patterns) for s in request_sentences(reply))


def asked_facts(reply: str, targets: Iterable[AskTarget]) -> tuple[str, ...]:
    """Ids of the targets the reply asks for, in the targets' order."""
    sentences = request_sentences(reply)
    if not sentences:
        return ()
    return tuple(t.id for t in targets if any(names_fact(s, t.label, t.patterns) for s in sentences))


def asks_anything(reply: str) -> bool:
    """The reply asks the user for something (any information, content or choice)."""
    return bool(request_sentences(reply))
