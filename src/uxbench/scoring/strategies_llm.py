"""An LLM classifier of the six recovery strategies (`--strategy-model`), beside the rules of `strategies`.

The model reads the user's complaint and the opening of the recovery reply (each cut at `max_chars`) in our
own template (`scoring/templates/{zh,en}/strategy.txt`) and answers one JSON object `{"strategy": NAME}`.
The answer is validated: a JSON object whose `strategy` is one of the six names (spaces or hyphens for
underscores, case and the Chinese names of the template tolerated), or the bare name alone. Anything else,
prose that merely mentions a name included, is unparseable; after one retry (`strategy_retry.txt`) the
sample is stored with no label and counted as unparseable, never dropped. Reasoning text is not read.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.scoring._text import bare, split_thinking
from uxbench.scoring.judgement import ChatModel, call_totals
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.scoring.prompts.render import detect_lang
from uxbench.scoring.prompts.templates_io import LANGS, Lang
from uxbench.scoring.strategies import STRATEGIES, Strategy

STRATEGY_KEY_PREFIX = "strategy-"
"""Keys of strategy classifiers in a run's `scores` table start with this (judge keys never do)."""
TEMPLATES = PackageTemplates("uxbench.scoring", "Strategy classifier")
TEMPLATE_NAMES = ("strategy.txt", "strategy_retry.txt")
MAX_CHARS = 600
MAX_TOKENS = 256
"""Room for the JSON line and a short preamble; the classifier never needs a long answer."""

_NAMES: dict[str, Strategy] = {name: name for name in STRATEGIES}
_NAMES.update({
    "道歉": "apology", "认同": "agreement", "错误诊断": "error_diagnosis", "幽默": "humor",
    "直接修正": "direct_fix", "澄清": "clarification",
})
_OBJECT = re.compile(r"\{[^{}]*\}")


def is_strategy_key(key: str) -> bool:
    """Whether a key of the run's `scores` table belongs to a strategy classifier rather than a judge."""
    return key.startswith(STRATEGY_KEY_PREFIX)


def _name(value: object) -> Strategy | None:
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip().lower()
    return _NAMES.get(re.sub(r"[\s\-]+", "_", text))


def parse_strategy_answer(text: str) -> tuple[Strategy | None, str]:
    """(strategy, how it was read) or (None, why it could not be)."""
    answer = split_thinking(text).answer
    if not answer.strip():
        return None, "unparseable: empty answer"
    for chunk in _OBJECT.findall(answer):
        try:
            value = json.loads(chunk)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict) and "strategy" in value:
            name = _name(value["strategy"])
            if name is None:
                return None, f"unparseable: strategy {str(value['strategy'])[:40]!r} is not one of the six"
            return name, "json"
    name = _name(bare(answer))
    if name is not None:
        return name, "bare name"
    return None, "unparseable: no JSON object with a strategy and no bare strategy name"


@dataclass
class StrategyAnswer:
    """The classifier's reading of one recovery."""

    strategy: Strategy | None
    """None: unparseable (after the retry)."""
    note: str
    lang: Lang
    outputs: list[ModelOutput] = field(default_factory=list)

    @property
    def final(self) -> ModelOutput | None:
        return self.outputs[-1] if self.outputs else None

    def totals(self) -> dict[str, Any]:
        return call_totals(self.outputs)


class StrategyClassifier:
    """Renders the strategy template, asks a model, validates its answer (one retry)."""

    def __init__(self, lang: Literal["zh", "en", "auto"] = "auto", *, max_chars: int = MAX_CHARS,
                 max_tokens: int = MAX_TOKENS) -> None:
        self.lang = lang
        self.max_chars = max_chars
        self.config = GenerateConfig(temperature=0.0, max_tokens=max_tokens)

    def settings(self) -> dict[str, Any]:
        """What decides the labels besides the model (for the manifest and the classifier's key)."""
        return {"lang": self.lang, "max_chars": self.max_chars, "temperature": self.config.temperature,
                "max_tokens": self.config.max_tokens}

    def template_hashes(self) -> dict[str, str]:
        langs = LANGS if self.lang == "auto" else (self.lang,)
        return TEMPLATES.hashes(f"{lang}/{name}" for lang in langs for name in TEMPLATE_NAMES)

    def resolve_lang(self, complaint: str, reply: str, case_lang: Lang | None = None) -> Lang:
        if self.lang != "auto":
            return self.lang
        return case_lang or detect_lang([complaint, reply])

    def _cut(self, text: str) -> str:
        text = text.strip()
        return text if len(text) <= self.max_chars else text[: self.max_chars] + " …"

    def messages(self, complaint: str, reply: str, lang: Lang) -> list[Message]:
        values = {"complaint": self._cut(complaint), "reply": self._cut(reply)}
        return [Message(role="user", content=TEMPLATES.text(f"{lang}/strategy.txt", values))]

    async def classify(self, complaint: str, reply: str, model: ChatModel,
                       case_lang: Lang | None = None) -> StrategyAnswer:
        """Label one recovery. A failed call raises `ModelError` (the step records it and a rerun retries it)."""
        lang = self.resolve_lang(complaint, reply, case_lang)
        messages = self.messages(complaint, reply, lang)
        first = await model.generate(messages, self.config)
        strategy, note = parse_strategy_answer(first.text)
        result = StrategyAnswer(strategy, note, lang, [first])
        if strategy is None:
            retry = [*messages, Message(role="assistant", content=first.text),
                     Message(role="user", content=TEMPLATES.text(f"{lang}/strategy_retry.txt"))]
            second = await model.generate(retry, self.config)
            result.outputs.append(second)
            strategy, again = parse_strategy_answer(second.text)
            result.strategy = strategy
            result.note = f"{again} (after a retry; first answer: {note})"
        return result
