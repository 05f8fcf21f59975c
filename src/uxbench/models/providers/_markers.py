"""Prompt markers and fabricated logprobs shared by the scripted provider and the loopback server.

Tests steer these fake models by writing markers into a prompt: `[[SAY:x]]` (answer x),
`[[GOLD:good]]` (the oracle's verdict), `[[P:0.8]]` (probability of the first answer token),
`[[THINK:x]]` (reasoning text) and `[[FAULT:kind:n]]` (failures, loopback server only).
"""

from __future__ import annotations

import math
import re

SAY_RE = re.compile(r"\[\[SAY:(.*?)\]\]", re.S)
GOLD_RE = re.compile(r"\[\[GOLD:(good|bad|好|差)\]\]", re.I)
P_RE = re.compile(r"\[\[P:([0-9]*\.?[0-9]+)\]\]")
THINK_RE = re.compile(r"\[\[THINK:(.*?)\]\]", re.S)
FAULT_RE = re.compile(r"\[\[FAULT:([a-z0-9_]+)(?::(\d+))?\]\]", re.I)
_CJK_RE = re.compile(r"[\u3400-\u9fff]")
_TOKEN_RE = re.compile(r"[\u3400-\u9fff]|\s*[A-Za-z0-9_']+|\s*[^\sA-Za-z0-9_\u3400-\u9fff]|\s+")

_OTHER_VERDICT = {"好": "差", "差": "好", "good": "bad", "bad": "good"}
_FILLERS = ("的", "the", "是", "。", " I", "不", "a", ".", "\n", "我", "It", "，", "ok", "嗯", "yes", "no")
DEFAULT_FIRST_LOGPROB = -0.1
_LATER_LOGPROB = -0.01


def split_think(text: str) -> tuple[str | None, str]:
    """Split `<think>...</think>answer` (Qwen3, DeepSeek-R1 without a reasoning parser) into parts."""
    if "</think>" not in text:
        return None, text
    head, _, answer = text.partition("</think>")
    return head.replace("<think>", "").strip(), answer.lstrip()


def is_chinese(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def verdict_word(label: str, chinese: bool) -> str:
    good = label.lower() in ("good", "好")
    if chinese:
        return "好" if good else "差"
    return "good" if good else "bad"


def marker_probability(text: str) -> float | None:
    found = P_RE.search(text)
    if found is None:
        return None
    return min(1.0, max(1e-6, float(found.group(1))))


def fake_tokens(text: str) -> list[str]:
    """Split text the way a tokenizer roughly would: one token per CJK character or per word."""
    return _TOKEN_RE.findall(text)


def other_verdict(token: str) -> str:
    return _OTHER_VERDICT.get(token.strip().lower(), "差" if token.strip() != "差" else "好")


def fake_logprobs(
    answer: str, k: int, n_tokens: int, probability: float | None
) -> list[tuple[str, float, list[tuple[str, float]]]]:
    """(token, logprob, top-k alternatives) for the first `n_tokens` tokens of `answer`.

    The first token gets log(probability) (or -0.1) and the opposite verdict word second, so a
    judge reading the logprobs sees a real two-way split; later tokens are near-certain.
    """
    out: list[tuple[str, float, list[tuple[str, float]]]] = []
    k = max(1, k)
    for index, token in enumerate(fake_tokens(answer)[:n_tokens]):
        if index == 0:
            first = math.log(probability) if probability is not None else DEFAULT_FIRST_LOGPROB
            rest_mass = max(1e-9, 1.0 - math.exp(first))
            top = [(token, first), (other_verdict(token), math.log(rest_mass * 0.9))]
        else:
            top = [(token, _LATER_LOGPROB)]
        floor = min(lp for _, lp in top)
        seen = {t for t, _ in top}
        for filler in _FILLERS:
            if len(top) >= k:
                break
            if filler not in seen:
                floor -= 1.0
                top.append((filler, floor))
                seen.add(filler)
        chosen = top[0][1]
        top.sort(key=lambda item: -item[1])
        out.append((token, chosen, top[:k]))
    return out
