"""`scripted:user-leaky` in structured mode: the faithful scripted user, except that its first message states
every fact the persona may not open with; the fidelity checks catch each disclosure."""

from __future__ import annotations

import json
from pathlib import Path

from sim_support import REFUND, helpful_rules, write_personas
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.sim.store import SimStore


def _run(tmp_path: Path, simulator: str) -> Path:
    out = tmp_path / simulator.replace(":", "_")
    rules = helpful_rules(tmp_path / "rules.json")
    result = CliRunner().invoke(app, ["sim", "run", "--personas", str(write_personas(tmp_path / "p.jsonl", REFUND)),
                                      "--model", f"scripted:file:{rules}", "--simulator", simulator, "--out",
                                      str(out), "--quiet", "--n-boot", "50", "--no-cache"])
    assert result.exit_code == 0, result.output
    return out


def test_the_structured_leaky_user_opens_with_every_fact_and_is_caught(tmp_path: Path) -> None:
    leaky, faithful = _run(tmp_path, "scripted:user-leaky"), _run(tmp_path, "scripted:user")
    with SimStore(leaky) as store:
        [record] = list(store.iter_sessions())
    opener = record.turns[0]
    assert "KX-99173" in opener.text and "4111 2222 3333 4444" in opener.text
    assert set(opener.facts_stated) == {"order", "card"} and record.termination.reason != "error"
    with SimStore(faithful) as store:
        [plain] = list(store.iter_sessions())
    assert plain.turns[0].facts_stated == ()
    result = CliRunner().invoke(app, ["sim", "fidelity", str(leaky), "--format", "json", "--quiet", "--n-boot", "50"])
    assert result.exit_code == 0, result.output
    violated = {v["item"] for v in json.loads((leaky / "fidelity_sessions.jsonl").read_text())["violations"]}
    assert {"premature_disclosure:order", "never_disclose:card"} <= violated
