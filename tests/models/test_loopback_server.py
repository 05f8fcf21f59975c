"""The loopback OpenAI-compatible server itself, spoken to with a plain HTTP client."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import aiohttp
import orjson
import pytest

from uxbench.testing import LoopbackConfig, LoopbackServer
from uxbench.testing.loopback import messages_key


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(LoopbackConfig(default_answer="fine", model="served-model")) as srv:
        yield srv


async def post(url: str, body: Any) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    async with aiohttp.ClientSession() as session, session.post(url + "/chat/completions", data=data) as resp:
        return resp.status, dict(resp.headers), await resp.read()


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **extra}


async def test_models_endpoint(server: LoopbackServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    async with aiohttp.ClientSession() as session, session.get(server.base_url + "/models") as resp:
        data = await resp.json()
    assert resp.status == 200 and data["data"][0]["id"] == "served-model"


async def test_completion_shape_and_default_answer(server: LoopbackServer) -> None:
    status, _, raw = await post(server.base_url, chat("no marker here"))
    data = orjson.loads(raw)
    assert status == 200 and data["object"] == "chat.completion"
    assert data["model"] == "served-model"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "fine"}
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


async def test_say_uses_last_user_message_only(server: LoopbackServer) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "[[SAY:old]]"},
            {"role": "assistant", "content": "old"},
            {"role": "user", "content": "now [[SAY:new]]"},
        ]
    }
    _, _, raw = await post(server.base_url, body)
    assert orjson.loads(raw)["choices"][0]["message"]["content"] == "new"


async def test_fault_counts_are_per_prompt(server: LoopbackServer) -> None:
    body = chat("[[FAULT:429:2]] counted")
    statuses = [(await post(server.base_url, body))[0] for _ in range(3)]
    assert statuses == [429, 429, 200]
    assert server.attempts_for(body["messages"]) == 3
    assert server.stats.attempts[messages_key(body["messages"])] == 3
    # A different prompt with the same fault starts its own count.
    other = chat("[[FAULT:429:2]] another")
    status, headers, _ = await post(server.base_url, other)
    assert status == 429 and headers["Retry-After"] == "1"


async def test_always_failing_4xx_and_malformed_once(server: LoopbackServer) -> None:
    assert [(await post(server.base_url, chat("[[FAULT:422]]")))[0] for _ in range(3)] == [422] * 3
    status, _, raw = await post(server.base_url, chat("[[FAULT:malformed]] once"))
    assert status == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(raw)
    status, _, raw = await post(server.base_url, chat("[[FAULT:malformed]] once"))
    assert status == 200 and orjson.loads(raw)["choices"]


async def test_bad_request_body_is_400(server: LoopbackServer) -> None:
    assert (await post(server.base_url, b"{nope"))[0] == 400
    assert (await post(server.base_url, {"messages": []}))[0] == 400


async def test_fabricated_logprobs(server: LoopbackServer) -> None:
    _, _, raw = await post(server.base_url, chat("[[SAY:bad]] [[P:0.3]]", logprobs=True, top_logprobs=3))
    entry = orjson.loads(raw)["choices"][0]["logprobs"]["content"][0]
    assert entry["token"] == "bad"
    tops = entry["top_logprobs"]
    assert [t["token"] for t in tops[:2]] == ["good", "bad"]  # 0.7 > 0.3: sorted, chosen second
    assert len(tops) == 3 and all(t["logprob"] <= 0 for t in tops)


async def test_stats_track_in_flight_and_reset() -> None:
    with LoopbackServer(LoopbackConfig(latency_ms=30)) as srv:
        await asyncio.gather(*[post(srv.base_url, chat(f"p{i}")) for i in range(10)])
        assert srv.stats.requests == 10 and srv.stats.in_flight == 0
        assert srv.stats.max_in_flight > 1
        assert srv.stats.statuses[200] == 10
        srv.stats.reset()
        assert srv.stats.requests == 0 and not srv.stats.attempts


async def test_custom_responder() -> None:
    def shout(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        return str(messages[-1]["content"]).upper()

    with LoopbackServer(LoopbackConfig(responder=shout)) as srv:
        _, _, raw = await post(srv.base_url, chat("quiet"))
    assert orjson.loads(raw)["choices"][0]["message"]["content"] == "QUIET"


async def test_command_line_entry_point() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uxbench.testing.loopback", "--port", "0", "--default-answer", "cli"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        if not base_url.startswith("http://127.0.0.1:"):
            proc.kill()
            pytest.fail(f"no base URL printed: {proc.communicate(timeout=10)[1]}")
        _, _, raw = await post(base_url, chat("hi"))
        assert orjson.loads(raw)["choices"][0]["message"]["content"] == "cli"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
