"""`uxbench mine eval-signals --model`: the LLM follow-up check measured on the same labels, through a real
loopback HTTP server; a failed call is counted as missing, and the prompt files' hash is in the output."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from eval_signals_support import write_fixture
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.signals.llm_check import PROMPT_FILES
from uxbench.testing import LoopbackConfig, LoopbackServer

runner = CliRunner()
ANSWERS = {
    "No, that's wrong. It still doesn't work.": '{"label": "complaint", "reason": "says wrong"}',
    "How do I reset my router password?": '{"label": "repeat"}',
    "Thank you, that worked perfectly!": '{"label": "other"}',
    "continue": '{"label": "continue"}',
    "Write a haiku about ocean waves at night.": '{"label": "rephrase"}',
    "What is the capital of Australia?": "I cannot tell.",  # unreadable twice: failed
}
NEXT = re.compile(r"Next user message:\n<<<(.*?)>>>", re.S)


def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    found = NEXT.search(str(messages[-1]["content"]))
    assert found is not None
    return ANSWERS[found.group(1)]


def test_llm_check_is_measured_like_the_rules(tmp_path: Path) -> None:
    log, labels = write_fixture(tmp_path)
    with pytest.MonkeyPatch.context() as mp, LoopbackServer(LoopbackConfig(responder=respond)) as server:
        mp.setenv(SALT_ENV, "eval-signals-salt")
        got = runner.invoke(app, ["mine", "eval-signals", "--labels", str(labels), "--log", str(log), "--split",
                                  "all", "--format", "json", "--quiet", "--model", "openai:loopback",
                                  "--model-arg", f"base_url={server.base_url}"])
        requests = server.stats.requests
    assert got.exit_code == 0, got.output
    r = json.loads(got.stdout)
    assert requests == 7  # six follow-ups with a reply, one asked twice
    assert r["method"] == "llm" and r["model"] == "openai:loopback" and r["failed"] == 1
    digest = hashlib.sha256(PROMPT_FILES["en"].read_bytes() + PROMPT_FILES["zh"].read_bytes()).hexdigest()
    assert r["prompt_sha256"] == digest
    # c6 failed, c7/c8/c9 have no reply: four missing; flagged c1 c2 c5, gold c1 c2 c5 c7 c9
    assert r["n"] == 9 and r["n_missing"] == 4
    d = r["signals"]["dissatisfied"]
    assert (d["tp"], d["fp"], d["fn"]) == (3, 0, 2) and d["precision"] == 1.0 and d["recall"] == pytest.approx(0.6)
    assert (r["signals"]["rephrase"]["tp"], r["signals"]["rephrase"]["fn"]) == (1, 0)
    reasons = {m["conversation_id"]: m["reason"] for m in r["missing"]}
    assert reasons["c6"].startswith("model call failed")
    assert r["confusion"]["continue_neutral"] == {"continue": 1, "missing": 2}


def test_model_with_learned_signals_or_threshold_is_refused(tmp_path: Path) -> None:
    log, labels = write_fixture(tmp_path)
    base = ["mine", "eval-signals", "--labels", str(labels), "--log", str(log), "--model", "openai:loopback"]
    for extra in (["--threshold", "0.3"], ["--signals", "learned:x"]):
        got = runner.invoke(app, [*base, *extra])
        assert got.exit_code != 0 and "drop" in got.output and "Traceback" not in got.output, got.output
