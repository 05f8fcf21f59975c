"""The scripted fake model: scripts, markers, injected failures, call counting."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, FatalModelError, TransientModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.providers.scripted import ScriptedModel
from uxbench.models.registry import create_model_api

CFG = GenerateConfig()


def ask(text: str) -> list[Message]:
    return [Message(role="system", content="sys"), Message(role="user", content=text)]


def scripted(name: str, **args: str) -> ScriptedModel:
    model = create_model_api(f"scripted:{name}", args)
    assert isinstance(model, ScriptedModel)
    return model


@pytest.mark.parametrize(
    ("script", "prompt", "answer"),
    [
        ("always-good", "这个回答怎么样？", "好"),
        ("always-good", "How was the reply?", "good"),
        ("always-bad", "这个回答怎么样？", "差"),
        ("always-bad", "How was the reply?", "bad"),
        ("echo", "repeat me", "repeat me"),
        ("oracle", "judge this [[GOLD:bad]] please", "bad"),
        ("oracle", "判断一下 [[GOLD:good]]", "好"),
        ("always-bad", "override [[SAY:custom]]", "custom"),
    ],
)
async def test_scripts(script: str, prompt: str, answer: str) -> None:
    out = await scripted(script).generate(ask(prompt), CFG)
    assert out.text == answer
    assert out.model == f"scripted:{script}"
    assert out.usage.input_tokens > 0


async def test_oracle_without_marker() -> None:
    with pytest.raises(FatalModelError, match="GOLD"):
        await scripted("oracle").generate(ask("no marker"), CFG)
    assert (await scripted("oracle", default="unsure").generate(ask("no marker"), CFG)).text == "unsure"


async def test_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_bytes(
        orjson.dumps(
            {
                "rules": [
                    {"pattern": r"^\s*hello", "response": "hi there"},
                    {"pattern": "bye", "response": "ciao"},
                ],
                "default": "what?",
            }
        )
    )
    model = scripted(f"file:{rules}")
    assert (await model.generate(ask("hello bye"), CFG)).text == "hi there"
    assert (await model.generate(ask("ok bye"), CFG)).text == "ciao"
    assert (await model.generate(ask("nothing"), CFG)).text == "what?"
    identity = model.cache_identity()
    rules.write_bytes(orjson.dumps([{"pattern": "x", "response": "y"}]))
    changed = scripted(f"file:{rules}")
    assert changed.cache_identity() != identity  # editing the rules must not reuse cached answers
    with pytest.raises(FatalModelError, match="No rule"):
        await changed.generate(ask("nothing"), CFG)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"rules": 3}', b'[{"pattern": "(", "response": "x"}]', b'[{"response": "x"}]'],
)
def test_bad_rules_files(tmp_path: Path, content: bytes) -> None:
    rules = tmp_path / "rules.json"
    rules.write_bytes(content)
    with pytest.raises(ConfigError):
        scripted(f"file:{rules}")


def test_unknown_script_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="always-good"):
        scripted("always-great")
    with pytest.raises(ConfigError, match="does not exist"):
        scripted(f"file:{tmp_path / 'none.json'}")


async def test_fail_first_n_per_prompt_and_counters() -> None:
    model = scripted("always-good", fail_first_n="2")
    before = ScriptedModel.total_calls
    for prompt in ("a", "b"):
        for _ in range(2):
            with pytest.raises(TransientModelError):
                await model.generate(ask(prompt), CFG)
        assert (await model.generate(ask(prompt), CFG)).text == "good"
    assert model.calls == 6
    assert sorted(model.calls_by_prompt.values()) == [3, 3]
    assert ScriptedModel.total_calls - before == 6


async def test_reasoning_stop_and_max_tokens() -> None:
    model = scripted("echo", reasoning="thinking hard")
    out = await model.generate(ask("one two three four"), GenerateConfig(max_tokens=2))
    assert (out.text, out.finish_reason, out.reasoning) == ("one two", "length", "thinking hard")
    assert out.usage.reasoning_tokens == 2
    out = await model.generate(ask("keep this STOP not this"), GenerateConfig(stop=("STOP",)))
    assert out.text == "keep this "


async def test_logprobs_follow_probability_marker() -> None:
    out = await scripted("always-good").generate(ask("好不好 [[P:0.9]]"), GenerateConfig(top_logprobs=3))
    assert out.logprobs is not None and len(out.logprobs) == 1
    first = out.logprobs[0]
    assert first.token == "好" and first.logprob == pytest.approx(math.log(0.9))
    assert [t.token for t in first.top[:2]] == ["好", "差"] and len(first.top) == 3
