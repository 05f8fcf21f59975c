"""The deterministic stages of `uxbench mine run` on a log, read back for the labelled conversations.

`eval-signals` measures what the pipeline outputs, not a re-implementation of it: `mined_run` runs stages
01-05 (`run_pipeline` with `llm=False`: de-identification, gate, prefilter, signals, dedup) into a directory
(or takes the output directory of an earlier `uxbench mine run`), and `read_mined` reads back, for the
conversations asked for, their rows of `signals.parquet`, their de-identified turns (the text the detectors
saw, from the signal stage's shards) and why a conversation is absent (gated, dropped by the prefilter).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from uxbench.errors import ConfigError
from uxbench.mining.ingest import require_turns
from uxbench.mining.pipeline import registry
from uxbench.mining.pipeline.config import MineConfig
from uxbench.mining.pipeline.run import run_pipeline
from uxbench.mining.pipeline.store import read_with_sessions
from uxbench.mining.signals.config import SignalConfig

SIGNALS_FILE = "signals.parquet"


@dataclass
class MinedLog:
    """What the deterministic stages said about some conversations."""

    out: Path
    rows: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    """(conversation_id, assistant turn_index) -> its row of signals.parquet."""
    texts: dict[str, dict[int, str]] = field(default_factory=dict)
    """conversation_id -> turn_index -> de-identified text."""
    absent: dict[str, str] = field(default_factory=dict)
    """conversation_id -> why it has no rows (gated, dropped by the prefilter)."""
    columns: list[str] = field(default_factory=list)
    """The columns of signals.parquet (a score column is used when there is one)."""


def is_mined_dir(path: Path) -> bool:
    return path.is_dir() and (path / SIGNALS_FILE).is_file() and (path / "work").is_dir()


def mined_run(log: Path, out: Path, *, workers: int | None = None, say: Callable[[str], None] | None = None,
              signal_settings: dict[str, Any] | None = None, learned: str | None = None) -> Path:
    """Run the deterministic stages on `log` into `out` (resumed when `out` holds the same run); `learned`:
    the directory of a learned follow-up classifier that decides `dissatisfied` (else the rules)."""
    options: dict[str, Any] = {"workers": workers} if workers else {}
    if learned is not None:
        options["learned_signals"] = str(Path(learned).resolve())
    if signal_settings:
        options["signals"] = SignalConfig.load(signal_settings)
    require_turns([str(log)])
    config = MineConfig(inputs=(str(log),), out=str(out), llm=False, **options)
    run_pipeline(config, progress=say)
    return out


def _signal_shards(out: Path) -> list[Path]:
    shards = sorted((out / "work" / registry.dirname(registry.get("signals"))).glob("part-*.parquet"))
    if not shards:
        raise ConfigError(f"{out}/work holds no signal-stage shards: rerun `uxbench mine run` there (without "
                          "deleting work/), or pass the log itself")
    return shards


def read_mined(out: Path, conversations: Collection[str]) -> MinedLog:
    """Rows, texts and reasons of absence for `conversations` in the mining output `out`."""
    wanted = pa.array(sorted(set(conversations)), type=pa.string())
    wanted_set = set(conversations)
    found = MinedLog(out=out)
    table = pq.read_table(out / SIGNALS_FILE)
    found.columns = table.column_names
    table = table.filter(pc.is_in(table.column("conversation_id"), value_set=wanted))
    for row in table.to_pylist():
        found.rows[(row["conversation_id"], int(row["turn_index"]))] = row
    for shard in _signal_shards(out):
        part = read_with_sessions(shard, ["conversation_id", "session"])
        part = part.filter(pc.is_in(part.column("conversation_id"), value_set=wanted))
        for cid, session in zip(part.column(0).to_pylist(), part.column(1).to_pylist(), strict=True):
            turns = orjson.loads(session)["turns"]
            found.texts[cid] = {int(t["turn_index"]): t["content"] for t in turns}
    for name, stage in (("gated.jsonl", "gated by the safety gate"), ("dropped.jsonl", "dropped")):
        path = out / name
        if not path.is_file():
            continue
        for line in path.read_bytes().splitlines():
            rec = orjson.loads(line)
            cid = rec.get("conversation_id")
            if cid in wanted_set and cid not in found.absent:
                detail = rec.get("reason") or ",".join(rec.get("categories") or [])
                found.absent[cid] = f"{stage} ({rec.get('stage', 'gate')}: {detail})"
    return found


def mine_for_eval(log: Path, conversations: Collection[str], *, workdir: Path | None = None,
                  workers: int | None = None, say: Callable[[str], None] | None = None,
                  signal_settings: dict[str, Any] | None = None, learned: str | None = None) -> MinedLog:
    """`read_mined` of an earlier mining output, or of a fresh run of the deterministic stages on a log
    (in `workdir`, else in a temporary directory removed afterwards)."""
    if is_mined_dir(log):
        if signal_settings or learned:
            raise ConfigError(f"{log} is a finished mining output: signal settings cannot change it; pass the log")
        return read_mined(log, conversations)
    if workdir is not None:
        return read_mined(mined_run(log, workdir, workers=workers, say=say, signal_settings=signal_settings,
                                    learned=learned), conversations)
    with tempfile.TemporaryDirectory(prefix="uxbench-eval-signals-") as tmp:
        out = mined_run(log, Path(tmp) / "mined", workers=workers, say=say, signal_settings=signal_settings,
                        learned=learned)
        return read_mined(out, conversations)
