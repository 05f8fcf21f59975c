"""Tiny models (opt-in: UXBENCH_TINY_MODELS=1): the embedded SmolLM2-135M-Instruct plays both the assistant and the
simulated users (the model realiser, with this project's templates) for 10 sessions; every session finishes with a
termination reason (and, where the fidelity module is present, a User Fidelity Score).

    UXBENCH_TINY_MODELS=1 python -m pytest tests/sim/test_sim_tiny_models.py -q
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from uxbench.sim.spec import RoleSpec, SimSpec
from uxbench.sim.types import REASONS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not os.environ.get("UXBENCH_TINY_MODELS"),
                                                   reason="opt-in: set UXBENCH_TINY_MODELS=1 (about 2-4 minutes)")]


def test_ten_sessions_with_the_embedded_model_in_both_roles(tmp_path: Path) -> None:
    from uxbench.sim.persona_io import load_personas, personas_jsonl
    from uxbench.sim.run import execute
    from uxbench.sim.store import SimStore

    five = [item.persona for item in load_personas(["demo"]) if item.persona.lang == "en"][:5]
    path = tmp_path / "five.jsonl"
    path.write_bytes(b"\n".join(personas_jsonl(five)) + b"\n")
    args = {"max_new_tokens": "32"}
    spec = SimSpec(personas=[str(path)], trials=2, max_turns=2, demo=True, out=tmp_path / "run", n_boot=100,
                   model=RoleSpec(model="hf:embedded", args=args), simulator=RoleSpec(model="hf:embedded", args=args),
                   max_tokens=32, sim_max_tokens=32, cache_path=tmp_path / "cache.sqlite")
    result = asyncio.run(execute(spec))
    assert result.summary["n_sessions"] == 10 and result.summary["demo"]
    store = SimStore(result.run_dir)
    records = list(store.iter_sessions())
    personas = store.personas()
    store.close()
    assert len(records) == 10 and all(r.termination.reason in REASONS for r in records)
    assert all(r.turns for r in records if r.termination.reason != "error")
    try:
        from uxbench.sim.fidelity import session_fidelity  # issue 18b's module
    except ImportError:
        return
    for record in records:
        scored = session_fidelity(record, personas[record.persona_id], None)
        assert scored is not None
