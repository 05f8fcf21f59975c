"""A verdict read from probabilities, not text: score = p(good) / (p(good) + p(bad)) at the first answer token.

This is the reward-model (GRM) protocol of the method, shared by the GRM scorer of Tasks 2/3 and by Task 1's
`--verdict-from logprobs`:

1. Local models (`hf`) report the exact probability of each verdict word starting the answer
   (`ModelOutput.choice_logprobs`): both are known, the score is exact.
2. API models report the top-k alternatives of the first tokens (`ModelOutput.logprobs`). The position read is
   the first whose emitted token is not blank (a leading "\\n" or " " token is skipped). Candidates whose text,
   NFKC-normalised (full-width forms), stripped and lower-cased, equals a verdict word are merged (" good",
   "Good", "ＧＯＯＤ" all count as good; their probabilities add up).
3. Both words among the top-k: score = p_good / (p_good + p_bad), status `full`.
   Only one: its own probability is the evidence (score = p_good, or 1 - p_bad), status `partial`: a verdict
   word at 0.3 with nothing else known is not certainty.
   Neither: status `unscorable` (counted by the caller, never dropped).
4. Verdict = score >= threshold (default 0.5). The emitted token is read too; a verdict that disagrees with the
   word the model actually wrote is flagged as a mismatch (counted, the probability verdict stands).
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from uxbench.models.api import ModelOutput, TopLogprob

ScoreStatus = Literal["full", "partial", "unscorable"]


@dataclass(frozen=True)
class ProbabilityVerdict:
    """The outcome of reading one output's verdict probabilities."""

    status: ScoreStatus
    score: float | None
    """p(good) / (p(good) + p(bad)) (full), or the one-sided estimate (partial); None when unscorable."""
    label: Literal["good", "bad"] | None
    """score >= threshold -> good; None when unscorable."""
    p_good: float | None
    """Probability mass of the good word at the read position (None: not among the candidates)."""
    p_bad: float | None
    emitted: Literal["good", "bad"] | None
    """The verdict word the model actually emitted at that position, if it emitted one."""
    position: int | None
    """Index of the token position read (0 = first; > 0 when leading blank tokens were skipped)."""
    source: str
    """`choice logprobs` (exact, local model) or `top logprobs` (API top-k)."""

    @property
    def mismatch(self) -> bool:
        """The probability verdict disagrees with the emitted verdict word."""
        return self.label is not None and self.emitted is not None and self.label != self.emitted

    @property
    def note(self) -> str:
        if self.status == "unscorable":
            return f"{self.source}: neither verdict word among the candidates"
        text = f"{self.source}: p(good)={self.score:.3f}"
        if self.status == "partial":
            text += " (partial: only one verdict word among the top candidates)"
        if self.mismatch:
            text += f"; emitted {self.emitted!r} disagrees"
        return text


@lru_cache(maxsize=8192)  # pure; a GRM answer's 4 x 20 candidates repeat the same few tokens
def normalize_token(token: str) -> str:
    """The comparable form of a token: NFKC (full-width -> ASCII), blanks stripped, lower case."""
    return unicodedata.normalize("NFKC", token).strip().lower()


def _classify(token: str, good: str, bad: str) -> Literal["good", "bad"] | None:
    key = normalize_token(token)
    if key == good:
        return "good"
    if key == bad:
        return "bad"
    return None


def read_probability_verdict(
    output: ModelOutput, good: str, bad: str, *, threshold: float = 0.5
) -> ProbabilityVerdict:
    """Read the verdict probabilities of `output` for the verdict words `good` / `bad` (e.g. 好 / 差)."""
    good_n, bad_n = normalize_token(good), normalize_token(bad)
    choices = output.choice_logprobs
    if choices and good in choices and bad in choices:
        p_good, p_bad = math.exp(choices[good]), math.exp(choices[bad])
        return _finish(p_good, p_bad, _emitted_from_text(output.text, good_n, bad_n), 0, "choice logprobs", threshold)
    position = _first_non_blank(output)
    if position is None:
        return ProbabilityVerdict("unscorable", None, None, None, None, None, None, "top logprobs")
    step = output.logprobs[position]  # type: ignore[index]  # _first_non_blank checked it exists
    candidates = list(step.top)
    if not any(c.token == step.token for c in candidates):
        candidates.append(TopLogprob(token=step.token, logprob=step.logprob))
    mass: dict[str, float] = {}
    for cand in candidates:
        kind = _classify(cand.token, good_n, bad_n)
        if kind is not None:
            mass[kind] = mass.get(kind, 0.0) + math.exp(cand.logprob)
    emitted = _classify(step.token, good_n, bad_n)
    return _finish(mass.get("good"), mass.get("bad"), emitted, position, "top logprobs", threshold)


def _emitted_from_text(text: str, good: str, bad: str) -> Literal["good", "bad"] | None:
    """The verdict word a text starts with (a Latin word must end there: "goodness" is not "good")."""
    t = normalize_token(text)
    for kind, word in (("good", good), ("bad", bad)):
        if t.startswith(word):
            nxt = t[len(word) : len(word) + 1]
            if not word.isascii() or not (nxt.isascii() and nxt.isalnum()):
                return kind  # type: ignore[return-value]  # kind is one of the two literals
    return None


def _first_non_blank(output: ModelOutput) -> int | None:
    for index, step in enumerate(output.logprobs or []):
        if step.token.strip():
            return index
    return None


def _finish(
    p_good: float | None,
    p_bad: float | None,
    emitted: Literal["good", "bad"] | None,
    position: int,
    source: str,
    threshold: float,
) -> ProbabilityVerdict:
    status: ScoreStatus
    if p_good is not None and p_bad is not None and p_good + p_bad > 0.0:
        score, status = p_good / (p_good + p_bad), "full"
    elif p_good is not None and p_bad is None:
        score, status = min(1.0, p_good), "partial"
    elif p_bad is not None and p_good is None:
        score, status = max(0.0, 1.0 - p_bad), "partial"
    else:
        return ProbabilityVerdict("unscorable", None, None, p_good, p_bad, emitted, position, source)
    label: Literal["good", "bad"] = "good" if score >= threshold else "bad"
    return ProbabilityVerdict(status, score, label, p_good, p_bad, emitted, position, source)
