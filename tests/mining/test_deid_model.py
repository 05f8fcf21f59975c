"""The optional model pass of de-identification (`mine run --deid-model`), through a real loopback server: it
sees only what the rules left, what it proposes is replaced only where it occurs in the text, and nothing it
found reaches any output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.deid import SALT_ENV, scan_for_values
from uxbench.mining.deid_model import SYSTEM, ModelPassCounts, checked_spans, parse_items
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

NAME = "Zelda Quibblethorpe"  # no cue around it: the rules cannot know it is a name
PHONE = "13812345678"


class LocalModel:
    """A local model that finds the name, invents one that is not in the text and repeats a placeholder."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        assert messages[0]["content"] == SYSTEM
        text = str(messages[-1]["content"])
        self.seen.append(text)
        items = [{"text": "Invented Person", "type": "NAME"}, {"text": "[PHONE_1]", "type": "PHONE"}]
        if NAME in text:
            items.append({"text": NAME, "type": "NAME"})
        return json.dumps({"items": items})


def test_proposals_not_in_the_text_are_dropped() -> None:
    counts = ModelPassCounts()
    items, problems = parse_items('```json\n{"items": [{"text": "Bob Stone", "type": "NAME"}, {"text": "Ann"}, '
                                  '{"text": "x"}, {"text": 5}]}\n```')
    assert problems == [] and items is not None
    spans = checked_spans("Bob Stone met Bob Stone", items, counts)
    assert [(s.start, s.end) for s in spans] == [(0, 9), (14, 23)]
    assert (counts.kept, counts.not_in_text, counts.rejected_other) == (1, 1, 2)
    assert parse_items("I think there is a name")[0] is None


def test_a_value_is_never_cut_out_of_a_longer_word_or_over_a_placeholder() -> None:
    counts = ModelPassCounts()
    items = [{"text": "Ann", "type": "NAME"}, {"text": "[PHONE_1] or Ann", "type": "NAME"}, {"text": "李娜"}]
    spans = checked_spans("Annual report by Ann, call [PHONE_1] or Ann.李娜说", items, counts)
    assert [(s.start, s.end, s.type) for s in spans] == [(17, 20, "NAME"), (40, 43, "NAME"), (44, 46, "NAME")]
    assert (counts.kept, counts.rejected_other) == (2, 1)
    assert checked_spans("Annabel and Joanne", [{"text": "Ann"}], counts) == []


def test_mine_run_with_a_deid_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "deid-model-salt-0123456")
    rows = [
        {"conversation_id": "a", "turn_index": 0, "role": "user",
         "content": f"Please write to {NAME} about the invoice, or call {PHONE}."},
        {"conversation_id": "a", "turn_index": 1, "role": "assistant", "content": "Sure, here is a draft."},
        {"conversation_id": "a", "turn_index": 2, "role": "user", "content": f"Thanks, {NAME} will like it."},
        {"conversation_id": "b", "turn_index": 0, "role": "user", "content": "What is a prime number?"},
        {"conversation_id": "b", "turn_index": 1, "role": "assistant", "content": "A number with two divisors."},
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    model = LocalModel()
    out = tmp_path / "out"
    with LoopbackServer(LoopbackConfig(responder=model)) as server:
        args = ["mine", "run", str(log), "--out", str(out), "--no-llm", "--workers", "1", "--deid-model",
                "openai:local", "--deid-model-arg", f"base_url={server.base_url}", "--quiet"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        asked = server.stats.requests
        again = CliRunner().invoke(app, args)  # resumed: the stage is done, nothing is asked again
        assert again.exit_code == 0 and server.stats.requests == asked > 0
    assert model.seen and all(PHONE not in text for text in model.seen)  # it saw only what the rules left
    assert any("[PHONE_1]" in text for text in model.seen)
    # Stage 01's checkpoint keeps what the rules left (as without the pass); every later file has the pass.
    later = [p for p in out.rglob("*") if p.is_file() and "01-sessions" not in p.parts]
    assert later and scan_for_values(later, [NAME, PHONE]) == []
    assert scan_for_values([out / "work" / "01-sessions"], [PHONE]) == []
    counts = json.loads((out / "stage_counts.json").read_text("utf-8"))["deid_model"]
    assert counts["model_kept"] >= 2 and counts["model_not_in_text"] >= 4 and counts["pii_NAME"] == 2
    changes = [c for line in (out / "deid_changes.jsonl").read_text("utf-8").splitlines()
               for c in json.loads(line)["changes"]]
    assert {c["type"] for c in changes if c.get("by") == "model"} == {"NAME"}
    assert (out / "work" / "01b-deid-model").is_dir()
