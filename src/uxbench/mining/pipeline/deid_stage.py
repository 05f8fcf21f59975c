"""Stage ``01b-deid-model`` (only with ``--deid-model``): the model pass of de-identification over what the rules
of stage 01 left, before any other stage reads the conversations (`uxbench.mining.deid_model`).

It rewrites each batch's sessions and appends the model's changes to the rules' change records, in the schema
of stage 01, so the stages after it read it as they read stage 01. Its answers are not cached (a cache would
keep the texts with the values found); each batch is a checkpoint. Stage 01's own checkpoint keeps the text as
the rules left it, as it does without a model pass; every later stage and every output has the model's pass.
"""

from __future__ import annotations

import asyncio

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from uxbench.mining.deid import deidentify_turns
from uxbench.mining.deid_model import ModelPassCounts, propose
from uxbench.mining.deid_types import PiiSpan
from uxbench.mining.pipeline.engine import commit_batch
from uxbench.mining.pipeline.progress import StageProgress, StageTick
from uxbench.mining.pipeline.registry import RunContext
from uxbench.mining.pipeline.stages import SESSIONS_SCHEMA
from uxbench.mining.pipeline.store import StageDir, read_shard
from uxbench.mining.types import Session
from uxbench.models.model import Model, create_model


def _dumps(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


async def _session_row(row: dict[str, object], model: Model, salt: bytes) -> dict[str, object]:
    if row["session"] is None:
        return row
    session = Session.model_validate_json(str(row["session"]))
    counts = ModelPassCounts()
    turns = [(False, t) for t in session.turns] + [(True, t) for t in session.regenerated]
    found = await asyncio.gather(*(propose(t.content, model, counts) for _, t in turns))
    spans: dict[tuple[bool, int], list[PiiSpan]] = {
        (r, t.turn_index): f for (r, t), f in zip(turns, found, strict=True)}
    clean, record = deidentify_turns(session, salt, spans)
    before = orjson.loads(str(row["changes"])) if row["changes"] else []
    changes = before + [{**c.model_dump(), "by": "model"} for c in record.changes]
    tally = {k: v for k, v in orjson.loads(str(row["counts"])).items() if not k.startswith("pii_")}
    tally = {k: v for k, v in tally.items() if k != "sessions_with_pii"}
    for change in changes:
        tally[f"pii_{change['type']}"] = tally.get(f"pii_{change['type']}", 0) + 1
    tally["sessions_with_pii"] = int(bool(changes))
    tally.update({k: v for k, v in counts.as_counts().items() if v})
    return {**row, "session": clean.model_dump_json(), "changes": _dumps(changes) if changes else None,
            "counts": _dumps(dict(sorted(tally.items())))}


async def _run(ctx: RunContext, stage: StageDir, ticks: StageTick | None) -> None:
    config = ctx.config
    src = ctx.dirs["sessions"]
    pending = stage.pending(ctx.n_batches)
    total = sum(pq.ParquetFile(src.shard_path(b)).metadata.num_rows for b in pending)
    done = 0
    assert config.deid_model is not None
    # No response cache: it would keep the texts with the values the model finds. Each batch's shard is the
    # checkpoint, so a rerun after a kill asks again only for the batch that was cut short.
    model = create_model(config.deid_model, config.deid_model_args, max_concurrency=config.concurrency)
    try:
        def tick() -> None:
            if ticks is not None:
                ticks(StageProgress(stage.name, "sessions", done, total, model.limiter.current_limit))

        tick()
        for batch in pending:
            rows = read_shard(src.shard_path(batch)).to_pylist()
            out = []
            for row in rows:
                out.append(await _session_row(row, model, ctx.salt))
                done += 1
                tick()
            commit_batch(stage, batch, pa.Table.from_pylist(out, schema=SESSIONS_SCHEMA), SESSIONS_SCHEMA)
    finally:
        await model.aclose()


def run_deid_model_stage(ctx: RunContext, stage: StageDir, ticks: StageTick | None) -> None:
    """The model pass over every pending batch of stage 01, in its own event loop."""
    asyncio.run(_run(ctx, stage, ticks))
