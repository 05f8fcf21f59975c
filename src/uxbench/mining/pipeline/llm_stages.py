"""The stages that ask a model (imported only when a model is used), and the final export.

llm_signals (``--llm-signals``): the LLM follow-up check on every assistant turn that has a next user
message, in conversations that are not near-duplicates; one shard of labels per batch.
agents: miner, judge and QA (`uxbench.mining.agents.run_agents`) per batch of mined sessions; one JSON
Lines shard of candidates per batch.
cases: seeded stratified sample, export of the task files and the data card; cheap and deterministic, so
it is redone on every run.

All of them share one model (`uxbench.mining.llm.open_model`): the runtime's adaptive limiter capped at
``--concurrency``, retries, and a response cache (default ``OUT/work/responses.sqlite``), so a rerun after
a kill replays the finished calls from the cache and makes only the missing ones. Each stage reports its
progress (items done of the total, and the current concurrency) to the `StageTick` it is given.
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
from uxbench.mining.agents import AgentReport, Candidate, run_agents
from uxbench.mining.agents.models import agent_progress
from uxbench.mining.datacard import write_data_card
from uxbench.mining.export import export_cases
from uxbench.mining.llm import Tick, default_cache_path, open_model
from uxbench.mining.pipeline import registry
from uxbench.mining.pipeline.config import agent_config
from uxbench.mining.pipeline.engine import commit_batch
from uxbench.mining.pipeline.outputs import CANDIDATES, CASES_DIR, DATA_CARD, DATA_CARD_JSON
from uxbench.mining.pipeline.progress import StageProgress, StageTick
from uxbench.mining.pipeline.registry import RunContext, Stage
from uxbench.mining.pipeline.stages import LLM_SIGNALS_SCHEMA, load_session, load_signals
from uxbench.mining.pipeline.store import StageDir, sum_counts
from uxbench.mining.records import MinedSession
from uxbench.mining.sample import SampleConfig, SampleReport, sample_cases
from uxbench.mining.signals import SIGNAL_NAMES
from uxbench.mining.signals.llm_check import FollowupPair, classify_followups
from uxbench.models.model import Model


def _dump(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _batch_rows(s4: StageDir, s5: StageDir, batch: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = s4.read_input(batch, ["conversation_id", "session", "signals"]).to_pylist()
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


class _Counter:
    """Turns a batch's per-item ticks into the stage's progress events (done over every pending batch)."""

    def __init__(self, stage: StageDir, unit: str, total: int, model: Model, ticks: StageTick | None) -> None:
        self.stage, self.unit, self.total, self.model, self.ticks = stage, unit, total, model, ticks
        self.before = 0

    def emit(self, done: int, detail: str | None = None) -> None:
        if self.ticks is not None:
            self.ticks(StageProgress(self.stage.name, self.unit, done, self.total,
                                     self.model.limiter.current_limit, detail))

    def batch(self) -> Tick:
        before = self.before
        return lambda n: self.emit(before + n)

    def finish_batch(self, n: int) -> None:
        self.before += n


def _followups(rows: list[dict[str, Any]]) -> tuple[list[tuple[str, int]], list[FollowupPair]]:
    keys: list[tuple[str, int]] = []
    pairs: list[FollowupPair] = []
    for row in rows:
        if row["duplicate_of"] is None:
            for turn_index, pair in _pairs(row):
                keys.append((row["conversation_id"], turn_index))
                pairs.append(pair)
    return keys, pairs


def _count_followups(s4: StageDir, s5: StageDir, batches: list[int]) -> int:
    total = 0
    for batch in batches:
        signals = pq.read_table(s4.shard_path(batch), columns=["signals"]).column(0).to_pylist()
        dups = pq.read_table(s5.shard_path(batch), columns=["duplicate_of"]).column(0).to_pylist()
        total += sum(sum(ts["next_user_turn"] is not None for ts in orjson.loads(raw))
                     for raw, dup in zip(signals, dups, strict=True) if dup is None)
    return total


async def run_llm_signals(ctx: RunContext, stage: StageDir, model: Model, ticks: StageTick | None) -> None:
    s4, s5 = ctx.dirs["signals"], ctx.dirs["dedup"]
    pending = stage.pending(ctx.n_batches)
    counter = _Counter(stage, "follow-ups", _count_followups(s4, s5, pending), model, ticks)
    counter.emit(0)
    for batch in pending:
        keys, pairs = _followups(_batch_rows(s4, s5, batch))
        verdicts = await classify_followups(pairs, model, tick=counter.batch())
        counter.finish_batch(len(pairs))
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
    for stage, n in report.exchanges.items():
        counts[f"exchanges_{stage}"] = n
    for cause, n in report.failure_causes.items():
        counts[f"{FAILED_CAUSE}{cause}"] = n
    return counts


FAILED_CAUSE = "failed:"
"""Prefix of the agents stage's counts of failed exchanges by cause (`failed:FatalModelError HTTP 401`)."""


def failure_causes(counts: dict[str, int]) -> tuple[int, int, dict[str, int]]:
    """(exchanges, failed, failed by cause) from the agents stage's counts."""
    exchanges = sum(n for k, n in counts.items() if k.startswith("exchanges_"))
    causes = {k.removeprefix(FAILED_CAUSE): n for k, n in counts.items() if k.startswith(FAILED_CAUSE)}
    return exchanges, sum(causes.values()), causes


def _all_failed(batch: int, report: AgentReport) -> ConfigError:
    causes = ", ".join(f"{n} {cause}" for cause, n in sorted(report.failure_causes.items(), key=lambda x: -x[1]))
    n = sum(report.exchanges.values())
    return ConfigError(
        f"{'the only agent exchange' if n == 1 else f'every one of the {n} agent exchanges'} of batch {batch} "
        f"failed ({causes}), so no case can be mined; "
        f"the first: {report.first_error}. Check the model name, base_url and API key (or, for invalid outputs, "
        "use a model that follows the agents' JSON format), then rerun the same command: the finished stages "
        "are kept, and this batch is asked again."
    )


async def run_agents_stage(ctx: RunContext, stage: StageDir, model: Model, ticks: StageTick | None) -> None:
    s4, s5 = ctx.dirs["signals"], ctx.dirs["dedup"]
    settings = agent_config(ctx.config)
    pending = stage.pending(ctx.n_batches)
    total = sum(pq.ParquetFile(s4.shard_path(b)).metadata.num_rows for b in pending)
    counter = _Counter(stage, "sessions", total, model, ticks)
    counter.emit(0)
    finished: list[AgentReport] = []  # the stage's earlier batches, for the calls shown by agent
    for batch in pending:
        items = [_mined(row) for row in _batch_rows(s4, s5, batch)]
        report = AgentReport()
        sessions = [counter.before]  # done so far, sessions of this batch included

        def show(report: AgentReport = report, sessions: list[int] = sessions) -> None:
            counter.emit(sessions[0], agent_progress([*finished, report]))

        def on_session(n: int, sessions: list[int] = sessions, show: Callable[[], None] = show) -> None:
            sessions[0] = counter.before + n
            show()

        report.listen(lambda _: show())
        cands = await run_agents(items, model, settings, report=report, tick=on_session)
        report.listen(None)
        finished.append(report)
        counter.finish_batch(len(items))
        counter.emit(counter.before, agent_progress(finished))
        if report.exchanges and sum(report.failures.values()) >= sum(report.exchanges.values()):
            raise _all_failed(batch, report)  # not committed: a rerun asks this batch again
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
        table = s4.read_input(batch, ["conversation_id", "session", "signals"])
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


def _cases(ctx: RunContext) -> dict[str, Path]:
    config, out, work, n_batches = ctx.config, ctx.out, ctx.work, ctx.n_batches
    s4, s5, s7 = ctx.dirs["signals"], ctx.dirs["dedup"], ctx.dirs["agents"]
    counts = ctx.counts
    cands = _read_candidates(s7, n_batches)
    atomic_write_lines(out / CANDIDATES, (c.model_dump_json().encode("utf-8") for c in cands))
    try:
        sample_config = SampleConfig(seed=config.seed, **config.sample_options)
    except ValueError as exc:
        raise ConfigError(f"invalid sample settings: {exc}") from None
    report = SampleReport()
    selected = sample_cases(cands, sample_config, report=report)
    staging = work / registry.dirname(registry.get("cases"))
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
    tasks = {task: n.selected for task, n in report.tasks.items()}
    counts["cases"] = {"selected": len(selected), **{f"selected_{t}": n for t, n in sorted(tasks.items())}}
    ctx.say(f"{registry.dirname(registry.get('cases'))}: {len(selected)} cases selected")
    return {"candidates": out / CANDIDATES, "cases": out / CASES_DIR, "data_card": out / DATA_CARD}


async def _run_model_stage(ctx: RunContext, stage: Stage, model: Model, ticks: StageTick | None) -> None:
    found = registry.stage_dir(ctx, stage)
    if found.prepare() or found.done():
        ctx.resumed.append(found.name)
    if found.done() is None:
        assert isinstance(stage.run, str)
        await globals()[stage.run](ctx, found, model, ticks)
        found.finish(ctx.n_batches)
    ctx.say(f"{found.name}: {ctx.n_batches} batches")
    ctx.counts[stage.name] = sum_counts(found.shard_counts(b) for b in range(ctx.n_batches))


async def _run(ctx: RunContext, ticks: StageTick | None) -> dict[str, Path]:
    config = ctx.config
    outputs: dict[str, Path] = {}
    cache = Path(config.cache_path) if config.cache_path else default_cache_path(ctx.work)
    async with open_model(config.model or "", config.model_args, cache_path=cache,
                          concurrency=config.concurrency) as model:
        for stage in registry.STAGES:
            if stage.kind == "model" and stage.enabled(config):
                await _run_model_stage(ctx, stage, model, ticks)
            elif stage.kind == "final" and stage.enabled(config):
                outputs.update(_cases(ctx))
    return outputs


def run_model_stages(ctx: RunContext, ticks: StageTick | None = None) -> dict[str, Path]:
    """The model stages and the export, in one event loop; returns the output files written."""
    return asyncio.run(_run(ctx, ticks))
