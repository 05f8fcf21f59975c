"""`run_pipeline`: the stages in order, each resumed from its checkpoints.

Stages (checkpoint directories under ``OUT/work``):

1. ``01-sessions``  read + group + de-identify (driver; worker pool)      -> Session JSON per conversation
2. ``02-gate``      safety gate (map)                                     -> gated ones dropped, reasons kept
3. ``03-prefilter`` too short, empty, all interrupted (map)               -> dropped with the reason
4. ``04-signals``   behavioural signals per assistant turn (map)          -> signals + flat rows
5. ``05-dedup``     near-duplicate conversations, MinHash LSH (driver)    -> duplicate_of
6. ``06-llm-signals`` optional LLM follow-up check (driver, async)        -> a label per follow-up
7. ``07-agents``    miner, judge, QA (driver, async)                      -> candidates
8. ``08-cases``     sample and export (driver)                            -> cases/, DATA_CARD.md

Map stages run on the chosen engine; the others on the driver. Without the LLM (``llm=False``) stages
6-8 are skipped and nothing of the model layer is imported.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, Field

from uxbench import __version__
from uxbench.errors import ConfigError
from uxbench.fileio import remove_stale_temps
from uxbench.mining.deid import resolve_key
from uxbench.mining.pipeline.config import MineConfig
from uxbench.mining.pipeline.driver_stages import (
    bucket_count,
    input_fingerprints,
    run_dedup_stage,
    run_sessions_stage,
)
from uxbench.mining.pipeline.engine import Engine, LocalEngine
from uxbench.mining.pipeline.outputs import (
    CANDIDATES,
    CASES_DIR,
    DATA_CARD,
    DATA_CARD_JSON,
    MANIFEST,
    OUTPUT_NAMES,
    STAGE_COUNTS,
    write_deid_changes,
    write_dropped,
    write_gated,
    write_signal_tables,
)
from uxbench.mining.pipeline.stages import (
    GATE_SCHEMA,
    PREFILTER_SCHEMA,
    SIGNALS_SCHEMA,
    StageFn,
    gate_map,
    prefilter_map,
    signals_map,
)
from uxbench.mining.pipeline.store import StageDir, atomic_write_json, read_json, stage_key

PIPELINE_VERSION = 1
"""Bump when a stage's output changes for the same settings (old checkpoints are then recomputed)."""
STAGES = ("01-sessions", "02-gate", "03-prefilter", "04-signals", "05-dedup", "06-llm-signals",
          "07-agents", "08-cases")
PARALLEL_MIN_BYTES = 4 << 20
"""Below this much input, stage 01 de-identifies in-line (starting worker processes costs more)."""
TMP_SUFFIX = ".uxbench-tmp"

Progress = Callable[[str], None]


class MineResult(BaseModel):
    out: Path
    stage_counts: dict[str, Any]
    outputs: dict[str, Path] = Field(default_factory=dict)
    resumed: list[str] = Field(default_factory=list)
    """Stages that were already finished (or partly finished) when the run started."""


def _quiet(_: str) -> None:
    return None


def bucket_tmpdir(out: Path) -> Path:
    """Where stage 01 keeps its raw-text buckets: next to the output directory (same file system), never
    inside it, with a fixed name so a rerun after a kill finds and deletes the leftovers first."""
    return out.parent / f".{out.name}{TMP_SUFFIX}"


def _clear_outputs(out: Path) -> None:
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)  # an old in-output key (deid.salt) goes too: see resolve_key
    for name in OUTPUT_NAMES:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _remove_llm_outputs(out: Path) -> None:
    """A run without the model leaves no cases of an earlier run with it (its checkpoints stay)."""
    for name in (CANDIDATES, CASES_DIR, DATA_CARD, DATA_CARD_JSON):
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _manifest(config: MineConfig, inputs: list[dict[str, Any]], complete: bool) -> dict[str, Any]:
    import pyarrow

    versions = {"uxbench": __version__, "pipeline": PIPELINE_VERSION, "pyarrow": pyarrow.__version__}
    settings = config.public_dict()
    run = {k: settings.pop(k) for k in ("engine", "ray_address", "workers", "fresh", "out")}
    return {"complete": complete, "inputs": inputs, "config": settings, "run": run, "versions": versions}


def _check_inputs(out: Path, inputs: list[dict[str, Any]]) -> None:
    path = out / MANIFEST
    if path.exists() and (out / "work").exists():
        before = read_json(path).get("inputs")
        if before != inputs:
            raise ConfigError(
                f"{out} holds a mining run over other input files (or files that changed since): "
                "pass --fresh to start over there, or choose another --out")


def _make_engine(config: MineConfig, local: LocalEngine) -> Engine:
    if config.engine == "ray":
        from uxbench.mining.pipeline.ray_engine import RayEngine

        return RayEngine(config.workers, config.ray_address)
    return local


def run_pipeline(config: MineConfig, progress: Progress | None = None) -> MineResult:
    """Run (or resume) every stage of a mining run; returns the counts and the files written.

    Synchronous (the LLM stages run their own event loop): from async code, call it in a thread.
    ``progress`` receives one line per finished stage."""
    say = progress or _quiet
    out = Path(config.out)
    if config.fresh:
        _clear_outputs(out)
    work = out / "work"
    inputs = input_fingerprints(config.inputs)
    _check_inputs(out, inputs)
    salt = resolve_key(out)  # the de-identification key: never under OUT
    work.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(out)  # final outputs half-written by a killed run
    atomic_write_json(out / MANIFEST, _manifest(config, inputs, complete=False))
    salt_id = hashlib.sha256(b"uxbench-salt-id\x00" + salt).hexdigest()[:16]
    n_buckets = bucket_count(inputs)
    common = {"version": PIPELINE_VERSION}

    k1 = stage_key(STAGES[0], {**common, "inputs": inputs, "format": config.format, "skip": config.skip_invalid,
                               "batch_size": config.batch_size, "buckets": n_buckets, "salt": salt_id})
    s1 = StageDir(work, STAGES[0], k1)
    s2 = StageDir(work, STAGES[1], stage_key(STAGES[1], common, k1))
    s3 = StageDir(work, STAGES[2], stage_key(STAGES[2], config.prefilter.model_dump(mode="json"), s2.key))
    s4 = StageDir(work, STAGES[3], stage_key(
        STAGES[3], {"signals": config.signals.model_dump(mode="json"), "text": config.dedup.text}, s3.key))
    s5 = StageDir(work, STAGES[4], stage_key(STAGES[4], config.dedup.model_dump(mode="json"), s4.key))
    resumed: list[str] = []
    counts: dict[str, Any] = {}
    local = LocalEngine(config.workers)
    engine: Engine | None = None
    try:
        if s1.prepare() or s1.done():
            resumed.append(s1.name)
        info = s1.done()
        if info is None:
            total = sum(f["bytes"] for f in inputs)
            pool = local if total >= PARALLEL_MIN_BYTES else LocalEngine(1)
            info = run_sessions_stage(
                s1, config.inputs, fmt=config.format, skip_invalid=config.skip_invalid,
                batch_size=config.batch_size, n_buckets=n_buckets, salt=salt, tmpdir=bucket_tmpdir(out),
                pool=pool, progress=say)
        n_batches = int(info["batches"])
        counts["ingest"] = info["ingest"]
        counts["sessions"] = info["counts"]
        maps: list[tuple[StageDir, StageDir, StageFn, pa.Schema]] = [
            (s1, s2, gate_map, GATE_SCHEMA),
            (s2, s3, partial(prefilter_map, config=config.prefilter), PREFILTER_SCHEMA),
            (s3, s4, partial(signals_map, config=config.signals, dedup_text=config.dedup.text), SIGNALS_SCHEMA),
        ]
        for src, dst, fn, schema in maps:
            if dst.prepare() or dst.done():
                resumed.append(dst.name)
            done = dst.done()
            if done is None:
                pending = dst.pending(n_batches)
                if pending:
                    engine = engine or _make_engine(config, local)
                    engine.run_map(fn, src, dst, pending, ["batch", "conversation_id", "session"], schema)
                say(f"{dst.name}: {n_batches} batches ({n_batches - len(pending)} already done)")
                done = dst.finish(n_batches)
            counts[dst.name.split("-", 1)[1]] = done["counts"]
        if s5.prepare() or s5.done():
            resumed.append(s5.name)
        done5 = s5.done() or run_dedup_stage(s5, s4, n_batches, config.dedup, say)
        counts["dedup"] = done5["counts"]
        outputs = {
            "gated": write_gated(out, s2, n_batches),
            "deid_changes": write_deid_changes(out, s1, n_batches),
            "dropped": write_dropped(out, s3, s5, n_batches),
        }
        s6: StageDir | None = None
        if config.uses_model:
            from uxbench.mining.pipeline.llm_stages import run_llm_stages

            llm_outputs, llm_counts, s6, llm_resumed = run_llm_stages(
                config, work, out, n_batches, s4, s5, dict(counts), say)
            resumed += llm_resumed
            outputs.update(llm_outputs)
            counts.update(llm_counts)
        else:
            _remove_llm_outputs(out)
        outputs.update(write_signal_tables(out, s4, s5, s6, n_batches))
    finally:
        if engine is not None and engine is not local:
            engine.close()
        local.close()
    atomic_write_json(out / STAGE_COUNTS, counts)
    atomic_write_json(out / MANIFEST, _manifest(config, inputs, complete=True))
    outputs.update({"stage_counts": out / STAGE_COUNTS, "manifest": out / MANIFEST})
    return MineResult(out=out, stage_counts=counts, outputs=outputs, resumed=resumed)
