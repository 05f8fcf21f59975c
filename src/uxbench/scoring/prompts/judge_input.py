"""What a judge reads: the conversation so far, the user's last message and the reply to judge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from uxbench.data.schema import JudgeCase, Message


@dataclass(frozen=True)
class JudgeInput:
    """One reply in its context. Task 1 judges a real reply; Tasks 2/3 judge a generated one (Task 3: the
    failed reply is the last assistant turn of `history` and the complaint is `query`)."""

    history: Sequence[Message]
    query: str
    response: str
    lang: Literal["zh", "en"] | None = None

    @classmethod
    def from_judge_case(cls, case: JudgeCase) -> JudgeInput:
        return cls(history=case.history, query=case.query, response=case.response, lang=case.lang)
