"""A tool-call round trip against llama.cpp's own OpenAI-compatible server (a server this project did not write),
serving the embedded SmolLM2-135M-Instruct GGUF with llama-cpp-python's `chatml-function-calling` chat format
(SmolLM2's template is ChatML; its own template has no tool syntax, so the server's grammar-constrained format is
what makes a 135M model answer with a well-formed call).

Opt-in, like tests/integration/test_llama_cpp_server.py: set `UXBENCH_LLAMA_PYTHON` to a Python that has
`llama-cpp-python[server]`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from llama_support import llama_server as serve_llama

from uxbench.data.schema import Message
from uxbench.models.api import GenerateConfig, ToolSpec
from uxbench.models.registry import create_model_api

LLAMA_PYTHON = os.environ.get("UXBENCH_LLAMA_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LLAMA_PYTHON, reason="set UXBENCH_LLAMA_PYTHON to a Python with llama-cpp-python[server]"),
]
WEATHER = ToolSpec(name="get_weather", description="The weather in a city.",
                   parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from uxbench.models.embedded import embedded_model

    with serve_llama(str(LLAMA_PYTHON), embedded_model(), tmp_path_factory.mktemp("llama") / "server.log",
                     "--chat_format", "chatml-function-calling") as base:
        yield base


async def test_tool_call_round_trip(server: str) -> None:
    api = create_model_api("openai:smollm2", {"base_url": server, "api_key_env": "UXBENCH_NO_KEY"})
    ask = [Message(role="user", content="What is the weather in Paris? Use the tool.")]
    # tool_choice "auto": the chatml-function-calling format takes auto, none or one named tool, not "required"
    # (it answers that with HTTP 500); its grammar then lets the model write a call or a message
    out = await api.generate(ask, GenerateConfig(tools=(WEATHER,), tool_choice="auto", max_tokens=64,
                                                 temperature=0.0))
    assert out.tool_calls, out
    call = out.tool_calls[0]
    assert call.name == "get_weather" and call.raw_arguments is None and isinstance(call.arguments, dict)
    follow = [*ask, Message(role="assistant", content="", tool_calls=(call,)),
              Message(role="tool", content='{"city": "Paris", "sky": "sunny"}', tool_call_id=call.id, name=call.name)]
    final = await api.generate(follow, GenerateConfig(tools=(WEATHER,), tool_choice="none", max_tokens=48,
                                                      temperature=0.0))
    await api.aclose()
    assert final.text.strip() and not final.tool_calls
