"""`run_pipeline`: the stages of `registry.STAGES` in order, each resumed from its checkpoints.

Stages (checkpoint directories under ``OUT/work``; the list and its numbering live in `registry`):

1. ``01-sessions``  read + group + de-identify (driver; worker pool)      -> Session JSON per conversation
2. ``02-gate``      safety gate (map)                                     -> gated ones dropped, reasons kept
3. ``03-prefilter`` too short, empty, all interrupted (map)               -> dropped with the reason
4. ``04-signals``   behavioural signals per assistant turn (map)          -> signals + flat rows
5. ``05-dedup``     near-duplicate conversations, MinHash LSH (driver)    -> duplicate_of
6. ``06-llm-signals`` optional LLM follow-up check (model)                -> a label per follow-up
7. ``07-agents``    miner, judge, QA (model)                              -> candidates
8. ``08-cases``     sample and export (final)                             -> cases/, DATA_CARD.md

Map stages run on the chosen engine; the others on the driver. Without the LLM (``llm=False``) the model
stages are skipped and nothing of the model layer is imported.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from uxbench import __version__
from uxbench.errors import ConfigError
from uxbench.fileio import remove_stale_temps
from uxbench.mining.deid import resolve_key
from uxbench.mining.pipeline import registry
from uxbench.mining.pipeline.config import MineConfig
from uxbench.mining.pipeline.driver_stages import DedupRun, bucket_count, input_fingerprints
from uxbench.mining.pipeline.engine import Engine, LocalEngine, MapLink
from uxbench.mining.pipeline.outputs import (
    CANDIDATES,
    CASES_DIR,
    DATA_CARD,
    DATA_CARD_JSON,
    MANIFEST,
    OUTPUT_NAMES,
    STAGE_COUNTS,
    OutputStream,
    write_deid_changes,
    write_dropped,
    write_gated,
    write_signal_tables,
)
from uxbench.mining.pipeline.progress import StageTick
from uxbench.mining.pipeline.registry import PIPELINE_VERSION, RunContext, Stage
from uxbench.mining.pipeline.store import StageDir, atomic_write_json, read_json

STAGES = tuple(registry.dirname(stage) for stage in registry.STAGES)
"""The checkpoint directory names, in order."""
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
    run = {k: settings.pop(k) for k in ("engine", "ray_address", "workers", "fresh", "out", "concurrency")}
    manifest = {"complete": complete, "inputs": inputs, "config": settings, "run": run, "versions": versions}
    if config.llm_signals:  # the follow-up check's prompt is our own file: its hash says which one was used
        from uxbench.mining.signals.llm_check import PROMPT_FILES, prompt_sha256

        manifest["llm_signals_prompt"] = {"files": sorted(p.name for p in PROMPT_FILES.values()),
                                          "sha256": prompt_sha256()}
    return manifest


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


def _prepare(ctx: RunContext, stage: Stage) -> StageDir:
    """The stage's checkpoint directory, prepared once per run (and noted when earlier work is kept)."""
    prepared: set[str] = ctx.extras.setdefault("prepared", set())
    if stage.name in prepared:
        return ctx.dirs[stage.name]
    found = registry.stage_dir(ctx, stage)
    if found.prepare() or found.done():
        ctx.resumed.append(found.name)
    prepared.add(stage.name)
    return found


def _ride_along(ctx: RunContext) -> list[MapLink]:
    """The map stages right after de-identification, prepared now: with the local engine each new batch runs
    through them in the job that de-identifies it (`engine.deid_shard`), while the driver goes on reading."""
    links: list[MapLink] = []
    for stage in registry.STAGES[1:]:
        if not stage.enabled(ctx.config) and stage.kind == "deid":
            continue  # no model pass: the map stages read stage 01 directly
        if stage.kind != "map" or not stage.enabled(ctx.config):
            break
        assert stage.bind is not None and stage.schema is not None
        found = _prepare(ctx, stage)
        if found.done() is not None:  # each link reads the one before it: a finished stage ends the chain
            break
        links.append(MapLink(stage.bind(ctx.config), found, stage.columns, stage.schema))
    return links


def _write_outputs(ctx: RunContext, ticks: StageTick | None) -> dict[str, Path]:
    """The output files from the finished shards (and the model stages, when a model is used)."""
    out, n = ctx.out, ctx.n_batches
    deidentified = ctx.dirs.get("deid_model") or ctx.dirs["sessions"]
    outputs = {
        "gated": write_gated(out, ctx.dirs["gate"], n),
        "deid_changes": write_deid_changes(out, deidentified, n),
        "dropped": write_dropped(out, ctx.dirs["prefilter"], ctx.dirs["dedup"], n),
    }
    if ctx.config.uses_model:
        from uxbench.mining.pipeline.llm_stages import run_model_stages

        outputs.update(run_model_stages(ctx, ticks))
    else:
        _remove_llm_outputs(out)
    outputs.update(write_signal_tables(out, ctx.dirs["signals"], ctx.dirs["dedup"], ctx.dirs.get("llm_signals"), n))
    return outputs


def _follow_dedup(ctx: RunContext, links: list[MapLink]) -> None:
    """When the chain ends with the stage the near-duplicate stage reads, which holds the signal stage's shards, and
    that stage is unfinished: prepare it now, so the driver indexes each batch as its job finishes
    (`driver_stages.DedupRun`), while the workers go on."""
    dedup = registry.get("dedup")
    above = registry.upstream(dedup, ctx.config)
    signals = ctx.dirs.get("signals")
    if not links or above is None or signals is None or not dedup.enabled(ctx.config) or \
            links[-1].dst is not ctx.dirs.get(above.name) or all(link.dst is not signals for link in links):
        return
    found = _prepare(ctx, dedup)
    if found.done() is not None:
        return
    stream = None
    if not ctx.config.uses_model:  # nothing after the index changes the outputs: written as it goes too
        stream = ctx.extras["output_stream"] = OutputStream(
            ctx.out, ctx.dirs["sessions"], ctx.dirs["gate"], ctx.dirs["prefilter"], signals, found)
    ctx.extras["dedup_run"] = DedupRun(found, signals, ctx.config.dedup,
                                       after=stream.add if stream is not None else None)


def _run_stage(ctx: RunContext, stage: Stage, local: LocalEngine, engines: list[Engine]) -> None:
    """Prepare one deterministic stage, run what is missing, and record its counts."""
    found = _prepare(ctx, stage)
    done = found.done()
    if done is None:
        if stage.kind == "driver":
            assert callable(stage.run)
            if stage.name == registry.STAGES[0].name and ctx.config.engine == "local":
                ctx.extras["chain"] = _ride_along(ctx)
                _follow_dedup(ctx, ctx.extras["chain"])
            done = stage.run(ctx, found)
        else:
            assert stage.bind is not None and stage.schema is not None
            above = registry.upstream(stage, ctx.config)
            assert above is not None
            pending = found.pending(ctx.n_batches)
            if pending:
                if not engines:
                    engines.append(_make_engine(ctx.config, local))
                engines[0].run_map(stage.bind(ctx.config), ctx.dirs[above.name], found, pending, stage.columns,
                                   stage.schema)
            ridden = any(link.dst is found for link in ctx.extras.get("chain", ()))
            ctx.say(f"{found.name}: {ctx.n_batches} batches (" + (
                "with de-identification" if ridden and not pending
                else f"{ctx.n_batches - len(pending)} already done") + ")")
            done = found.finish(ctx.n_batches)
    if stage.name == registry.STAGES[0].name:
        ctx.n_batches = int(done["batches"])
    ctx.counts[stage.name] = done["counts"]
    for key in stage.marker_counts:
        ctx.counts[key] = done[key]


def _run_deid_stage(ctx: RunContext, stage: Stage, ticks: StageTick | None) -> None:
    """The model pass of de-identification (``--deid-model``), resumed per batch like every stage."""
    from uxbench.mining.pipeline.deid_stage import run_deid_model_stage

    found = _prepare(ctx, stage)
    done = found.done()
    if done is None:
        run_deid_model_stage(ctx, found, ticks)
        done = found.finish(ctx.n_batches)
    ctx.say(f"{found.name}: {ctx.n_batches} batches (model pass of de-identification)")
    ctx.counts[stage.name] = done["counts"]


def run_pipeline(config: MineConfig, progress: Progress | None = None, ticks: StageTick | None = None) -> MineResult:
    """Run (or resume) every stage of a mining run; returns the counts and the files written.

    Synchronous (the model stages run their own event loop): from async code, call it in a thread.
    ``progress`` receives one line per finished stage; ``ticks`` receives the progress of the stages that
    ask a model (done, total, concurrency), for a progress bar with an ETA."""
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
    ctx = RunContext(config=config, out=out, work=work, inputs=inputs, salt=salt,
                     n_buckets=bucket_count(inputs), say=say)
    local = LocalEngine(config.workers)
    total = sum(f["bytes"] for f in inputs)
    ctx.extras.update(bucket_dir=bucket_tmpdir(out),
                      sessions_pool=local if total >= PARALLEL_MIN_BYTES else LocalEngine(1))
    engines: list[Engine] = []
    try:
        for stage in registry.STAGES:
            if stage.kind in ("driver", "map"):
                _run_stage(ctx, stage, local, engines)
            elif stage.kind == "deid" and stage.enabled(config):
                _run_deid_stage(ctx, stage, ticks)
        stream: OutputStream | None = ctx.extras.pop("output_stream", None)
        if stream is not None:  # written batch by batch as the near-duplicate index went
            _remove_llm_outputs(out)
            outputs = stream.finish(ctx.n_batches)
        else:
            outputs = _write_outputs(ctx, ticks)
    finally:
        if (unfinished := ctx.extras.pop("output_stream", None)) is not None:
            unfinished.abort()
        for engine in engines:
            if engine is not local:
                engine.close()
        local.close()
    atomic_write_json(out / STAGE_COUNTS, ctx.counts)
    atomic_write_json(out / MANIFEST, _manifest(config, inputs, complete=True))
    outputs.update({"stage_counts": out / STAGE_COUNTS, "manifest": out / MANIFEST})
    return MineResult(out=out, stage_counts=ctx.counts, outputs=outputs, resumed=ctx.resumed)
