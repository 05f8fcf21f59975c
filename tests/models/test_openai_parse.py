"""OpenAIModel.parse_response on written bodies: the output (one validation, usage included) and its errors."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from uxbench.data.schema import ToolCall
from uxbench.errors import TransientModelError
from uxbench.models.api import GenerateConfig, ModelOutput, Usage
from uxbench.models.providers.openai import OpenAIModel

API = OpenAIModel("m", {"base_url": "http://127.0.0.1:1/v1", "api_key_env": "UXBENCH_TEST_NO_SUCH_KEY"})
WHERE = "http://127.0.0.1:1/v1 (model m)"


def body(message: dict[str, Any], **top: Any) -> bytes:
    return orjson.dumps({"choices": [{"message": message, "finish_reason": "stop"}], **top})


def test_a_plain_answer() -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 2}}
    out = API.parse_response(body({"content": "hi"}, usage=usage, model="served"), GenerateConfig(), 0.25)
    assert out == ModelOutput(text="hi", usage=Usage(input_tokens=12, output_tokens=5, reasoning_tokens=2),
                              latency_s=0.25, finish_reason="stop", model="served")
    assert type(out.usage) is Usage and out.tool_calls == [] and not out.cached


def test_missing_parts_take_their_defaults() -> None:
    out = API.parse_response(body({"content": None}, usage="odd"), GenerateConfig(), 0.0)
    assert out == ModelOutput(text="", model="m", finish_reason="stop")
    out = API.parse_response(body({"content": "x"}, usage={"completion_tokens_details": None}), GenerateConfig(), 0)
    assert out.usage == Usage()


def test_reasoning_and_tool_calls() -> None:
    message = {"content": "", "reasoning_content": "thought",
               "tool_calls": [{"id": "c1", "function": {"name": "look", "arguments": '{"q": 1}'}}]}
    out = API.parse_response(body(message), GenerateConfig(), 0.1)
    assert out.reasoning == "thought"
    assert out.tool_calls == [ToolCall(id="c1", name="look", arguments={"q": 1})]
    out = API.parse_response(body({"content": "<think>a</think>b"}), GenerateConfig(), 0.1)
    assert (out.reasoning, out.text) == ("a", "b")


@pytest.mark.parametrize(("message", "top", "said"), [
    ({"content": ["a", "list"]}, {}, "Input should be a valid string"),  # pydantic's word for the field
    ({"content": "x"}, {"usage": {"prompt_tokens": "many"}}, "invalid literal for int()"),
    ({"content": "x"}, {"model": 3}, "Input should be a valid string"),
])
def test_an_unexpected_shape_is_a_transient_error(message: dict[str, Any], top: dict[str, Any], said: str) -> None:
    with pytest.raises(TransientModelError, match="unexpected response shape") as info:
        API.parse_response(body(message, **top), GenerateConfig(), 0.1)
    assert str(info.value).startswith(WHERE) and said in str(info.value)


def test_no_choices_and_not_json() -> None:
    with pytest.raises(TransientModelError, match="empty completion"):
        API.parse_response(b'{"choices": []}', GenerateConfig(), 0.1)
    with pytest.raises(TransientModelError, match="not JSON"):
        API.parse_response(b"<html>", GenerateConfig(), 0.1)
