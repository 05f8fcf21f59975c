"""The LLM stages against a server that answers one request at a time, slower than our queue allows: the
stages go through the runtime's adaptive limiter (capped by `concurrency`), which shrinks to what the server
serves instead of timing out and retrying at the same concurrency, and every stage reports its progress
(done of total, and the concurrency in use) for the CLI's progress bar with an ETA.

Assertions are on outcomes and counts, not on durations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pipeline_support import PipelineScript, write_log

from uxbench.mining.deid import SALT_ENV
from uxbench.mining.pipeline import MineConfig, run_pipeline
from uxbench.mining.pipeline.progress import StageProgress
from uxbench.testing import LoopbackConfig, LoopbackServer

LATENCY_MS = 40
TIMEOUT_S = 0.25  # six answers' worth: eight requests queued at the server do not all fit


def _run(log: Path, out: Path, server_config: LoopbackConfig, events: list[StageProgress]) -> tuple[
        dict[str, Any], int, int]:
    with LoopbackServer(server_config) as server:
        config = MineConfig(
            inputs=(str(log),), out=str(out), model="openai:loopback", workers=1, llm_signals=True,
            concurrency=8, model_args={"base_url": server.base_url, "timeout": str(TIMEOUT_S)},
            sample_options={"target_bad": 5, "target_good": 5, "target_eval": 5, "target_recovery": 5},
        )
        result = run_pipeline(config, ticks=events.append)
        return result.stage_counts, server.stats.max_processing, server.stats.abandoned


def test_single_slot_server_gives_the_same_outputs_with_progress(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "slow-server-salt")
    log = write_log(tmp_path / "log.jsonl", copies=2)
    fast_events: list[StageProgress] = []
    fast, _, _ = _run(log, tmp_path / "fast", LoopbackConfig(responder=PipelineScript()), fast_events)
    events: list[StageProgress] = []
    slow_config = LoopbackConfig(responder=PipelineScript(), latency_ms=LATENCY_MS, max_inflight=1)
    slow, max_processing, abandoned = _run(log, tmp_path / "slow", slow_config, events)
    assert max_processing == 1
    # Every call was answered in the end: the same labels, candidates and cases as against a fast server.
    for stage in ("llm_signals", "agents", "cases"):
        assert slow[stage] == fast[stage], stage
    assert "label_failed" not in slow["llm_signals"]
    for name in ("candidates.jsonl", "DATA_CARD.md"):
        assert (tmp_path / "slow" / name).read_bytes() == (tmp_path / "fast" / name).read_bytes()
    # At most the requests of the first burst time out (they were queued before anything was known).
    assert abandoned <= 8
    # Progress: each model stage counts from 0 to its total, never above, with the concurrency in use.
    by_stage: dict[str, list[StageProgress]] = {}
    for event in events:
        by_stage.setdefault(event.stage, []).append(event)
    assert sorted(by_stage) == ["06-llm-signals", "07-agents"]
    for stage, seen in by_stage.items():
        total = seen[0].total
        done = [e.done for e in seen]  # the agents stage also reports each call: a count may repeat
        assert done == sorted(done) and sorted(set(done)) == list(range(total + 1)), stage
        assert all(e.total == total and e.concurrency is not None and 1 <= e.concurrency <= 8 for e in seen)
    assert by_stage["06-llm-signals"][0].total == slow["llm_signals"]["checked"] > 0
    assert by_stage["07-agents"][0].total == slow["agents"]["sessions"] > 0
    # Inside the agents stage: calls by agent and in flight, from the first call on; none in flight at the end.
    agents = by_stage["07-agents"]
    assert any("1 in flight" in (e.detail or "") for e in agents)
    assert agents[-1].detail is not None and agents[-1].detail.endswith("; 0 in flight")
    assert "miner" in agents[-1].detail and "judge" in agents[-1].detail
    assert min(e.concurrency or 8 for e in events) <= 2  # it found out the server serves one at a time
    assert min(e.concurrency or 8 for e in fast_events) == 8  # a fast server keeps the full concurrency
