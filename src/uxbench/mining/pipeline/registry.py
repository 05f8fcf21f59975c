"""The mining stages, in order: one registration each.

A stage is a function plus one `Stage` entry in `STAGES`. Its checkpoint directory is named by its place
(`NN-name`, e.g. ``04-signals``), its checkpoint key is the hash of that name, of `settings(ctx)` and of
the key of the stage it reads (`reads`, default the one before it), so changing a setting recomputes that
stage and every stage after it. The runner (`run.run_pipeline`) walks the list; nothing else numbers or
names stages by hand.

Kinds:

- ``map``: a pure function over a batch, ``pyarrow.Table -> pyarrow.Table`` (`bind(config)` returns it
  with its settings bound); the engine runs it on every pending batch of the previous stage's shards,
  in-process or on Ray, and commits one shard per batch. Adding such a stage means writing the function
  in `stages.py` and adding one `Stage` here.
- ``driver``: runs on the driver over all batches (reading the logs, the near-duplicate index);
  `run(ctx, stage_dir)` returns the stage marker.
- ``model``: asks the model, per batch; `run` names an async function in `llm_stages` (imported only when
  a model is used) called with ``(ctx, stage_dir, model, tick)``.
- ``final``: the last step (sample and export), cheap and redone on every run (no checkpoint).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from uxbench.mining.dedup import SHINGLE_HASH, permutations
from uxbench.mining.pipeline.config import MineConfig, agent_config
from uxbench.mining.pipeline.driver_stages import run_dedup_stage, run_sessions_stage
from uxbench.mining.pipeline.stages import (
    GATE_SCHEMA,
    LLM_SIGNALS_SCHEMA,
    PREFILTER_SCHEMA,
    SESSIONS_SCHEMA,
    SIGNALS_SCHEMA,
    StageFn,
    gate_map,
    prefilter_map,
    signals_map,
)
from uxbench.mining.pipeline.store import StageDir, stage_key

PIPELINE_VERSION = 2
"""Bump when a stage's output changes for the same settings (old checkpoints are then recomputed). 2: the gate's,
the prefilter's and the signal stage's shards hold ``kept`` instead of the session text (`Stage.stores_session`)."""

Kind = Literal["driver", "deid", "map", "model", "final"]
Progress = Callable[[str], None]


@dataclass
class RunContext:
    """What the stages of one run share."""

    config: MineConfig
    out: Path
    work: Path
    inputs: list[dict[str, Any]]
    """Input fingerprints (`driver_stages.input_fingerprints`)."""
    salt: bytes
    n_buckets: int
    say: Progress
    dirs: dict[str, StageDir] = field(default_factory=dict)
    """The checkpoint directory of every stage prepared so far, by stage name."""
    n_batches: int = 0
    counts: dict[str, Any] = field(default_factory=dict)
    resumed: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    """Run-scoped objects a driver stage needs (the worker pool, the bucket directory)."""

    @property
    def salt_id(self) -> str:
        return hashlib.sha256(b"uxbench-salt-id\x00" + self.salt).hexdigest()[:16]


def _always(config: MineConfig) -> bool:
    return True


@dataclass(frozen=True)
class Stage:
    name: str
    """Short name: the counts key in stage_counts.json and the suffix of the directory name."""
    kind: Kind
    settings: Callable[[RunContext], Any]
    """Everything besides the upstream stage that decides the stage's output (JSON-able): its key."""
    reads: str | None = "previous"
    """The stage whose output (and key) this one builds on: "previous", a stage name, or None."""
    enabled: Callable[[MineConfig], bool] = _always
    bind: Callable[[MineConfig], StageFn] | None = None
    """map: the batch function with its settings bound (must pickle: Ray and the process pool ship it)."""
    run: Callable[..., Any] | str | None = None
    """driver: ``run(ctx, stage_dir) -> marker``; model: name of the async function in `llm_stages`."""
    schema: pa.Schema | None = None
    columns: tuple[str, ...] = ("batch", "conversation_id", "session")
    """map: the input columns read from the previous stage's shards."""
    ext: str = "parquet"
    stores_session: bool = True
    """map: False for a stage that passes conversations on without changing them (keeping or dropping them, adding
    columns): its shards hold ``kept`` in place of the session text, read back from the stage the text came from
    (`StageDir.read_input`, `store.read_with_sessions`)."""
    marker_counts: tuple[str, ...] = ()
    """Keys of the stage marker copied into the run's counts beside the stage's own counts."""


def _model_settings(ctx: RunContext) -> dict[str, Any]:
    return ctx.config.model_identity()


def _deid_model_settings(ctx: RunContext) -> dict[str, Any]:
    import hashlib

    from uxbench.mining.deid_model import MAX_TOKENS, SYSTEM
    from uxbench.redact import redact_args

    return {"model": ctx.config.deid_model, "args": redact_args(ctx.config.deid_model_args),
            "prompt_sha256": hashlib.sha256(SYSTEM.encode()).hexdigest(), "max_tokens": MAX_TOKENS}


def _llm_signal_settings(ctx: RunContext) -> dict[str, Any]:
    from uxbench.mining.signals.llm_check import prompt_sha256

    return {**ctx.config.model_identity(), "prompt_sha256": prompt_sha256()}  # an edited prompt recomputes


def _agent_settings(ctx: RunContext) -> dict[str, Any]:
    return {**ctx.config.model_identity(), "agents": agent_config(ctx.config).model_dump(mode="json")}


def _sessions(ctx: RunContext, stage: StageDir) -> dict[str, Any]:
    c = ctx.config
    return run_sessions_stage(
        stage, c.inputs, fmt=c.format, skip_invalid=c.skip_invalid, batch_size=c.batch_size,
        n_buckets=ctx.n_buckets, salt=ctx.salt, tmpdir=ctx.extras["bucket_dir"], pool=ctx.extras["sessions_pool"],
        progress=ctx.say, chain=ctx.extras.get("chain", ()),
        then=run.follow if (run := ctx.extras.get("dedup_run")) is not None else None)


def _dedup(ctx: RunContext, stage: StageDir) -> dict[str, Any]:
    return run_dedup_stage(stage, ctx.dirs["signals"], ctx.n_batches, ctx.config.dedup, ctx.say,
                           run=ctx.extras.pop("dedup_run", None))


def _bind_signals(c: MineConfig) -> StageFn:
    rules = partial(signals_map, config=c.signals, dedup=c.dedup, perms=permutations(c.dedup))
    if c.learned_signals is None:
        return rules
    from uxbench.mining.pipeline.learned_stage import learned_signals_map, model_digest

    return partial(learned_signals_map, rules=rules, model_dir=c.learned_signals,
                   digest=model_digest(c.learned_signals))


def dedup_settings(ctx: RunContext) -> dict[str, Any]:
    return {**ctx.config.dedup.model_dump(mode="json"), "shingle_hash": SHINGLE_HASH}


def _signal_settings(ctx: RunContext) -> dict[str, Any]:
    settings: dict[str, Any] = {"signals": ctx.config.signals.model_dump(mode="json"),
                                "dedup": dedup_settings(ctx),  # the stage computes the MinHash signatures
                                "turn_rows": "arrow"}  # was JSON text: older checkpoints are recomputed
    if ctx.config.learned_signals is not None:  # only then: the rules' checkpoints keep their key
        from uxbench.mining.pipeline.learned_stage import model_digest

        settings["learned"] = model_digest(ctx.config.learned_signals)
    return settings


STAGES: tuple[Stage, ...] = (
    Stage("sessions", "driver", run=_sessions, reads=None, marker_counts=("ingest",), settings=lambda ctx: {
        "version": PIPELINE_VERSION, "inputs": ctx.inputs, "format": ctx.config.format,
        "skip": ctx.config.skip_invalid, "batch_size": ctx.config.batch_size, "buckets": ctx.n_buckets,
        "salt": ctx.salt_id}),
    Stage("deid_model", "deid", reads="sessions", schema=SESSIONS_SCHEMA, enabled=lambda c: c.deid_model is not None,
          settings=_deid_model_settings),
    Stage("gate", "map", bind=lambda c: gate_map, schema=GATE_SCHEMA, stores_session=False,
          settings=lambda ctx: {"version": PIPELINE_VERSION}),
    Stage("prefilter", "map", bind=lambda c: partial(prefilter_map, config=c.prefilter), schema=PREFILTER_SCHEMA,
          stores_session=False, settings=lambda ctx: ctx.config.prefilter.model_dump(mode="json")),
    Stage("signals", "map", bind=_bind_signals, schema=SIGNALS_SCHEMA, stores_session=False,
          settings=_signal_settings),
    Stage("dedup", "driver", run=_dedup, settings=dedup_settings),
    Stage("llm_signals", "model", run="run_llm_signals", reads="dedup", schema=LLM_SIGNALS_SCHEMA,
          enabled=lambda c: c.llm_signals, settings=_llm_signal_settings),
    Stage("agents", "model", run="run_agents_stage", reads="dedup", ext="jsonl", enabled=lambda c: c.llm,
          settings=_agent_settings),
    Stage("cases", "final", reads="agents", enabled=lambda c: c.llm, settings=lambda ctx: None),
)
"""Every stage, in the order they run."""


def dirname(stage: Stage) -> str:
    """The checkpoint directory of a stage: its place and its name (``04-signals``). The optional model pass
    of de-identification rides on stage 01's number (``01b-deid-model``), so the other stages keep theirs."""
    numbered = [s for s in STAGES[: STAGES.index(stage) + 1] if s.kind != "deid"]
    suffix = "b" if stage.kind == "deid" else ""
    return f"{len(numbered):02d}{suffix}-{stage.name.replace('_', '-')}"


def get(name: str) -> Stage:
    for stage in STAGES:
        if stage.name == name:
            return stage
    raise KeyError(f"no mining stage named {name!r}; the stages are {', '.join(s.name for s in STAGES)}")


def upstream(stage: Stage, config: MineConfig | None = None) -> Stage | None:
    """The stage whose output `stage` reads: "previous" is the nearest earlier stage that is enabled (with
    `config`; without it, the one right before)."""
    if stage.reads is None:
        return None
    if stage.reads == "previous":
        position = STAGES.index(stage)
        while position > 0:
            position -= 1
            if config is None or STAGES[position].enabled(config):
                return STAGES[position]
        return None
    return get(stage.reads)


def stage_dir(ctx: RunContext, stage: Stage) -> StageDir:
    """The stage's checkpoint directory under its key (its upstream stage must be prepared already)."""
    name = dirname(stage)
    above = upstream(stage, ctx.config)
    key = stage_key(name, stage.settings(ctx), ctx.dirs[above.name].key if above is not None else None)
    session_from = None
    if not stage.stores_session and above is not None:  # the text this stage's rows keep: where it is stored
        source = ctx.dirs[above.name]
        session_from = source.session_from or source
    found = StageDir(ctx.work, name, key, ext=stage.ext, session_from=session_from)
    ctx.dirs[stage.name] = found
    return found
