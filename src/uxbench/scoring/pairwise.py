"""The pairwise LLM judge: which of two replies to the same context would the user prefer?

Every pair is judged in both orders: once with candidate a shown as Reply A (order "ab"), once with candidate b
shown as Reply A (order "ba"). The two answers are mapped back to candidates and combined: the same choice in
both orders is the outcome; a disagreement is a tie and counts as a position inconsistency (the judge followed
the position, not the reply); an unreadable answer in either order leaves the pair undecided (counted, never
dropped). Templates: `scoring/templates/pairwise/` (see the README there).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.scoring.judgement import ChatModel
from uxbench.scoring.pairwise_verdict import Pick, parse_pick
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import JudgeLang
from uxbench.scoring.prompts.render import EMPTY_MESSAGE, render_history, resolve_lang, truncate
from uxbench.scoring.prompts.templates_io import LANGS, Lang

Order = Literal["ab", "ba"]
Winner = Literal["a", "b", "tie"]
ORDERS: tuple[Order, Order] = ("ab", "ba")
PairwiseStrategy = Literal["zero_shot", "cot"]
TEMPLATES = PackageTemplates("uxbench.scoring", "Pairwise judge")


class PairwiseSettings(BaseModel):
    """How the pairwise judge is asked. Part of the judge's identity (with its model spec and templates)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: PairwiseStrategy = "zero_shot"
    """zero_shot (answer A, B or tie only) or cot (reason first, then a last line `Verdict: X`)."""
    lang: JudgeLang = "auto"
    """Template language (auto: by the conversation's script)."""
    temperature: float | None = 0.0
    max_tokens: int | None = Field(default=None, ge=1)
    """Token cap of the judge's answer (None: the provider's)."""
    reasoning_effort: str | None = None
    max_chars: int = Field(default=4000, ge=200)
    """Each message, the query and each reply are cut to this many characters, with a visible marker."""


@dataclass(frozen=True)
class OrderVerdict:
    """The judge's answer in one order, mapped back to the candidates."""

    order: Order
    pick: Pick | None
    """What the judge chose by position: A (the reply shown first), B, tie; None when unreadable."""
    winner: Winner | None
    """The candidate that pick means: a, b or tie; None when unreadable."""
    note: str
    output: ModelOutput


@dataclass(frozen=True)
class PairOutcome:
    """Both orders combined."""

    winner: Winner | None
    """a, b or tie (an explicit tie in both orders, or a position inconsistency); None when an order is
    unreadable."""
    consistent: bool | None
    """Both orders named the same candidate (or both said tie); None when an order is unreadable."""


def candidate_of(pick: Pick | None, order: Order) -> Winner | None:
    """The candidate a positional pick means: in order "ab" Reply A is candidate a, in "ba" it is b."""
    if pick is None:
        return None
    if pick == "tie":
        return "tie"
    first, second = ("a", "b") if order == "ab" else ("b", "a")
    return first if pick == "A" else second  # type: ignore[return-value]


def combine(first: Winner | None, second: Winner | None) -> PairOutcome:
    """The outcome of a pair from its two orders' winners (candidates, not positions)."""
    if first is None or second is None:
        return PairOutcome(winner=None, consistent=None)
    if first == second:
        return PairOutcome(winner=first, consistent=True)
    return PairOutcome(winner="tie", consistent=False)


class PairwiseJudge:
    """Renders the pairwise templates, calls a chat model in one or both orders, reads the choice."""

    mode = "pairwise"

    def __init__(self, settings: PairwiseSettings | None = None) -> None:
        self.options = settings or PairwiseSettings()
        self._config = GenerateConfig(temperature=self.options.temperature, max_tokens=self.options.max_tokens,
                                      reasoning_effort=self.options.reasoning_effort)

    def langs(self) -> tuple[Lang, ...]:
        return LANGS if self.options.lang == "auto" else (self.options.lang,)

    def template_names(self, lang: Lang) -> list[str]:
        return [f"pairwise/{lang}/system.txt", f"pairwise/{lang}/{self.options.strategy}.txt"]

    def template_hashes(self) -> dict[str, str]:
        return TEMPLATES.hashes(name for lang in self.langs() for name in self.template_names(lang))

    def settings(self) -> dict[str, Any]:
        """What decides the answers (goes into the judge's identity)."""
        return {"mode": self.mode, **self.options.model_dump(mode="json")}

    def generate_config(self) -> GenerateConfig:
        return self._config

    def lang_of(self, item: JudgeInput, reply_a: str, reply_b: str) -> Lang:
        """One language for both orders: the option, the item's own, else detected from everything shown."""
        return resolve_lang(JudgeInput(item.history, item.query, f"{reply_a}\n{reply_b}", item.lang),
                            self.options.lang)

    def messages(self, item: JudgeInput, reply_a: str, reply_b: str, order: Order) -> list[Message]:
        """The call for one order: candidate a first in "ab", candidate b first in "ba"."""
        lang = self.lang_of(item, reply_a, reply_b)
        first, second = (reply_a, reply_b) if order == "ab" else (reply_b, reply_a)
        limit = self.options.max_chars

        def body(text: str) -> str:
            text = text.strip()
            return truncate(text, limit, lang) if text else EMPTY_MESSAGE[lang]

        system_name, instruction_name = self.template_names(lang)
        values = {"history": render_history(item.history, lang, limit), "query": body(item.query),
                  "reply_a": body(first), "reply_b": body(second)}
        return [Message(role="system", content=TEMPLATES.text(system_name)),
                Message(role="user", content=TEMPLATES.text(instruction_name, values))]

    async def judge_order(
        self, item: JudgeInput, reply_a: str, reply_b: str, order: Order, model: ChatModel
    ) -> OrderVerdict:
        """One call. Raises `ModelError` when the call fails for good."""
        output = await model.generate(self.messages(item, reply_a, reply_b, order), self._config)
        pick, note = parse_pick(output.text, reasoning=output.reasoning)
        return OrderVerdict(order=order, pick=pick, winner=candidate_of(pick, order), note=note, output=output)

    async def compare(
        self, item: JudgeInput, reply_a: str, reply_b: str, model: ChatModel
    ) -> tuple[PairOutcome, OrderVerdict, OrderVerdict]:
        """Both orders (concurrently) and their combination."""
        ab, ba = await asyncio.gather(*(self.judge_order(item, reply_a, reply_b, o, model) for o in ORDERS))
        return combine(ab.winner, ba.winner), ab, ba
