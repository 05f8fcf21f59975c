"""Verdicts read from probabilities instead of text: p(good) / (p(good) + p(bad)) at the answer's first token.

This is the reward-model protocol of the method (score = p_好 / (p_好 + p_差)), usable by any judge whose
provider returns choice log-probabilities (`hf`) or top log-probabilities of the first token (OpenAI-compatible
servers). When neither verdict token can be found, the caller falls back to reading the text.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from uxbench.models.api import ModelOutput, TopLogprob


class ChoiceScore(NamedTuple):
    label: str
    """"good" or "bad"."""
    p_good: float
    """p(good) / (p(good) + p(bad))."""
    note: str


def choice_verdict(output: ModelOutput, good: str, bad: str) -> ChoiceScore | None:
    """Score from `output.choice_logprobs`, else from the first token's top log-probabilities; None when
    neither verdict token is available."""
    lp_good = lp_bad = None
    source = ""
    if output.choice_logprobs and good in output.choice_logprobs and bad in output.choice_logprobs:
        lp_good, lp_bad = output.choice_logprobs[good], output.choice_logprobs[bad]
        source = "choice logprobs"
    elif output.logprobs:
        first = output.logprobs[0]
        found: dict[str, float] = {}
        # the top list includes the emitted token; without a top list only the emitted token is known
        candidates = first.top or [TopLogprob(token=first.token, logprob=first.logprob)]
        for cand in candidates:
            key = cand.token.strip().lower()
            for name, word in (("good", good), ("bad", bad)):
                if key == word.lower():
                    found[name] = _logaddexp(found.get(name), cand.logprob)
        if not found:
            return None
        lp_good, lp_bad = found.get("good"), found.get("bad")
        source = "first-token top logprobs"
    if lp_good is None and lp_bad is None:
        return None
    p_good = math.exp(lp_good) if lp_good is not None else 0.0
    p_bad = math.exp(lp_bad) if lp_bad is not None else 0.0
    if p_good + p_bad <= 0.0:
        return None
    share = p_good / (p_good + p_bad)
    missing = "" if lp_good is not None and lp_bad is not None else "; only one verdict token among the top"
    return ChoiceScore("good" if share >= 0.5 else "bad", share, f"{source}: p(good)={share:.3f}{missing}")


def _logaddexp(a: float | None, b: float) -> float:
    return b if a is None else max(a, b) + math.log1p(math.exp(-abs(a - b)))
