"""The full pipeline with the LLM stages: the agents and the follow-up check answered by a scripted model
behind a real loopback HTTP server; the exported cases load in the harness; nothing written holds an
original personal value; a rerun replays every call from the cache and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("uxbench.mining.agents")
pytest.importorskip("uxbench.mining.export")

from pipeline_support import PII_VALUES, PipelineScript, tree_bytes, write_log

from uxbench.data.loaders import load_cases
from uxbench.mining.deid import SALT_ENV, scan_for_values
from uxbench.mining.pipeline import MineConfig, MineResult, run_pipeline
from uxbench.testing import LoopbackConfig, LoopbackServer


def llm_config(log: Path, out: Path, base_url: str, **options: object) -> MineConfig:
    return MineConfig(inputs=(str(log),), out=str(out), model="openai:loopback", workers=1, llm_signals=True,
                      model_args={"base_url": base_url, "extra_headers": '{"api-key": "sk-not-a-real-key"}'},
                      sample_options={"target_bad": 5, "target_good": 5, "target_eval": 5, "target_recovery": 5},
                      **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        tuple[Path, Path, MineResult, PipelineScript, LoopbackServer]]:
    root = tmp_path_factory.mktemp("llm")
    log = write_log(root / "log.jsonl")
    script = PipelineScript()
    with pytest.MonkeyPatch.context() as mp, LoopbackServer(LoopbackConfig(responder=script)) as server:
        mp.setenv(SALT_ENV, "llm-test-salt-01")
        result = run_pipeline(llm_config(log, root / "out", server.base_url))
        yield log, root / "out", result, script, server


def test_candidates_cases_and_data_card(llm_run: tuple[Path, Path, MineResult, PipelineScript, LoopbackServer]) -> None:
    _, out, result, script, _ = llm_run
    counts = result.stage_counts
    candidates = [json.loads(line) for line in (out / "candidates.jsonl").read_text("utf-8").splitlines()]
    assert len(candidates) == counts["agents"]["candidates"] > 0
    assert {c["conversation_id"] for c in candidates} <= {"zh-complaint", "en-complaint", "zh-regen", "en-liked",
                                                           "zh-card-repeat"}  # no gated, short or duplicate
    kept = [c for c in candidates if c["status"] == "kept"]
    assert kept and all(c["scenario"] for c in kept)
    assert sorted(p.name for p in (out / "cases").iterdir()) == [
        "task1_judge_bad.jsonl", "task1_judge_good.jsonl", "task2_eval.jsonl", "task3_recovery.jsonl"]
    source = load_cases(out / "cases")
    cases = list(source)
    assert len(cases) == counts["cases"]["selected"] > 0
    assert len({c.id for c in cases}) == len(cases)
    assert {c.task for c in cases} >= {"judge", "recovery"}
    assert "Pipeline stages" in (out / "DATA_CARD.md").read_text("utf-8")
    assert script.followups == counts["llm_signals"]["checked"] == 8  # follow-ups outside duplicates
    labels = pq.read_table(out / "signals.parquet", columns=["conversation_id", "next_user_turn",
                                                              "llm_followup_label"]).to_pylist()
    for row in labels:
        expected = row["next_user_turn"] is not None and row["conversation_id"] != "en-liked-dup"
        assert (row["llm_followup_label"] is not None) == expected


def test_no_file_written_holds_an_original_value(
        llm_run: tuple[Path, Path, MineResult, PipelineScript, LoopbackServer]) -> None:
    _, out, _, _, _ = llm_run
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "responses.sqlite" for p in files) and any(p.suffix == ".md" for p in files)
    assert scan_for_values(files, PII_VALUES) == []
    manifest = (out / "manifest.json").read_text("utf-8")
    assert "sk-not-a-real-key" not in manifest and "<redacted>" in manifest


def test_manifest_names_the_follow_up_prompt_by_its_hash(
        llm_run: tuple[Path, Path, MineResult, PipelineScript, LoopbackServer]) -> None:
    from uxbench.mining.signals.llm_check import prompt_sha256

    manifest = json.loads((llm_run[1] / "manifest.json").read_text("utf-8"))
    assert manifest["llm_signals_prompt"]["sha256"] == prompt_sha256()
    assert manifest["llm_signals_prompt"]["files"] == ["followup_en.txt", "followup_zh.txt"]


def test_rerun_is_answered_from_the_cache_and_changes_nothing(
        llm_run: tuple[Path, Path, MineResult, PipelineScript, LoopbackServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    log, out, _, _, server = llm_run
    monkeypatch.setenv(SALT_ENV, "llm-test-salt-01")
    cache_files = ("responses.sqlite", "responses.sqlite-wal", "responses.sqlite-shm")
    before = tree_bytes(out, skip=cache_files)
    for name in ("06-llm-signals", "07-agents"):  # as if killed before any LLM batch was checkpointed
        for marker in (out / "work" / name).glob("*_DONE"):
            marker.unlink()
    requests = server.stats.requests
    run_pipeline(llm_config(log, out, server.base_url))
    assert server.stats.requests == requests  # every call came from the response cache
    assert tree_bytes(out, skip=cache_files) == before
