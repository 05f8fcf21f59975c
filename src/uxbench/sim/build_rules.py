"""The parts of a mined persona that code decides: which part of the conversation it is built from, its facts'
disclosure modes, the profile by rule (message lengths, typing habits), the goal items by rule (one per topic,
the real user's repeats and rephrasings as its rephrasings), and the personalised rubric derived from them."""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass

from uxbench.errors import ConfigError
from uxbench.sim.asks import asks_for
from uxbench.sim.disclosure import mentions
from uxbench.sim.mined import MinedConversation, MinedTurn
from uxbench.sim.reactions import reaction_of

PLACEHOLDER_RE = re.compile(r"\[([A-Z]+)_(\d+)\]")
PLACEHOLDER_LABELS: dict[str, tuple[str, str, str]] = {  # type -> (en label, zh label, ask pattern)
    "PHONE": ("phone number", "电话号码", r"phone|mobile|contact number|电话|手机|联系方式"),
    "ID": ("ID number", "证件号码", r"\bID\b|identity|passport|证件|身份证"),
    "CARD": ("card number", "银行卡号", r"card|卡号"),
    "EMAIL": ("email address", "邮箱地址", r"e-?mail|邮箱"),
    "IP": ("IP address", "IP 地址", r"\bIP\b"),
    "URL": ("link", "链接", r"link|URL|website|链接|网址"),
    "ADDRESS": ("address", "地址", r"address|地址|住址"),
}


@dataclass(frozen=True)
class Holdout:
    """How a conversation is split between building the persona and testing it (§3.2's hold-out rule)."""

    rule: str
    """prefix (build from the first share of user turns, test on the rest), conversation (hold whole
    conversations out), or none (build from everything: replay on the same turns measures memorisation)."""
    value: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Holdout:
        rule, _, raw = text.partition(":")
        try:
            if rule == "prefix":
                value = float(raw or 0.5)
                if not 0.0 < value <= 1.0:
                    raise ValueError
                return cls("prefix", value)
            if rule == "conversation":
                value = float(raw or 20)
                if not 0.0 <= value < 100.0:
                    raise ValueError
                return cls("conversation", value)
        except ValueError:
            pass
        if rule == "none" and not raw:
            return cls("none")
        raise ConfigError(f"--holdout {text!r}: use prefix:F (0 < F <= 1, the share of user turns built from), "
                          "conversation:P (0 <= P < 100, the percent of conversations held out) or none")

    def held_out(self, conv: MinedConversation) -> bool:
        """Conversation rule: whether the whole conversation is held out (by its digest, so stable)."""
        return self.rule == "conversation" and int(conv.digest, 16) % 10_000 < self.value * 100

    def build_turns(self, conv: MinedConversation) -> tuple[list[MinedTurn], dict[str, object]]:
        """The turns a persona is built from, and the record of the split (kept in the persona's meta)."""
        users = [i for i, t in enumerate(conv.turns) if t.role == "user"]
        if self.rule != "prefix" or not users:
            split = {"rule": self.rule, **({"percent": self.value, "split": "build"} if self.rule == "conversation"
                                           else {})}
            return list(conv.turns), split
        k = max(1, math.ceil(self.value * len(users)))
        end = users[k] if k < len(users) else len(conv.turns)
        kept = conv.turns[:end]
        held = conv.turns[end:]
        return kept, {"rule": "prefix", "fraction": self.value, "user_turns_built": k,
                      "user_turns_held_out": len(users) - k,
                      "held_out_from_turn_index": held[0].turn_index if held else None}


@dataclass
class FactDraft:
    """A fact before it becomes a `Fact`: where it first appears decides its disclosure mode."""

    id: str
    label: str
    value: str
    ask_patterns: tuple[str, ...]
    origin: str
    """placeholder (the de-identification's pseudonym) or llm (extracted, then checked in the text)."""
    disclose: str = "on_request"
    first_user_turn: int | None = None
    """1-based user turn of its first mention."""


def placeholder_facts(user_texts: list[str], lang: str) -> list[FactDraft]:
    """One fact per distinct placeholder in the user's messages, in order of first appearance."""
    seen: dict[str, FactDraft] = {}
    for text in user_texts:
        for match in PLACEHOLDER_RE.finditer(text):
            kind, number = match.group(1), match.group(2)
            if match.group() in seen:
                continue
            en, zh, pattern = PLACEHOLDER_LABELS.get(kind, (kind.lower(), kind.lower(), re.escape(kind.lower())))
            label = en if lang == "en" else zh
            seen[match.group()] = FactDraft(f"{kind.lower()}_{number}", label, match.group(), (pattern,),
                                            "placeholder")
    return list(seen.values())


def place_facts(facts: list[FactDraft], turns: list[MinedTurn]) -> None:
    """Set each fact's first mention and its disclosure mode: opening (in the first user message), on_request
    (the assistant had just asked for it), else after_turn:K (volunteered at user turn K)."""
    previous_assistant = ""
    user_number = 0
    for turn in turns:
        if turn.role == "assistant":
            previous_assistant = turn.text
            continue
        user_number += 1
        for fact in facts:
            if fact.first_user_turn is None and mentions(fact.value, turn.text):
                fact.first_user_turn = user_number
                asked = asks_for(previous_assistant, fact.label, fact.ask_patterns)
                fact.disclose = "opening" if user_number == 1 else "on_request" if asked else \
                    f"after_turn:{user_number}"


def hide_values(text: str, facts: list[FactDraft]) -> str:
    """A request with every hidden fact's value replaced by <its label> (a request may not state one)."""
    for fact in facts:
        if fact.disclose != "opening" and fact.value in text:
            text = text.replace(fact.value, f"<{fact.label}>")
    return text


def rule_profile(user_texts: list[str], lang: str) -> dict[str, object]:
    """Verbosity, typing habits and the message length range, from the user's own messages."""
    lengths = [len(t) for t in user_texts if t.strip()] or [1]
    median = statistics.median(lengths)
    typing: list[str] = []
    if median < 40:
        typing.append("short_messages")
    lettered = [t for t in user_texts if re.search("[A-Za-z]", t)]
    if lang == "en" and lettered and sum(t == t.lower() for t in lettered) >= 0.8 * len(lettered):
        typing.append("lowercase")
    if sum(not re.search(r"[.?!。？！]", t) for t in user_texts) >= 0.8 * len(user_texts):
        typing.append("no_punctuation")
    return {
        "verbosity": "terse" if median < 40 else "verbose" if median > 400 else "normal",
        "typing": tuple(typing),
        "message_chars": (max(1, min(lengths) // 2), min(8000, max(max(lengths) * 2, 20))),
    }


def rule_goal(turns: list[MinedTurn], conv: MinedConversation, facts: list[FactDraft], lang: str,
              max_items: int = 5) -> list[dict[str, object]]:
    """One goal item per topic: the first message, and each message that changes the topic; the user's repeats and
    rephrasings of it become its rephrasings."""
    items: list[dict[str, object]] = []
    reaction_before: str | None = None
    for turn in turns:
        if turn.role == "assistant":
            row = conv.signals.get(turn.turn_index)
            reaction_before = reaction_of(row) if row is not None else None
            continue
        text = hide_values(turn.text.strip(), facts)[:400]
        if not text:
            continue
        if not items or reaction_before == "abandon_topic":
            if len(items) >= max_items:
                break
            question = (f"Does the reply do what the user asked for here: “{text[:200]}”?" if lang == "en"
                        else f"这条回复是否做到了用户在这里要求的事：“{text[:200]}”？")
            items.append({"id": f"item_{len(items) + 1}", "request": text, "rephrasings": [],
                          "check": {"question": question}})
        elif reaction_before in ("repeat", "rephrase") and text != items[-1]["request"]:
            rephrasings = items[-1]["rephrasings"]
            assert isinstance(rephrasings, list)
            rephrasings.append(text)
    return items


def derived_rubric(profile: dict[str, object], facts: list[FactDraft], lang: str) -> list[dict[str, str]]:
    """Personalised rubric items derived by rule from the profile and facts (never from the reactions they will be
    tested against)."""
    en = lang == "en"
    items = [{"id": "language", "text": "Replies in English." if en else "用中文回复。",
              "provenance": "derived:lang"}]
    if profile.get("verbosity") == "terse":
        items.append({"id": "brevity", "text": "Answers in three sentences or fewer." if en else "三句话以内回答。",
                      "provenance": "derived:verbosity"})
    elif profile.get("verbosity") == "verbose":
        items.append({"id": "detail", "text": "Explains in enough detail." if en else "解释得足够详细。",
                      "provenance": "derived:verbosity"})
    if facts:
        items.append({"id": "no_repeat_questions",
                      "text": "Does not ask again for details already given." if en else "不重复询问已经提供的信息。",
                      "provenance": "derived:facts"})
    return items
