"""Ray Data engine: ``read_parquet`` over the previous stage's shards, ``map_batches`` with the same stage
function (``batch_format="pyarrow"``), ``write_parquet`` partitioned by batch; then each batch's files
are put in canonical order and committed as the stage's shard (`engine.commit_batch`), exactly as the
local engine writes it.

Batches go to Ray in waves of `WAVE_BATCHES`, each committed when its job ends, so a killed run
resumes at the first unfinished wave. On a multi-node cluster the output directory must be on storage
every node sees (a shared file system). Only de-identified records enter Ray: the first stage (reading
the raw logs, grouping, de-identification) always runs on the driver's machine, since Ray's object store
spills to local disk.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from uxbench.errors import ConfigError, MissingDependencyError
from uxbench.mining.pipeline.engine import commit_batch
from uxbench.mining.pipeline.stages import StageFn
from uxbench.mining.pipeline.store import StageDir, with_session

WAVE_BATCHES = 64
_TMP = "_ray_out"


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray", "--engine ray") from None
    return ray


def with_sessions_then(table: pa.Table, fn: StageFn, src: StageDir, columns: tuple[str, ...]) -> pa.Table:
    """In a Ray task: ``fn`` over rows read from a stage that stores ``kept`` in place of the session text, the
    text joined back from the shards of ``src.session_from`` of the batches these rows belong to."""
    assert src.session_from is not None
    found = sorted(set(table["batch"].to_pylist()))
    sessions = pa.concat_tables([src.session_from.read_input(b, ["conversation_id", "session"]) for b in found])
    return fn(with_session(table, sessions, f"{src.path.name} batches {found}").select(list(columns)))


class RayEngine:
    """Runs map stages on a Ray cluster (``address``) or on a local Ray instance of ``workers`` CPUs."""

    name = "ray"

    def __init__(self, workers: int, address: str | None = None) -> None:
        self.ray = _import_ray()
        self.workers = workers
        self.address = address
        self._started = False
        self._connect()

    def _connect(self) -> None:
        ray = self.ray
        if not ray.is_initialized():
            try:
                if self.address:
                    ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING)
                else:
                    ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False,
                             logging_level=logging.WARNING)
            except ConnectionError as exc:
                raise ConfigError(f"cannot join the Ray cluster at {self.address}: {exc}") from None
            self._started = True
        for name in ("ray", "ray.data", "ray.train", "ray.tune"):
            logging.getLogger(name).setLevel(logging.WARNING)
        from ray.data import DataContext

        context = DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False

    def run_map(self, fn: StageFn, src: StageDir, dst: StageDir, batches: Sequence[int],
                columns: Sequence[str], schema: pa.Schema) -> None:
        for start in range(0, len(batches), WAVE_BATCHES):
            self._wave(fn, src, dst, batches[start:start + WAVE_BATCHES], columns, schema)

    def _wave(self, fn: StageFn, src: StageDir, dst: StageDir, batches: Sequence[int],
              columns: Sequence[str], schema: pa.Schema) -> None:
        tmp = dst.path / _TMP
        shutil.rmtree(tmp, ignore_errors=True)
        files = [str(src.shard_path(b)) for b in batches]
        if src.session_from is not None and "session" in columns:  # the text is joined back in the tasks
            stored = ["kept" if c == "session" else c for c in columns]
            fn = partial(with_sessions_then, fn=fn, src=src, columns=tuple(columns))
        else:
            stored = list(columns)
        dataset = self.ray.data.read_parquet(files, partitioning=None).select_columns(stored)
        dataset = dataset.map_batches(fn, batch_format="pyarrow")
        dataset.write_parquet(str(tmp), partition_cols=["batch"])
        value_schema = pa.schema([f for f in schema if f.name != "batch"])
        for batch in batches:
            parts = sorted((tmp / f"batch={batch}").glob("*.parquet"))
            tables = [pq.read_table(p, partitioning=None).select(value_schema.names).cast(value_schema)
                      for p in parts]
            table = pa.concat_tables(tables) if tables else value_schema.empty_table()
            table = table.append_column(schema.field("batch"), pa.array([batch] * table.num_rows, pa.int32()))
            commit_batch(dst, batch, table, schema)
        shutil.rmtree(tmp, ignore_errors=True)

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = False
