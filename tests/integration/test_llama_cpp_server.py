"""Against a real OpenAI-compatible server the project did not write: llama.cpp's, serving SmolLM2-135M-Instruct.

Opt-in (marked slow): llama.cpp's Python server compiles from source (about 9 minutes on 2 cores), so set
`UXBENCH_LLAMA_PYTHON` to a Python that has it:

    python3 -m venv /tmp/llama && CMAKE_ARGS="-DGGML_NATIVE=OFF" /tmp/llama/bin/pip install "llama-cpp-python[server]"
    UXBENCH_LLAMA_PYTHON=/tmp/llama/bin/python pytest -m slow tests/integration/test_llama_cpp_server.py -s

The server works on one request at a time and returns real top logprobs whose first tokens are ordinary English
words: Task 1 with `--verdict-from logprobs` and the Task 2 protocol must finish 30 cases each, every case scored,
partial, or counted unscorable, without runaway answers (a probability verdict asks for a few tokens).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_support import llama_server as serve_llama

from uxbench.orchestrate.runner import execute
from uxbench.orchestrate.spec import JudgeSpec, RunSpec
from uxbench.scoring.scorer import JudgeSettings

LLAMA_PYTHON = os.environ.get("UXBENCH_LLAMA_PYTHON")
N = 30
DEMO = Path(__file__).resolve().parents[2] / "src" / "uxbench" / "data" / "demo"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LLAMA_PYTHON, reason="set UXBENCH_LLAMA_PYTHON to a Python with llama-cpp-python[server]"),
]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from uxbench.models.embedded import embedded_model

    gguf = embedded_model()  # llama.cpp serves the GGUF file itself
    with serve_llama(str(LLAMA_PYTHON), gguf, tmp_path_factory.mktemp("llama") / "server.log") as base:
        yield base


def _cycle(name: str, n: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (DEMO / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    en = [r for r in rows if r.get("lang") == "en"]
    return [{**en[i % len(en)], "cid": f"{en[i % len(en)]['cid']}-{i}"} for i in range(n)]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_task1_logprob_verdicts_finish(tmp_path: Path, llama_server: str) -> None:
    data = tmp_path / "judge"
    data.mkdir()
    _write(data / "uxbench_task1_judge_bad_1k.jsonl", _cycle("demo_task1_judge_bad.jsonl", N // 2))
    _write(data / "uxbench_task1_judge_good_1k.jsonl", _cycle("demo_task1_judge_good.jsonl", N // 2))
    spec = RunSpec(task="judge", model="openai:smollm2", model_args={"base_url": llama_server, "timeout": "120"},
                   data=str(data), out=tmp_path / "t1", concurrency=1, use_cache=False,
                   task_options={"lang": "en", "verdict_from": "logprobs"})
    t0 = time.monotonic()
    result = asyncio.run(execute(spec))
    elapsed = time.monotonic() - t0
    s = result.summary
    records = [json.loads(x) for x in (tmp_path / "t1" / "samples.jsonl").read_text().splitlines()]
    status = Counter(r["extra"].get("score_status") for r in records)
    print(f"\nTask 1 (logprobs) on llama.cpp: {N} cases in {elapsed:.0f} s; score status {dict(status)}; "
          f"predictions {dict(Counter(r['prediction'] for r in records))}")
    assert s["n_selected"] == N and s["n_errors"] == 0 and s["complete"]
    # no verdict of certainty from one word far down the list: a partial score is its own probability
    assert all(r["score"] is None or 0.0 <= r["score"] <= 1.0 for r in records)


def test_task2_protocol_finishes(tmp_path: Path, llama_server: str) -> None:
    data = _write(tmp_path / "eval.jsonl", _cycle("demo_task2_eval.jsonl", N))
    spec = RunSpec(
        task="eval", model="openai:smollm2", model_args={"base_url": llama_server, "timeout": "120"},
        data=str(data), out=tmp_path / "t2", concurrency=1, use_cache=False, task_options={"max_tokens": 64},
        judge=JudgeSpec(model="openai:smollm2", args={"base_url": llama_server, "timeout": "120"},
                        settings=JudgeSettings(lang="en")),
    )
    t0 = time.monotonic()
    result = asyncio.run(execute(spec))
    elapsed = time.monotonic() - t0
    s = result.summary
    judge = s["judges"][s["primary_judge"]]
    print(f"\nTask 2 on llama.cpp: {N} cases generated and scored in {elapsed:.0f} s; "
          f"score status {judge['score_status']}, Good% of scored {judge['metrics']['good_rate_scored_only']}")
    assert s["n_generated"] == N and s["n_errors"] == 0
    assert judge["n_score_errors"] == 0
    assert sum(judge["score_status"].values()) == N  # every case scored, partial or unscorable: none lost
