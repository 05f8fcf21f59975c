"""Text similarity for follow-up messages, for Chinese and English alike.

Normalisation: NFKC, casefold, drop punctuation, symbols and whitespace. Texts are compared as token
sequences where a CJK character is one token and a run of Latin letters or digits is one token, so a
Chinese character weighs about as much as an English word. The default measure (`content_indel`) is the
normalised Indel similarity (1 - edit distance with insertions and deletions / total length) over those
tokens with function words removed: order-aware; unlike a Jaccard index over character *sets* it does not
score two unrelated texts as similar because they share common characters, and unlike plain token
similarity it does not score "how do I X" and "how do I Y" as similar for their frame. It was chosen
against the alternatives here on the dev split of `signal_sets/followups.jsonl` (`evaluate.sweep_similarity`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import filterfalse
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

SimilarityMethod = Literal["content_indel", "token_indel", "char_indel", "token_set", "char_bigram_dice"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_NON_WORD = re.compile(r"[\W_]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_WORD_RUN = re.compile(rf"[^\W_{_CJK}]+")
"""The tokens of `_TOKEN` that are not CJK characters: the same runs, since CJK characters end them in both."""
# For the bytes of an ASCII text: every character but a letter or a digit to a space, and the ones to drop.
# `bytes.translate` reads a 256-byte table, 2-4x the speed of `str.translate` (decoded, the same strings).
_BYTES_TO_SPACE = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))
_BYTES_NON_WORD = bytes(c for c in range(128) if not chr(c).isalnum())

# Function words that carry no topic; used only for lexical overlap, never for similarity.
_STOP_EN = frozenset(
    "a an the of to in on for and or but is are was were be been am do does did i you he she it we they me my"
    " your our their this that these those what which who whom how why when where can could would should will"
    " shall may might must with about as at by from into than then so if not no yes please just also any some"
    " there here have has had get got give make let s t d ll re ve m its im dont doesnt whats thats"
    " explain tell show write help want need know like please describe find recommend suggest list".split()
)
_STOP_ZH = frozenset(
    "什么 怎么 一下 一个 这个 那个 如何 为什么 是不 不是 可以 的话 一些 多少"
    " 哪些 哪个 有没 没有 我们 你们 他们"
    " 帮我 给我 请问 告诉 知道 现在 今天 还是 就是 然后 因为 所以 如果 但是 而且 吗 呢 吧".split()
)

STOP_WORDS = _STOP_EN | frozenset(
    "的 了 是 在 和 与 把 给 也 都 就 又 这 那 个 吗 呢 吧 啊 呀 怎 么 什 如 何"
    " 为 我 你 他 她 它 们 一 下 有 请 帮 能 可 以"
    " 要 会 被 让 还 哪 些 吧 嘛 得 地 着 过".split()
)
"""Function words (English words, single Chinese characters) that carry no topic."""


def normalise(text: str) -> str:
    """NFKC, casefold, and drop whitespace, punctuation and symbols."""
    if text.isascii():  # the same result, ~10x faster: NFKC leaves ASCII alone
        return text.lower().encode().translate(None, _BYTES_NON_WORD).decode()
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


def normalised_longer_than(text: str, chars: int) -> bool:
    """``len(normalise(text)) > chars``. On ASCII text normalising keeps the letters and digits, one for one, and
    drops the rest: an opening that keeps more than ``chars`` of them decides, without normalising a long text."""
    if text.isascii():
        if len(text[: 4 * chars + 64].encode().translate(None, _BYTES_NON_WORD)) > chars:
            return True
        return len(text.encode().translate(None, _BYTES_NON_WORD)) > chars
    if len(KEPT.findall(text, 0, 4 * chars + 64)) > chars:
        return True  # so many characters that normalising keeps one for one: no need to normalise a long text
    return len(normalise(text)) > chars


KEPT = re.compile(r"[0-9A-Za-z\u4e00-\u9fff]")
"""Characters that `normalise` keeps, each as a character of its own, whatever surrounds them: ASCII letters and
digits and the common CJK ideographs are word characters that NFKC leaves alone and never composes into a
character before them (a combining mark after one may compose with it: still one word character); tested over
all of Unicode."""


def tokens(text: str) -> tuple[str, ...]:
    """CJK characters one by one, Latin/digit runs as words (after NFKC and casefold)."""
    # Short texts are cached (each is compared twice); of long ones (a reply, read by the lexical lookups
    # and then by the skim rule) only the last few, so that they pin little memory.
    return _tokens_cached(text) if len(text) <= _CACHE_MAX_CHARS else _tokens_long(text)


def _tokenise(text: str) -> tuple[str, ...]:
    if text.isascii():
        return tuple(text.lower().encode().translate(_BYTES_TO_SPACE, b"'").decode().split())
    return tuple(_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold().replace("'", "")))


_CACHE_MAX_CHARS = 1000
_tokens_cached = lru_cache(maxsize=4096)(_tokenise)
_tokens_long = lru_cache(maxsize=4)(_tokenise)


def reading_units(text: str) -> int:
    """Reading length: a CJK character or a non-CJK word is one unit (both take about 0.25 s to read)."""
    return len(tokens(text))


def content_tokens(text: str) -> tuple[str, ...]:
    """`tokens` without function words ("how do i", "的", "怎么"), so that two questions built on the
    same frame ("how do I X", "怎么X") are not similar for the frame alone."""
    return _content_tokens_cached(text) if len(text) <= _CACHE_MAX_CHARS else _content_tokens_long(text)


def _content_tokens(text: str) -> tuple[str, ...]:
    return tuple(filterfalse(STOP_WORDS.__contains__, tokens(text)))


_content_tokens_cached = lru_cache(maxsize=4096)(_content_tokens)
_content_tokens_long = lru_cache(maxsize=4)(_content_tokens)
"""A long user message is compared twice (with the message before it, then with the one after): the last few are
kept, like `_tokens_long`."""


def cjk_share(text: str) -> float:
    """Fraction of the normalised characters that are CJK."""
    norm = normalise(text)
    return len(_CJK_CHAR.findall(norm)) / len(norm) if norm else 0.0


def similarity(a: str, b: str, method: SimilarityMethod = "content_indel") -> float:
    """Similarity in [0, 1] of two texts after normalisation."""
    if method == "content_indel":
        ta, tb = content_tokens(a), content_tokens(b)
        return float(Indel.normalized_similarity(ta, tb)) if (ta or tb) else 1.0
    if method == "token_indel":
        ta, tb = tokens(a), tokens(b)
        return float(Indel.normalized_similarity(ta, tb)) if (ta or tb) else 1.0
    if method == "char_indel":
        return fuzz.ratio(normalise(a), normalise(b)) / 100.0
    if method == "token_set":
        return fuzz.token_set_ratio(" ".join(tokens(a)), " ".join(tokens(b))) / 100.0
    grams_a, grams_b = _bigrams(normalise(a)), _bigrams(normalise(b))
    if not grams_a and not grams_b:
        return 1.0
    common = sum(min(grams_a.count(g), grams_b.count(g)) for g in set(grams_a))
    return 2.0 * common / (len(grams_a) + len(grams_b))


def _bigrams(text: str) -> list[str]:
    return [text[i : i + 2] for i in range(len(text) - 1)] if len(text) > 1 else [text] if text else []


def content_units(text: str) -> frozenset[str]:
    """Topic-bearing units: Latin words off a stop list, and CJK character bigrams off a stop list."""
    return _content_units_cached(text) if len(text) <= _CACHE_MAX_CHARS else _content_units(text)


def _content_units(text: str) -> frozenset[str]:
    if text.isascii():  # no CJK runs: the words off the stop list
        return frozenset(tokens(text)) - _STOP_EN
    units: set[str] = set()
    run: list[str] = []
    for tok in (*tokens(text), ""):
        # `_CJK_CHAR.fullmatch(tok)`, by comparisons (a CJK token is one character): a regex call per token was
        # most of the time on a Chinese text
        if len(tok) == 1 and ("\u4e00" <= tok <= "\u9fff" or "\u3040" <= tok <= "\u30ff" or "\u3400" <= tok <= "\u4dbf"
                              or "\uf900" <= tok <= "\ufaff" or "\uac00" <= tok <= "\ud7af"):
            run.append(tok)
            continue
        if len(run) == 1 and run[0] not in _STOP_ZH:
            units.add(run[0])
        for i in range(len(run) - 1):
            first, second = run[i], run[i + 1]
            if first not in STOP_WORDS and second not in STOP_WORDS and (pair := first + second) not in _STOP_ZH:
                units.add(pair)
        run = []
        if tok and tok not in _STOP_EN:
            units.add(tok)
    return frozenset(units)


_content_units_cached = lru_cache(maxsize=4096)(_content_units)


_FIND_MAX_WORDS = 25
"""`TextIndex.ascii_tokens_among` finds up to this many words one by one (callgrind over the pool's follow-ups:
the split past 25 words is -12% of the lookup's instructions, past 15 or 40 less)."""


class TextIndex:
    """A reference text prepared once for `units_in` (normalised text, token set), since one reply is
    looked up several times per follow-up."""

    __slots__ = ("_flat", "_folded", "_norm", "_words", "text", "tokenised")

    def __init__(self, text: str, tokenised: bool = False) -> None:
        self.text = text
        self.tokenised = tokenised
        """`tokens(text)` was read just before (a short text's is then cached): the word lookups read it."""
        self._norm: str | None = None
        self._words: frozenset[str] | None = None
        self._flat: str | None = None
        self._folded: str | None = None

    def ascii_tokens_among(self, words: frozenset[str]) -> frozenset[str]:
        """``words & set(tokens(self.text))`` for an ASCII text, without splitting it into tokens: a word is one
        of its tokens where it stands in the lower-cased text, apostrophes dropped, between two characters
        that are not letters or digits (the tokens are the runs of those). A long reply has hundreds of
        tokens and the follow-up a handful of words: finding each word costs far less than the split.
        Each word not there is a scan of the whole text: past `_FIND_MAX_WORDS` words the split costs less."""
        if len(words) > _FIND_MAX_WORDS:  # ASCII text: `_tokenise` splits it on its fast path
            return words.intersection(_tokenise(self.text))
        if self._flat is None:
            self._flat = self.text.lower().replace("'", "")
        flat, found = self._flat, []
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

    @property
    def norm(self) -> str:
        if self._norm is None:
            self._norm = normalise(self.text) if self.text.isascii() else _NON_WORD.sub("", self.folded)
        return self._norm

    @property
    def folded(self) -> str:
        """NFKC and casefold, where `normalise` and `tokens` start on a non-ASCII text: made once for both."""
        if self._folded is None:
            self._folded = unicodedata.normalize("NFKC", self.text).casefold()
        return self._folded

    def word_tokens(self) -> list[str]:
        """The tokens of a non-ASCII text that are not CJK characters (runs of other letters and digits): what
        `tokens` finds between its CJK characters, without a string for each of those."""
        return _WORD_RUN.findall(self.folded.replace("'", ""))

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(tokens(self.text))
        return self._words


@dataclass(frozen=True, slots=True)
class Units:
    """Content units split by how `found_in` looks them up: CJK units as substrings, the others as words."""

    cjk: frozenset[str]
    words: frozenset[str]

    @property
    def count(self) -> int:
        return len(self.cjk) + len(self.words)

    def __sub__(self, other: Units) -> Units:
        return Units(self.cjk - other.cjk, self.words - other.words)

    def all(self) -> frozenset[str]:
        return self.cjk | self.words


_NONE: frozenset[str] = frozenset()


def unit_groups(text: str) -> Units:
    """`content_units(text)`, split for `found_in`."""
    if text.isascii():
        # words only: the tokens off `_STOP_EN`, which are `content_tokens` (STOP_WORDS' ASCII words are `_STOP_EN`),
        # already made for the similarity of the same message
        return Units(_NONE, frozenset(content_tokens(text)))
    units = content_units(text)
    cjk = frozenset(u for u in units if _CJK_CHAR.match(u))
    return Units(cjk, units - cjk)


def found_in(units: Units, reference: TextIndex) -> Units:
    """The units that occur in `reference` (as `units_in` finds them)."""
    cjk = frozenset(u for u in units.cjk if u in reference.norm) if units.cjk else _NONE
    if not units.words:
        return Units(cjk, _NONE)
    if reference.text.isascii():
        # a tokenised text's tokens are at hand whatever its length (`_tokens_long` keeps the last few long ones)
        if not reference.tokenised:
            return Units(cjk, reference.ascii_tokens_among(units.words))
    elif not reference.tokenised:
        # `units.words` holds no CJK character (those are in `units.cjk`): the other tokens are all it can meet
        return Units(cjk, units.words.intersection(reference.word_tokens()))
    # the reference's tokens are not made a set: one pass over them is all the lookup needs
    return Units(cjk, units.words.intersection(tokens(reference.text)))


def units_in(units: frozenset[str], *references: str | TextIndex) -> set[str]:
    """The units that occur in any of `references`: CJK bigrams as substrings of the normalised text, words
    as tokens. Cheaper than building the content units of a long reference."""
    if not units:
        return set()
    indexes = [r if isinstance(r, TextIndex) else TextIndex(r) for r in references]
    cjk = [u for u in units if _CJK_CHAR.match(u)]
    words = units.difference(cjk) if cjk else units
    found = {u for u in cjk if any(u in ix.norm for ix in indexes)}
    for ix in indexes:
        if words:
            found |= words & ix.words
    return found


def overlap(text: str, *references: str | TextIndex) -> float:
    """Share of `text`'s content units that also occur in one of `references` (0 when `text` has none)."""
    mine = content_units(text)
    if not mine:
        return 0.0
    return len(units_in(mine, *references)) / len(mine)


def extension(prev: str, nxt: str) -> tuple[str, ...]:
    """Tokens `nxt` adds when it keeps every token of `prev` in order; () when it does not extend it."""
    tp, tn = tokens(prev), tokens(nxt)
    if not tp or len(tn) <= len(tp):
        return ()
    ops = Indel.editops(tp, tn)
    if any(op.tag == "delete" for op in ops):
        return ()
    return tuple(tn[op.dest_pos] for op in ops if op.tag == "insert")


@lru_cache(maxsize=4)  # the template cues read the same pair up to three times
def changed_tokens(prev: str, nxt: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tokens only in `prev`, tokens only in `nxt`) along the best alignment of the two."""
    tp, tn = tokens(prev), tokens(nxt)
    ops = Indel.editops(tp, tn)
    removed = tuple(tp[op.src_pos] for op in ops if op.tag == "delete")
    added = tuple(tn[op.dest_pos] for op in ops if op.tag == "insert")
    return removed, added
