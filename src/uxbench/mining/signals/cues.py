"""Cues that tell a continuation or a follow-up built on the answer from a repeat or a rephrase.

Overlap with the previous request is not dissatisfaction by itself: "continue", "now the same for X",
the next chunk of a text with the same instruction, "chapter 2" after "chapter 1" all overlap heavily
and are the user going on, not asking again. Each detector returns the evidence (a short string) or None.
"""

from __future__ import annotations

import re

from uxbench.mining.signals.fastre import OPENING, Prefiltered, WordRegex, lowered, tested_words, words_of
from uxbench.mining.signals.similarity import (
    STOP_WORDS,
    changed_tokens,
    extension,
    normalise,
    similarity,
    tokens,
)
from uxbench.mining.snippets import clip

_F = re.IGNORECASE

# The whole message asks to go on / for more / for the next piece.
_CONTINUE_EN = re.compile(
    r"^\s*(?:ok(?:ay)?[,.!]?\s+|good[,.!]?\s+|great[,.!]?\s+|now\s+|please\s+|and\s+)*"
    r"(?:continue|go on|keep going|carry on|more|next|proceed|and then\??|what happens next"
    r"|(?:give me |write |show me |tell me |one )?(?:another|one more|some more|more)(?: one| please)?"
    r"|(?:and |what about )?the rest(?: of (?:it|the \w+))?)\s*[.!?]*\s*(?:please)?\s*[.!?]*\s*$",
    _F,
)
_CONTINUE_EN_ANY = WordRegex(
    r"\b(?:the |write the |show the )?next (?:part|chapter|scene|section|paragraph|chunk|page|step|one|verse"
    r"|episode|batch|lines?)\b|\b(?:do|doing) the same\b|\bthe same (?:for|with|thing for|in)\b"
    r"|\bsame (?:for|with)\b|\bnow (?:do|write|explain|translate|try|make|give|convert|the)\b"
    r"|\b(?:\d+|five|ten|three|a few|some) more\b|\bkeep (?:going|writing)\b|\bcontinue (?:with|the|from"
    r"|writing)\b"
    r"|\bthe rest of (?:the|it|your)\b|\bpart (?:\d+|two|three|four|ii|iii)\b"
    r"|^\s*(?:please\s+|ok(?:ay)?[,.]?\s+|now\s+)?(?:continue|cont|go on|keep going|go ahead|carry on)(?![a-z])"
    r"|\b(?:do|write|give me|make) (?:another|one more)(?: one)?\b|\bnext question\b"
    r"|^\s*(?:question|q|problem|exercise|task)\s*\d+\b",
    group=OPENING,
)
_CONTINUE_ZH = Prefiltered(
    r"^(?:好的?[，,。]?|嗯[，,]?|然后)?(?:(?:继续|接着)(?=$|[，,。.!！~～]|写|讲|说|来|吧|呀|啊|下去|生成"
    r"|回答|输出|翻译|往下)"
    r"|接下来|往下|下一|再来|再写|再讲|再给|再出|再说|再列|再举|再用"
    r"|还有吗|还有呢|还有别的|后面呢|然后呢|之后呢|再多|多来)"
    r"|继续写|接着写|接着讲|下一(?:章|段|节|部分|个|题|幕|步|集|篇|页|批|组|首)"
    r"|第[二三四五六七八九十两\d]+(?:章|段|节|部分|幕|集|篇|页|题)"
    r"|同样的方法|照这样|按照这个|按这个|用同样|也(?:列|写|翻译|做|来|弄|改|算|分析|解释|整理)一下"
    r"|再(?:来|写|讲|给|出|举|列)[一两几\d]*(?:个|篇|段|首|道|些|条|种|部|组)"
)
# A relayed move in a game or a role-play: an action in brackets or asterisks, or a quoted line.
_RELAY = re.compile(r"^\s*(?:[(\[（*][^)\]）*]{2,}[)\]）*]|\"[^\"]{2,}\"\s*$|“[^”]{2,}”\s*$|>\s)")
# Multiple-choice or numbered quiz items: the next one is the user going on, not asking again.
_OPTION_A = re.compile(r"(?:^|\s)\(?A\s*[).:、]\s*\S")
_OPTION_B = re.compile(r"(?:^|\s)\(?B\s*[).:、]\s*\S")
_QUIZ_NUMBER = re.compile(r"^\s*(?:question|q)\s*\d+|第[一二三四五六七八九十\d]+题", re.I)
# A message that points back at the reply ("what about", "那", "这个").
_ANAPHORA_EN = WordRegex(
    r"^\s*(?:and|then|so|but|also|what about|how about|what if|and if|and what|ok(?:ay)?,? (?:and|so|but|what"
    r"|how)"
    r"|is (?:it|that|this|there)|are (?:they|those|these)|does (?:it|that|this)|do (?:they|i need)"
    r"|can (?:it|they)|could it|why (?:not|is (?:that|it))|in that case|if so)\b"
    r"|\b(?:it|its|that one|those|these|they|them|that|then|instead)\s*\??\s*$|\bfor (?:it|that|them)\b"
    r"|\b(?:it|that)'?s\b"
    r"|\b(?:is|does|do|did|was|will|would|can) (?:it|that|they)\b|\b(?:use|with|of|about|from|in) (?:it|that"
    r"|them)\b",
)
# `_ANAPHORA_EN` past its first alternative (which can match only at the start), spelled out word by word and
# grouped by first letter, the word-start check after that letter: a pattern whose every alternative opens with
# its own letter lets `re` skip in C to the next of those letters and try only the words that start with it,
# where the whole pattern tried every alternative at every position. Alternatives that start with different
# letters never match at the same position, and those that start with the same one keep their order, so the
# first match is the same.
_ANAPHORA_WORDS = (
    ("it its that_one those these they them that then instead", r"\s*\??\s*$"),
    ("for", r" (?:it|that|them)\b"),
    ("it that", r"'?s\b"),
    ("is does do did was will would can", r" (?:it|that|they)\b"),
    ("use with of about from in", r" (?:it|that|them)\b"),
)
_BY_LETTER: dict[str, list[str]] = {}
for _words, _tail in _ANAPHORA_WORDS:
    for _word in _words.split():
        _BY_LETTER.setdefault(_word[0], []).append(re.escape(_word[1:].replace("_", " ")) + _tail)
_ANAPHORA_REST = re.compile("|".join(
    f"{letter}(?<![\\w']{letter})(?:{'|'.join(rests)})" for letter, rests in _BY_LETTER.items()
))
_ANAPHORA_ZH = Prefiltered(
    r"^(?:(?:好的?|嗯|哦|明白了?|懂了|了解|ok)[，,。！!]?)?(?:那|那么|如果|要是|这个|那个|这样|这种|这些|那些"
    r"|它|它们"
    r"|为什么要|为啥要|所以|然后|还有|除了|和它|跟它|相比)"
    r"|上面|刚才|你说的|你刚|前面(?:说|提)|其中|这一步|这么做|这样做|这样的话|按你说的|照你说的"
)
# The user says what they meant: a rephrase whatever the wording.
_REPHRASE_EN = WordRegex(
    r"i mean\b|i meant\b|what i mean\b|in other words\b|let me rephrase\b|to be clear\b"
    r"|i need the actual\b|i want the actual\b|i'?m asking (?:about|how|what|for)\b|my question is\b"
    r"|(?:make it|explain(?: it)?|say it|put it|rewrite it) (?:simpler|easier|in simpler|in plain|more simply)"
    r"|easier to understand\b|in (?:simple|simpler|plain|layman'?s) (?:terms|words|english)\b|eli5\b",
    group=OPENING,
)
_REPHRASE_ZH = Prefiltered(
    r"我的意思是|我是说|我是想|我想问的是|我想要的是|换个说法|换句话说|我需要的是|我要问的是|准确地说"
    r"|具体来说|说(?:得)?简单点|通俗(?:一点|易懂|点)|说人话"
)
# Words that only intensify a repeat ("again", "啊"): adding them does not extend a request.
_FILLER = frozenset(
    "again please pls plz now still really exactly then ok okay just"
    " 啊 呀 呢 吗 吧 上 的 了 呐 哦 嘛 再 说 一 遍 次"
    " 到 底 是".split()
)
_NUMERIC = re.compile(r"^(?:\d+|[一二三四五六七八九十两零百千]+|first|second|third|fourth|fifth|last|next"
                      r"|one|two|three|four|five|six|seven|eight|nine|ten|ii|iii|iv)$")
_SPLIT = re.compile(r"[:：]")


def relay_cue(text: str) -> str | None:
    """A move relayed in a game or a role-play ("(I open the door)", "*draws sword*")."""
    m = _RELAY.search(text)
    return clip(m.group(0), 40) if m else None


def quiz_next(prev: str, nxt: str) -> str | None:
    """Both messages are quiz items (options A-D, "Question 3", "第二题"): the next question of a quiz."""
    return "next quiz item" if _is_quiz(prev) and _is_quiz(nxt) else None


def _is_quiz(text: str) -> bool:
    return bool(_QUIZ_NUMBER.search(text) or (_OPTION_A.search(text) and _OPTION_B.search(text)))


def typo_fix(prev: str, nxt: str) -> str | None:
    """The user resends the request with a word or two corrected ("a for sentence" -> "a four sentence"):
    fixing their own input, not asking again."""
    removed, added = changed_tokens(prev, nxt)
    if not removed or len(removed) != len(added) or len(removed) > 2:
        return None
    for old, new in zip(removed, added, strict=True):
        if old in STOP_WORDS and new in STOP_WORDS:
            continue
        if similarity(old, new, "char_indel") < 0.5:
            return None
    return f"corrects '{' '.join(removed)}' -> '{' '.join(added)}'"


def template_fill(prev: str, nxt: str) -> str | None:
    """The same request with its subject swapped ("expand on A in 1 paragraph" -> "expand on B in 1
    paragraph", "a letter for X from NATS" -> "... for Y from NATS"): the next item of a series. Both
    sides of the change carry content words, and the new ones are not in the previous request."""
    removed, added = changed_tokens(prev, nxt)
    n_prev, n_next = len(tokens(prev)), len(tokens(nxt))
    common = n_prev - len(removed)
    if common < 3 or common < 0.5 * n_prev or common < 0.5 * n_next:
        return None  # not one frame with a slot changed
    old = [t for t in removed if t not in STOP_WORDS and not _NUMERIC.match(t)]
    new = [t for t in added if t not in STOP_WORDS and not _NUMERIC.match(t)]
    if not old or not new:
        return None
    kept = set(tokens(prev))
    if any(t in kept for t in new):
        return None
    gone = set(removed)
    if not any(t not in STOP_WORDS and t not in gone for t in kept):
        return None  # only the frame ("can you explain") is shared: a new request, not a template
    return f"same request, '{clip(' '.join(old), 30)}' -> '{clip(' '.join(new), 30)}'"


_CUE_CHARS = 300
"""Cues of going on, pointing back or restating open a message: only its first characters are read (a pasted
text of thousands of characters would otherwise cost more than everything else about the follow-up)."""


def continuation_cue(text: str) -> str | None:
    """An explicit ask to go on ("continue", "继续", "now the same for X", "再来一个", "next scene")."""
    stripped = text[:_CUE_CHARS].strip()
    patterns: tuple[re.Pattern[str] | Prefiltered | WordRegex, ...] = (_CONTINUE_EN, _CONTINUE_ZH, _CONTINUE_EN_ANY)
    for pattern in patterns:
        m = pattern.search(stripped)
        if m:
            return stripped[m.start():m.end()].strip() or stripped
    return None


def anaphora_cue(text: str) -> str | None:
    """A reference back to the reply ("what about ...", "and if ...", "那...", "这个...")."""
    stripped = text[:_CUE_CHARS].strip()
    m = _anaphora_en(stripped) or _ANAPHORA_ZH.search(stripped)
    return stripped[m.start():m.end()].strip() if m else None


def _anaphora_en(text: str) -> re.Match[str] | None:
    """``_ANAPHORA_EN.search(text)``: at the start, every alternative in order; after it, `_ANAPHORA_REST`."""
    low = lowered(text)
    if len(low) != len(text):
        return _ANAPHORA_EN.search(text)
    m = _ANAPHORA_EN.fast.match(low)
    if m is not None:
        return m
    if words_of(low).isdisjoint(_ANAPHORA_NEEDS) and not low.rstrip().removesuffix("?").rstrip().endswith(_ENDS):
        return None  # most messages (70% on the pool): no word `_ANAPHORA_REST` needs, nor a word it ends on
    return _ANAPHORA_REST.search(low, 1)


# Every match of `_ANAPHORA_REST` holds one of these words (standing between characters that are not a-z or 0-9,
# as `words_of` splits a text), or ends the text (before spaces and a "?") with one of `_ENDS`.
_ANAPHORA_NEEDS = tested_words(frozenset({"it", "its", "that", "thats", "they", "them"}))
_ENDS = ("then", "those", "these", "instead")


def rephrase_cue(text: str) -> str | None:
    """The user restates what they meant ("I mean", "我的意思是")."""
    head = text[:_CUE_CHARS]
    m = _REPHRASE_EN.search(head) or _REPHRASE_ZH.search(head)
    return head[m.start():m.end()] if m else None


def same_instruction_new_payload(prev: str, nxt: str) -> str | None:
    """"Translate: A" then "Translate: B": the same instruction before a colon, a different text after."""
    pp, pn = _SPLIT.split(prev, maxsplit=1), _SPLIT.split(nxt, maxsplit=1)
    if len(pp) < 2 or len(pn) < 2 or not normalise(pp[1]) or not normalise(pn[1]):
        return None
    if similarity(pp[0], pn[0]) >= 0.6 and similarity(pp[1], pn[1]) < 0.7:
        return f"same instruction '{clip(pn[0], 40)}', new text"
    return None


def slot_change(prev: str, nxt: str) -> str | None:
    """A number or an ordinal changed ("chapter 1" -> "chapter 2", "第一章" -> "第二章"), and otherwise
    at most a few function words ("a" -> "the")."""
    removed, added = changed_tokens(prev, nxt)
    if not removed or not added or len(removed) + len(added) > 8:
        return None
    num_removed = [t for t in removed if _NUMERIC.match(t)]
    num_added = [t for t in added if _NUMERIC.match(t)]
    others = [t for t in (*removed, *added) if not _NUMERIC.match(t)]
    if num_removed and num_added and all(t in STOP_WORDS for t in others):
        return f"{''.join(num_removed)} -> {''.join(num_added)}"
    return None


def extends(prev: str, nxt: str, min_added: int = 3) -> str | None:
    """`nxt` keeps the previous request and adds to it (not mere fillers such as "again" or "啊")."""
    added = [t for t in extension(prev, nxt) if t not in _FILLER]
    if len(added) >= min_added:
        return "adds: " + clip(" ".join(added), 60)
    return None
