"""`uxbench judge serve`: the served lite judge, called with the official openai SDK and through `uxbench run`'s
openai provider, gives the judge's own probability and the same Task 1 metrics as `lite:DIR`."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("judge")

import aiohttp  # noqa: E402
import judge_data  # noqa: E402

from uxbench.judge_train.evaluate import run_judge  # noqa: E402
from uxbench.judge_train.serve import JudgeServer  # noqa: E402
from uxbench.judge_train.train import TrainOptions, train_lite  # noqa: E402
from uxbench.models.api import GenerateConfig  # noqa: E402
from uxbench.models.registry import create_model_api  # noqa: E402
from uxbench.scoring.prompts import JudgeInput, PromptOptions  # noqa: E402
from uxbench.scoring.prompts.render import build_messages  # noqa: E402
from uxbench.testing.server import BackgroundServer  # noqa: E402

NAME = "my-judge"


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("serve")
    data = judge_data.write(root / "feedback.jsonl", judge_data.rows(70, seed=4))
    train_lite(TrainOptions(data=[str(data)], out=root / "judge", encoder="hashing", n_boot=50))
    return root / "judge"


@pytest.fixture(scope="module")
def served(trained: Path) -> Iterator[str]:
    server = JudgeServer(create_model_api(f"lite:{trained}"), name=NAME)
    with BackgroundServer(server.app) as srv:
        yield f"{srv.url}/v1"


def _messages(query: str, response: str) -> list[dict[str, str]]:
    msgs = build_messages(JudgeInput(history=[], query=query, response=response),
                          PromptOptions(formulation="binary", strategy="zero_shot"))
    return [{"role": m.role, "content": m.content} for m in msgs]


def test_openai_sdk_top_logprobs_give_the_judges_own_probability(trained: Path, served: str) -> None:
    require_extra("dev")
    import openai
    client = openai.OpenAI(base_url=served, api_key="not-needed")
    assert [m.id for m in client.models.list().data] == [NAME]
    judge = create_model_api(f"lite:{trained}")
    cases = [("红烧肉怎么做？", "关于红烧肉怎么做：第一步准备好，第二步按顺序操作，第三步检查结果。"),
             ("红烧肉怎么做？", "抱歉，作为一个AI，我无法提供这方面的帮助。"),
             ("how to make cold brew?", "There is a long history behind this. " * 5)]
    for query, response in cases:
        messages = _messages(query, response)
        reply = client.chat.completions.create(model=NAME, messages=messages,  # type: ignore[arg-type]
                                               logprobs=True, top_logprobs=5, max_tokens=4, temperature=0)
        first = reply.choices[0].logprobs.content[0]  # type: ignore[union-attr,index]
        mass = {t.token: math.exp(t.logprob) for t in first.top_logprobs}
        good, bad = ("好", "差") if "好" in mass else ("good", "bad")
        score = mass[good] / (mass[good] + mass[bad])
        own = asyncio.run(judge.generate(
            [m for m in build_messages(JudgeInput(history=[], query=query, response=response),
                                       PromptOptions(formulation="binary", strategy="zero_shot"))],
            GenerateConfig()))
        p = math.exp(own.choice_logprobs[good])  # type: ignore[index]
        assert score == pytest.approx(p, abs=1e-6)
        assert reply.choices[0].message.content == (good if p >= 0.5 else bad)


def test_run_through_the_server_gives_the_same_metrics_as_the_provider(trained: Path, served: str,
                                                                     tmp_path: Path) -> None:
    data = str(trained / "test.jsonl")
    direct = asyncio.run(run_judge(f"lite:{trained}", {}, data, runs_root=tmp_path / "a", n_boot=200, seed=0))
    remote = asyncio.run(run_judge(f"openai:{NAME}", {"base_url": served}, data, runs_root=tmp_path / "b",
                                   n_boot=200, seed=0))
    assert remote.summary["n_errors"] == 0
    assert remote.summary["metrics"]["all"] == direct.summary["metrics"]["all"]
    assert remote.summary["calibration"]["ece"] == pytest.approx(direct.summary["calibration"]["ece"], abs=1e-9)
    for case, (gold, verdict, score) in direct.verdicts.items():
        assert remote.verdicts[case][:2] == (gold, verdict)
        assert remote.verdicts[case][2] == pytest.approx(score, abs=1e-9)


def test_health_models_errors_and_batching(served: str) -> None:
    async def go() -> None:
        async with aiohttp.ClientSession() as session:
            bodies = [{"model": NAME, "messages": _messages(f"问题{i}？", f"回答{i}。"), "logprobs": True,
                       "top_logprobs": 2} for i in range(24)]
            answers = await asyncio.gather(*(session.post(f"{served}/chat/completions", json=b) for b in bodies))
            assert {a.status for a in answers} == {200}
            async with session.get(served.removesuffix("/v1") + "/health") as health:
                state = json.loads(await health.text())
            assert state["status"] == "ok" and state["served"] >= 24 and state["max_batch_seen"] > 1
            async with session.post(f"{served}/chat/completions",
                                    json={"model": NAME, "messages": [{"role": "user", "content": "hi"}]}) as bad:
                assert bad.status == 400
                assert "judge prompt" in (await bad.json())["error"]["message"]
            async with session.post(f"{served}/chat/completions",
                                    json={"model": "other", "messages": bodies[0]["messages"]}) as other:
                assert other.status == 404
            async with session.post(f"{served}/chat/completions",
                                    json={**bodies[0], "stream": True}) as stream:
                assert stream.status == 400 and "stream" in (await stream.json())["error"]["message"]

    asyncio.run(go())


def test_the_serve_command_listens_and_answers(trained: Path) -> None:
    import os
    import re
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "uxbench", "judge", "serve", f"lite:{trained}", "--port", "0",
                             "--name", NAME], stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/v1", line)
        assert found, line
        with urllib.request.urlopen(f"{found.group(1)}/health", timeout=30) as resp:
            assert json.loads(resp.read())["model"] == NAME
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("k", [1, 5, 20])
def test_openai_sdk_gets_as_many_top_logprobs_as_it_asks_for(served: str, k: int) -> None:
    require_extra("dev")
    import openai
    client = openai.OpenAI(base_url=served, api_key="not-needed")
    messages = _messages("红烧肉怎么做？", "关于红烧肉怎么做：第一步准备好，第二步按顺序操作。")
    reply = client.chat.completions.create(model=NAME, messages=messages,  # type: ignore[arg-type]
                                           logprobs=True, top_logprobs=k, max_tokens=4)
    first = reply.choices[0].logprobs.content[0]  # type: ignore[union-attr,index]
    tops = first.top_logprobs
    assert len(tops) == k and len({t.token for t in tops}) == k
    assert [t.logprob for t in tops] == sorted((t.logprob for t in tops), reverse=True)
    assert tops[0].token == first.token == reply.choices[0].message.content
    if k >= 2:  # the two verdict words carry all the mass; the rest is OpenAI's "never"
        assert math.exp(tops[0].logprob) + math.exp(tops[1].logprob) == pytest.approx(1.0)
        assert all(t.logprob == -9999.0 for t in tops[2:])
    assert reply.usage is not None and 0 < reply.usage.prompt_tokens < sum(len(m["content"]) for m in messages)


def test_every_error_is_the_json_envelope(served: str) -> None:
    base = served.removesuffix("/v1")
    good = {"model": NAME, "messages": _messages("问题？", "回答。")}
    cases: list[tuple[str, str, bytes | None, int, str]] = [
        ("POST", "/v1/chat/completions", json.dumps({**good, "top_logprobs": 21, "logprobs": True}).encode(), 400,
         "between 0 and 20"),
        ("POST", "/v1/chat/completions", json.dumps({**good, "top_logprobs": -1, "logprobs": True}).encode(), 400,
         "between 0 and 20"),
        ("POST", "/v1/chat/completions", json.dumps({**good, "top_logprobs": "5", "logprobs": True}).encode(), 400,
         "'top_logprobs' must be an integer"),
        ("POST", "/v1/chat/completions", json.dumps({**good, "top_logprobs": 2}).encode(), 400,
         "needs 'logprobs': true"),
        ("POST", "/v1/chat/completions", json.dumps({**good, "stream": "false"}).encode(), 400,
         "'stream' must be a boolean"),
        ("POST", "/v1/chat/completions", json.dumps({"messages": good["messages"]}).encode(), 400,
         "'model' is required"),
        ("POST", "/v1/chat/completions", b"{not json", 400, "not JSON"),
        ("POST", "/v1/chat/completions", json.dumps({**good, "n": 2}).encode(), 400, "n > 1"),
        ("POST", "/v1/chat/completions", b"x" * (64 * 1024 * 1024 + 10), 413, "over 64 MiB"),
        ("GET", "/v1/chat/completions", None, 405, "GET is not allowed"),
        ("GET", "/v1/nothing-here", None, 404, "unknown path /v1/nothing-here"),
        ("POST", "/v1/completions", b"{}", 404, "unknown path"),
    ]

    async def go() -> None:
        async with aiohttp.ClientSession() as session:
            for method, path, data, status, text in cases:
                async with session.request(method, base + path, data=data,
                                           headers={"Content-Type": "application/json"}) as resp:
                    assert resp.status == status, (path, data and data[:60], await resp.text())
                    assert resp.content_type == "application/json", path
                    error = (await resp.json())["error"]
                    assert text in error["message"] and error["code"] == status, error
                    assert "invalid literal" not in error["message"]
            async with session.post(f"{served}/chat/completions", json={**good, "stream": False}) as ok:
                assert ok.status == 200  # a real boolean false is fine

    asyncio.run(go())


def test_max_batch_of_zero_is_refused_before_serving(trained: Path) -> None:
    from typer.testing import CliRunner

    from uxbench.cli.main import app
    from uxbench.errors import ConfigError

    result = CliRunner().invoke(app, ["judge", "serve", f"lite:{trained}", "--max-batch", "0", "--port", "0"])
    assert result.exit_code == 2 and "--max-batch 0" in result.output and "Traceback" not in result.output
    with pytest.raises(ConfigError, match="at least 1"):
        JudgeServer(create_model_api(f"lite:{trained}"), max_batch=0)
