"""The LLM strategy classifier: answer validation, templates in both languages, the one retry."""

from __future__ import annotations

import asyncio

import pytest

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.scoring.strategies_llm import (
    StrategyClassifier,
    is_strategy_key,
    parse_strategy_answer,
)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"strategy": "apology"}', "apology"),
    ('Sure.\n```json\n{"strategy": "Direct Fix"}\n```', "direct_fix"),
    ('{"strategy": "error-diagnosis"}', "error_diagnosis"),
    ('{"strategy": "澄清"}', "clarification"),
    ("humor", "humor"),
    ("**agreement**", "agreement"),
    ("<think>maybe apology</think>\n{\"strategy\": \"humor\"}", "humor"),
    ('｛"strategy": "humor"｝', None),  # full-width braces are not JSON
    ('{"strategy": "blame"}', None),
    ('{"strategy": "blame"} {"strategy": "apology"}', None),  # the first object with a strategy decides
    ("I would call this an apology.", None),  # prose naming a strategy is not read
    ("apology or agreement", None),
    ("", None),
    ("<think>apology</think>", None),  # reasoning is never read
])
def test_answers_are_validated(text: str, expected: str | None) -> None:
    label, note = parse_strategy_answer(text)
    assert label == expected
    assert note.startswith("unparseable") == (expected is None)


class Scripted:
    """Answers in turn from a list (a test double of `Model.generate`)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.calls: list[list[Message]] = []

    async def generate(self, messages: list[Message], config: GenerateConfig | None = None) -> ModelOutput:
        self.calls.append(messages)
        assert config is not None and config.temperature == 0.0
        return ModelOutput(text=self.answers.pop(0))


def test_one_retry_then_counted_unparseable() -> None:
    classifier = StrategyClassifier()
    model = Scripted("it is an apology", '{"strategy": "apology"}')
    answer = asyncio.run(classifier.classify("不对吧", "抱歉，我算错了。", model))
    assert answer.strategy == "apology" and answer.lang == "zh" and len(answer.outputs) == 2
    assert "after a retry" in answer.note
    retry = model.calls[1]
    assert [m.role for m in retry] == ["user", "assistant", "user"] and retry[1].content == "it is an apology"
    assert "JSON" in retry[2].content

    model = Scripted("no idea", "still no idea")
    answer = asyncio.run(classifier.classify("That's wrong", "Well, hm.", model))
    assert answer.strategy is None and answer.lang == "en" and answer.note.startswith("unparseable")


def test_templates_show_complaint_and_opening_cut_in_both_languages() -> None:
    classifier = StrategyClassifier(max_chars=20)
    for lang, word in (("zh", "用户的抱怨"), ("en", "The user's complaint")):
        (message,) = classifier.messages("c" * 30, "r" * 30, lang)  # type: ignore[arg-type]
        assert word in message.content and "c" * 20 + " …" in message.content and "r" * 21 not in message.content
        assert "$" not in message.content
    assert set(StrategyClassifier().template_hashes()) == {
        "zh/strategy.txt", "zh/strategy_retry.txt", "en/strategy.txt", "en/strategy_retry.txt"}
    assert set(StrategyClassifier("en").template_hashes()) == {"en/strategy.txt", "en/strategy_retry.txt"}


def test_classifier_keys_never_look_like_judge_keys() -> None:
    assert is_strategy_key("strategy-openai-gpt-4o-12345678")
    assert not is_strategy_key("grm-openai-UXBench-GRM-12345678")
    assert not is_strategy_key("pointwise-strategy-12345678")
