"""Documented steps to shorten a judge's input after the judge rejected it as too long.

Step 0 is the full input. Each later step is tried only after the judge answered "too long" to the one before
(`ContextLengthError`), and the step used is recorded with the score:

| step | history kept | query | reply |
|---|---|---|---|
| 0 | all | full | full |
| 1 | last 6 messages (oldest turns dropped first) | full | full |
| 2 | last 2 messages | full | middle cut to 4,000 characters |
| 3 | none | cut to 1,000 characters | middle cut to 1,500 characters |

A reply is cut in the middle (its opening and its ending both matter to a user) with a visible marker.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from uxbench.scoring.prompts.judge_input import JudgeInput


@dataclass(frozen=True)
class ShortenStep:
    history_messages: int | None = None
    """Keep only the last N history messages (None = all)."""
    query_chars: int | None = None
    reply_chars: int | None = None


SHORTEN_STEPS: tuple[ShortenStep, ...] = (
    ShortenStep(),
    ShortenStep(history_messages=6),
    ShortenStep(history_messages=2, reply_chars=4000),
    ShortenStep(history_messages=0, query_chars=1000, reply_chars=1500),
)


def cut_middle(text: str, limit: int) -> str:
    """Keep the first and last halves of `limit` characters, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return f"{text[:head]}\n…[{len(text) - limit} characters cut]…\n{text[len(text) - tail:]}"


def shorten(item: JudgeInput, step: int) -> JudgeInput:
    """The input at shortening step `step` (0 = unchanged)."""
    s = SHORTEN_STEPS[step]
    history = item.history
    if s.history_messages is not None:
        history = history[len(history) - s.history_messages :] if s.history_messages else []
    query = item.query[: s.query_chars] if s.query_chars is not None else item.query
    response = cut_middle(item.response, s.reply_chars) if s.reply_chars is not None else item.response
    return replace(item, history=list(history), query=query, response=response)
