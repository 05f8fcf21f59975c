"""Tiny models through the CLI, opt-in like tests/sim/test_sim_tiny_models.py (marked slow, run only with
UXBENCH_TINY_MODELS=1: the embedded SmolLM2-135M-Instruct generates on the CPU, minutes on 2 cores). 10 sessions
(5 English demo personas x 2 trials) with the embedded model as the realiser and as the assistant finish, each
with a termination reason, and `uxbench sim fidelity` gives each a User Fidelity Score.

    UXBENCH_TINY_MODELS=1 python -m pytest tests/integration/test_sim_tiny_models_cli.py -q
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.sim.types import REASONS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not os.environ.get("UXBENCH_TINY_MODELS"),
                                                   reason="opt-in: set UXBENCH_TINY_MODELS=1 (minutes of CPU)")]


def _five_english_personas(path: Path) -> Path:
    from uxbench.sim.persona_io import load_personas, personas_jsonl

    five = [item.persona for item in load_personas(["demo"]) if item.persona.lang == "en"][:5]
    path.write_bytes(b"\n".join(personas_jsonl(five)) + b"\n")
    return path


def test_ten_sessions_with_the_embedded_model_in_both_roles_each_get_a_reason_and_a_ufs(tmp_path: Path) -> None:
    personas = _five_english_personas(tmp_path / "five.jsonl")
    out = tmp_path / "run"
    runner = CliRunner()
    # No --model / --simulator: the embedded model plays both sides (DEMO).
    result = runner.invoke(app, ["sim", "run", "--personas", str(personas), "--trials", "2", "--max-turns", "2",
                                 "--max-tokens", "32", "--sim-max-tokens", "32", "--out", str(out), "--quiet",
                                 "--n-boot", "100", "--cache-path", str(tmp_path / "cache.sqlite"),
                                 "--format", "json"])
    summary = json.loads((out / "summary.json").read_text())
    # Exit 1 only when sessions ended in an error, which are counted outcomes with reason `error`.
    assert result.exit_code == (1 if summary["n_errors"] else 0), result.output
    assert summary["n_sessions"] == 10 and summary["demo"]
    rows = [json.loads(line) for line in (out / "acts.jsonl").read_text().splitlines()]
    assert len(rows) == 10 and all(r["termination"]["reason"] in REASONS for r in rows)
    fidelity = runner.invoke(app, ["sim", "fidelity", str(out), "--format", "json", "--quiet", "--n-boot", "100"])
    assert fidelity.exit_code == 0, fidelity.output
    sessions = [json.loads(line) for line in (out / "fidelity_sessions.jsonl").read_text().splitlines()]
    assert len(sessions) == 10
    assert all(s["ufs"] is not None and 0.0 <= s["ufs"] <= 1.0 for s in sessions)
