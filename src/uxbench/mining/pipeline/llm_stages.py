"""Stages 06-08, the ones that ask a model (imported only when a model is used).

06-llm-signals (``--llm-signals``): the LLM follow-up check on every assistant turn that has a next user
message, in conversations that are not near-duplicates; one shard of labels per batch.
07-agents: miner, judge and QA (`uxbench.mining.agents.run_agents`) per batch of mined sessions; one
JSON Lines shard of candidates per batch.
08-cases: seeded stratified sample, export of the task files and the data card; cheap and
deterministic, so it is redone on every run.

Model calls go through the project's model layer with a response cache (default
``OUT/work/responses.sqlite``): a rerun after a kill replays the finished calls from the cache and makes
only the missing ones, so a resumed run gives the same outputs.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from uxbench.errors import ConfigError
from uxbench.fileio import atomic_write_lines
from uxbench.mining.agents import AgentConfig, AgentReport, Candidate, run_agents
from uxbench.mining.datacard import write_data_card
from uxbench.mining.export import export_cases
from uxbench.mining.pipeline.config import MineConfig
from uxbench.mining.pipeline.engine import commit_batch
from uxbench.mining.pipeline.outputs import CANDIDATES, CASES_DIR, DATA_CARD, DATA_CARD_JSON
from uxbench.mining.pipeline.stages import LLM_SIGNALS_SCHEMA, load_session, load_signals
from uxbench.mining.pipeline.store import StageDir, stage_key, sum_counts
from uxbench.mining.records import MinedSession
from uxbench.mining.sample import SampleConfig, SampleReport, sample_cases
from uxbench.mining.signals import SIGNAL_NAMES
from uxbench.mining.signals.llm_check import FollowupPair, classify_followups
from uxbench.models.model import Model, create_model
from uxbench.runtime.cache import ResponseCache

Progress = Callable[[str], None]


def _dump(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _batch_rows(s4: StageDir, s5: StageDir, batch: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(
        s4.shard_path(batch), columns=["conversation_id", "session", "signals"]).to_pylist()
    dups = pq.read_table(s5.shard_path(batch), columns=["duplicate_of"]).column(0).to_pylist()
    for row, dup in zip(rows, dups, strict=True):
        row["duplicate_of"] = dup
    return rows


def _pairs(row: dict[str, Any]) -> list[tuple[int, FollowupPair]]:
    """(assistant turn_index, follow-up triple) for every reply that has a next user message."""
    texts = {t["turn_index"]: t["content"] for t in orjson.loads(row["session"])["turns"]}
    out = []
    for ts in orjson.loads(row["signals"]):
        if ts["next_user_turn"] is None:
            continue
        prev = ts["prev_user_turn"]
        out.append((ts["turn_index"], FollowupPair(
            prev_user=texts.get(prev) if prev is not None else None, assistant=texts[ts["turn_index"]],
            next_user=texts[ts["next_user_turn"]])))
    return out


async def _llm_signals(stage: StageDir, s4: StageDir, s5: StageDir, n_batches: int, model: Model,
                       concurrency: int) -> None:
    for batch in stage.pending(n_batches):
        keys: list[tuple[str, int]] = []
        pairs: list[FollowupPair] = []
        for row in _batch_rows(s4, s5, batch):
            if row["duplicate_of"] is None:
                for turn_index, pair in _pairs(row):
                    keys.append((row["conversation_id"], turn_index))
                    pairs.append(pair)
        verdicts = await classify_followups(pairs, model, concurrency=concurrency)
        table = pa.Table.from_pylist([
            {"batch": batch, "conversation_id": cid, "turn_index": turn, "llm_label": v.label,
             "counts": _dump({"checked": 1, f"label_{v.label}": 1})}
            for (cid, turn), v in zip(keys, verdicts, strict=True)
        ], schema=LLM_SIGNALS_SCHEMA)
        table = table.sort_by([("conversation_id", "ascending"), ("turn_index", "ascending")])
        commit_batch(stage, batch, table, LLM_SIGNALS_SCHEMA)


def _mined(row: dict[str, Any]) -> MinedSession:
    return MinedSession(session=load_session(row["session"]), signals=load_signals(row["signals"]),
                        duplicate_of=row["duplicate_of"])


def _candidate_counts(cands: list[Candidate], report: AgentReport) -> dict[str, int]:
    counts: dict[str, int] = {"sessions": report.sessions, "skipped_duplicate": report.skipped_duplicate,
                              "candidates": len(cands)}
    for c in cands:
        key = f"{c.kind}_{c.status}"
        counts[key] = counts.get(key, 0) + 1
    for stage, n in report.failures.items():
        counts[f"failed_calls_{stage}"] = n
    return counts


async def _agents(stage: StageDir, s4: StageDir, s5: StageDir, n_batches: int, model: Model,
                  agent_config: AgentConfig) -> None:
    for batch in stage.pending(n_batches):
        items = [_mined(row) for row in _batch_rows(s4, s5, batch)]
        report = AgentReport()
        cands = await run_agents(items, model, agent_config, report=report)
        atomic_write_lines(stage.shard_path(batch), (c.model_dump_json().encode("utf-8") for c in cands))
        stage.mark_shard(batch, _candidate_counts(cands, report))


def _read_candidates(stage: StageDir, n_batches: int) -> list[Candidate]:
    out: list[Candidate] = []
    for path in stage.shards(n_batches):
        with path.open("rb") as handle:
            out.extend(Candidate.model_validate_json(line) for line in handle if line.strip())
    return out


def _sessions_for(cids: set[str], s4: StageDir, s5: StageDir, n_batches: int) -> dict[str, MinedSession]:
    wanted = pa.array(sorted(cids), pa.string())
    found: dict[str, MinedSession] = {}
    for batch in range(n_batches):
        table = pq.read_table(s4.shard_path(batch), columns=["conversation_id", "session", "signals"])
        dups = pq.read_table(s5.shard_path(batch), columns=["duplicate_of"])
        table = table.append_column("duplicate_of", dups.column(0))
        for row in table.filter(pc.is_in(table.column("conversation_id"), value_set=wanted)).to_pylist():
            found[row["conversation_id"]] = _mined(row)
    return found


def _replace_path(src: Path, dst: Path) -> None:
    if dst.is_dir():
        shutil.rmtree(dst)
    os.replace(src, dst)


def _card_counts(counts: dict[str, Any], cands: list[Candidate], selected: list[Candidate]) -> dict[str, int]:
    sessions, signals = counts.get("sessions", {}), counts.get("signals", {})
    return {
        "input_rows": counts.get("ingest", {}).get("rows", 0), "turns": counts.get("ingest", {}).get("turns", 0),
        "conversations": sessions.get("sessions", 0), "gated": counts.get("gate", {}).get("gated", 0),
        "prefiltered_out": sum(v for k, v in counts.get("prefilter", {}).items() if k.startswith("dropped_")),
        "with_signals": signals.get("sessions", 0),
        "with_dissatisfied_turn": signals.get("sessions_with_dissatisfied", 0),
        "near_duplicates": counts.get("dedup", {}).get("duplicates", 0),
        "candidates": len(cands), "kept": sum(c.status == "kept" for c in cands), "selected": len(selected),
    }


def _cases(config: MineConfig, out: Path, work: Path, s4: StageDir, s5: StageDir, s7: StageDir,
           n_batches: int, counts: dict[str, Any]) -> tuple[dict[str, Path], dict[str, Any]]:
    cands = _read_candidates(s7, n_batches)
    atomic_write_lines(out / CANDIDATES, (c.model_dump_json().encode("utf-8") for c in cands))
    try:
        sample_config = SampleConfig(seed=config.seed, **config.sample_options)
    except ValueError as exc:
        raise ConfigError(f"invalid sample settings: {exc}") from None
    report = SampleReport()
    selected = sample_cases(cands, sample_config, report=report)
    staging = work / "08-cases"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    sessions = _sessions_for({c.conversation_id for c in selected}, s4, s5, n_batches)
    export_cases(selected, sessions, staging / CASES_DIR)
    signals = counts.get("signals", {})
    signal_counts: dict[str, int] = {name: signals.get(f"fired_{name}", 0) for name in SIGNAL_NAMES}
    signal_counts["dissatisfied"] = signals.get("dissatisfied_turns", 0)
    write_data_card(staging, _card_counts(counts, cands, selected), signal_counts, selected,
                    {"sample": report.model_dump(mode="json")}, candidates=cands, model=config.model,
                    seed=config.seed, task_priority=sample_config.task_priority)
    _replace_path(staging / CASES_DIR, out / CASES_DIR)
    for name in (DATA_CARD, DATA_CARD_JSON):
        os.replace(staging / name, out / name)
    shutil.rmtree(staging, ignore_errors=True)
    outputs = {"candidates": out / CANDIDATES, "cases": out / CASES_DIR, "data_card": out / DATA_CARD}
    tasks = {task: n.selected for task, n in report.tasks.items()}
    return outputs, {"selected": len(selected), **{f"selected_{t}": n for t, n in sorted(tasks.items())}}


async def _run(config: MineConfig, work: Path, out: Path, n_batches: int, s4: StageDir, s5: StageDir,
               counts: dict[str, Any], say: Progress) -> tuple[dict[str, Path], dict[str, Any], StageDir | None,
                                                                list[str]]:
    identity = config.model_identity()
    cache = ResponseCache(config.cache_path or work / "responses.sqlite")
    model = create_model(config.model or "", config.model_args, cache=cache)
    new_counts: dict[str, Any] = {}
    outputs: dict[str, Path] = {}
    resumed: list[str] = []
    s6: StageDir | None = None
    try:
        if config.llm_signals:
            s6 = StageDir(work, "06-llm-signals", stage_key("06-llm-signals", identity, s5.key))
            if s6.prepare() or s6.done():
                resumed.append(s6.name)
            if s6.done() is None:
                await _llm_signals(s6, s4, s5, n_batches, model, config.llm_concurrency)
                s6.finish(n_batches)
            say(f"{s6.name}: {n_batches} batches")
            new_counts["llm_signals"] = sum_counts(s6.shard_counts(b) for b in range(n_batches))
        if config.llm:
            try:
                agent_config = AgentConfig(**config.agent_options)
            except ValueError as exc:
                raise ConfigError(f"invalid agent settings: {exc}") from None
            s7 = StageDir(work, "07-agents", stage_key(
                "07-agents", {**identity, "agents": agent_config.model_dump(mode="json")}, s5.key), ext="jsonl")
            if s7.prepare() or s7.done():
                resumed.append(s7.name)
            if s7.done() is None:
                await _agents(s7, s4, s5, n_batches, model, agent_config)
                s7.finish(n_batches)
            say(f"{s7.name}: {n_batches} batches")
            new_counts["agents"] = sum_counts(s7.shard_counts(b) for b in range(n_batches))
            outputs, new_counts["cases"] = _cases(config, out, work, s4, s5, s7, n_batches,
                                                  {**counts, **new_counts})
            say(f"08-cases: {new_counts['cases']['selected']} cases selected")
    finally:
        await model.aclose()
        cache.close()
    return outputs, new_counts, s6, resumed


def run_llm_stages(config: MineConfig, work: Path, out: Path, n_batches: int, s4: StageDir, s5: StageDir,
                   counts: dict[str, Any], say: Progress) -> tuple[dict[str, Path], dict[str, Any],
                                                                   StageDir | None, list[str]]:
    """Stages 06-08 in one event loop; returns (outputs, counts, the 06 stage or None, resumed stages)."""
    return asyncio.run(_run(config, work, out, n_batches, s4, s5, counts, say))
