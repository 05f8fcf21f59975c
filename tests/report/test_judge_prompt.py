"""The prompt a sample page shows is the prompt the judge was sent: runs made by the real `uxbench run` against a
loopback HTTP server that records every request, and for each sample the prompt `report.judge_prompt` rebuilds
from the run directory is one of the message lists the server received, exactly. Task 1 under several
formulations and strategies (two calls for user_modeling), in Chinese and English; Task 2 and Task 3 under a GRM
judge and a chain-of-thought pointwise judge."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.report.judge_prompt import CHANGED, reply_judge_prompt, task1_prompt
from uxbench.testing import LoopbackConfig, LoopbackServer
from uxbench.web.sample_index import load_sample


class Recorder:
    """Every message list the server was sent, as tuples of (role, content)."""

    def __init__(self) -> None:
        self.seen: set[tuple[tuple[str, str], ...]] = set()
        self.lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        with self.lock:
            self.seen.add(tuple((str(m["role"]), str(m["content"])) for m in messages))
        last = str(messages[-1]["content"])
        if "JSON" in last or "json" in last:  # a rubric answer
            return json.dumps({"helpfulness": 4, "correctness": 4, "coherence": 3, "complexity": 2, "verbosity": 2})
        if "画像" in last or ("profile" in last.lower() and "good" not in last[-200:]):
            return "A busy user who wants short answers."
        return "好" if any("\u4e00" <= ch <= "\u9fff" for ch in last) else "good"


def _run(*args: str) -> None:
    result = CliRunner().invoke(app, ["run", "--quiet", "--no-cache", *args])
    assert result.exit_code == 0, result.output


def _samples(run: Path) -> list[tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]]:
    db = sqlite3.connect(run / "samples.sqlite")
    ids = [sid for (sid,) in db.execute("SELECT sample_id FROM records")]
    db.close()
    return [load_sample(run, sid) for sid in ids]


@pytest.fixture(scope="module")
def server() -> Any:
    recorder = Recorder()
    with LoopbackServer(LoopbackConfig(responder=recorder)) as srv:
        yield srv, recorder


@pytest.mark.parametrize("options", [
    ("--strategy", "zero_shot"),
    ("--strategy", "cot", "--lang", "en"),
    ("--strategy", "user_modeling"),
    ("--strategy", "few_shot", "--lang", "zh"),
    ("--formulation", "likert"),
    ("--formulation", "rubric", "--rubric", "helpsteer2"),
])
def test_task1_prompts_are_the_ones_sent(tmp_path: Path, server: Any, options: tuple[str, ...]) -> None:
    srv, recorder = server
    out = tmp_path / "t1"
    _run("--model", "openai:loopback", "-M", f"base_url={srv.base_url}", "-M", "api_key_env=UXBENCH_NO_SUCH_KEY",
         "--limit", "6", "--out", str(out), *options)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    checked = 0
    for record, case, _ in _samples(out):
        prompt = task1_prompt(manifest, record, case)
        assert prompt.error is None and CHANGED not in prompt.notes
        assert len(prompt.calls) == (2 if "user_modeling" in options else 1)
        for call in prompt.calls:
            assert tuple(call.messages) in recorder.seen, (options, call.title, call.messages[-1][1][-300:])
        checked += 1
    assert checked == 6


@pytest.mark.parametrize("task", ["eval", "recovery"])
def test_task2_and_3_judge_prompts_are_the_ones_sent(tmp_path: Path, server: Any, task: str) -> None:
    srv, recorder = server
    out = tmp_path / task
    common = ("-M", f"base_url={srv.base_url}", "-M", "api_key_env=UXBENCH_NO_SUCH_KEY")
    judge = ("-J", f"base_url={srv.base_url}", "-J", "api_key_env=UXBENCH_NO_SUCH_KEY")
    _run("--task", task, "--model", "openai:loopback", *common, "--judge", "openai:loopback", *judge,
         "--out", str(out))
    _run("--task", task, "--model", "openai:loopback", *common, "--judge", "openai:loopback-b", *judge,
         "--judge-mode", "pointwise", "--judge-strategy", "cot", "--judge-lang", "en", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    modes = set()
    for record, case, scores in _samples(out):
        assert len(scores) == 2
        for score in scores:
            info = manifest["judges"][score["judge"]]
            prompt = reply_judge_prompt(manifest, info, record, case, score)
            assert prompt.error is None and CHANGED not in prompt.notes
            (call,) = prompt.calls
            assert tuple(call.messages) in recorder.seen, (info["mode"], call.messages[-1][1][-300:])
            modes.add(info["mode"])
    assert modes == {"grm", "pointwise"}


def test_a_prompt_that_cannot_be_rebuilt_says_why() -> None:
    assert "cannot rebuild" in (task1_prompt({"task_config": {"formulation": "nope"}}, {}, {"id": "x"}).error or "")
    shown = reply_judge_prompt({"task": "eval", "task_config": {}}, {"settings": {"mode": "grm"}}, {},
                               {"task": "judge", "id": "x", "query": "q", "response": "r", "label": "good"}, {})
    assert shown.error and "cannot rebuild" in shown.error
