"""Nothing reaches a model before de-identification has run on it: every request of a mining run with every
model stage on (the model pass of de-identification, the follow-up check, the agents) and of `mine audit
--model` is recorded by a real loopback server and searched for the personal values of the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uxbench.mining.agents")

from pipeline_support import PII_VALUES, PipelineScript, log_rows
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.deid_model import SYSTEM as DEID_SYSTEM
from uxbench.mining.pipeline import MineConfig, registry, run_pipeline
from uxbench.testing import LoopbackConfig, LoopbackServer

LANDLINE, NAME_ZH, NAME_EN = "020-8765-4321", "张伟", "Bartholomew Whitcombe"
RULE_VALUES = [*PII_VALUES, LANDLINE, NAME_ZH, NAME_EN]
"""Values the rules find (phones, landline, e-mails, ID, card, IP, address, names after a cue)."""
CUELESS = "Zelda Quibblethorpe"
"""A name with no cue around it: only the model pass finds it."""


class Recorder:
    """Every request's text, by who asked; the de-identification model finds the cue-less name."""

    def __init__(self) -> None:
        self.script = PipelineScript()
        self.deid: list[str] = []
        self.others: list[str] = []

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        text = "\n".join(str(m["content"]) for m in messages)
        if messages[0]["content"] == DEID_SYSTEM:
            self.deid.append(text)
            found = [{"text": CUELESS, "type": "NAME"}] if CUELESS in text else []
            return json.dumps({"items": found})
        self.others.append(text)
        return self.script(messages, body)


def _log(path: Path) -> Path:
    rows = log_rows()
    for row in rows:
        if row["conversation_id"] == "zh-complaint" and row["turn_index"] == 0:
            row["content"] = f"你好，我叫{NAME_ZH}，座机{LANDLINE}。" + row["content"]
        if row["conversation_id"] == "en-complaint" and row["turn_index"] == 0:
            row["content"] = f"Hi, my name is {NAME_EN}. {CUELESS} said to ask. " + row["content"]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _holding(texts: list[str], values: list[str]) -> list[str]:
    return sorted({v for v in values for t in texts if v in t})


def test_every_model_stage_reads_de_identified_text() -> None:
    """The order itself: the sessions stage (which de-identifies) is upstream of every stage, and the model
    stages come after it and after the model pass of de-identification."""
    names = [s.name for s in registry.STAGES]
    assert names[0] == "sessions" and registry.STAGES[0].kind == "driver"
    for stage in registry.STAGES[1:]:
        above, seen = registry.upstream(stage), set()
        while above is not None and above.name not in seen:
            seen.add(above.name)
            above = registry.upstream(above)
        assert "sessions" in seen, stage.name
        if stage.kind == "model":
            assert names.index(stage.name) > names.index("deid_model"), stage.name


def test_no_request_holds_a_personal_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "before-model-salt-012345")
    log, out, recorder = _log(tmp_path / "log.jsonl"), tmp_path / "out", Recorder()
    with LoopbackServer(LoopbackConfig(responder=recorder)) as server:
        config = MineConfig(
            inputs=(str(log),), out=str(out), workers=1, llm_signals=True, model="openai:loopback",
            model_args={"base_url": server.base_url}, deid_model="openai:local",
            deid_model_args={"base_url": server.base_url},
            sample_options={"target_bad": 5, "target_good": 5, "target_eval": 5, "target_recovery": 5})
        result = run_pipeline(config)
        assert result.stage_counts["agents"]["candidates"] > 0
        audited = CliRunner().invoke(app, ["mine", "audit", str(out), "--model", "openai:loopback",
                                           "-M", f"base_url={server.base_url}", "--quiet", "--format", "json"])
        assert audited.exit_code == 0, audited.output
    assert recorder.deid and recorder.others and recorder.script.audits > 0
    # The model pass sees what the rules left: their placeholders, never a value they found.
    assert _holding(recorder.deid, RULE_VALUES) == []
    assert any("[PHONE_1]" in t for t in recorder.deid) and any(CUELESS in t for t in recorder.deid)
    # Every other model (follow-up check, agents, audit) sees neither those values nor the model pass's find.
    assert _holding(recorder.others, [*RULE_VALUES, CUELESS]) == []
    assert any("[NAME_" in t for t in recorder.others)
