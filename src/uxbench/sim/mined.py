"""Read a `uxbench mine run` output back as conversations: the de-identified turns the detectors saw (from the
signal stage's shards) with each assistant turn's signal row (`signals.parquet`), near-duplicates marked.

Nothing here sees an original value: the shards hold the de-identified sessions, whose personal data are the
pipeline's placeholders (`[PHONE_1]`, `[EMAIL_1]`, ...)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq

from uxbench.errors import ConfigError
from uxbench.mining.pipeline import registry
from uxbench.mining.pipeline.mined import SIGNALS_FILE, is_mined_dir
from uxbench.mining.pipeline.store import read_with_sessions


@dataclass(frozen=True)
class MinedTurn:
    turn_index: int
    role: str
    text: str
    feedback: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    """The turn's metadata as the log gave it (de-identified like the text): e.g. which assistant replied."""


@dataclass
class MinedConversation:
    """One conversation of a mining output."""

    conversation_id: str
    turns: list[MinedTurn]
    signals: dict[int, dict[str, Any]] = field(default_factory=dict)
    """assistant turn_index -> its row of signals.parquet."""
    duplicate_of: str | None = None

    @property
    def digest(self) -> str:
        """sha256 (16 hex digits) of the conversation id: how a persona names its source, never by content."""
        return conversation_digest(self.conversation_id)

    @property
    def user_turns(self) -> list[MinedTurn]:
        return [t for t in self.turns if t.role == "user"]


def conversation_digest(conversation_id: str) -> str:
    return hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()[:16]


def check_mined_dir(path: Path) -> Path:
    if not path.exists():
        raise ConfigError(f"{path}: no such directory (pass the --out directory of `uxbench mine run`)")
    if not is_mined_dir(path):
        raise ConfigError(f"{path} is not a mining output: it needs {SIGNALS_FILE} and work/ (run `uxbench mine run "
                          f"LOGS --out {path} --no-llm` first)")
    return path


def iter_mined(out: Path) -> Iterator[MinedConversation]:
    """Every conversation of the mining output `out` that reached the signal stage, shard by shard."""
    check_mined_dir(out)
    table = pq.read_table(out / SIGNALS_FILE)
    rows: dict[str, dict[int, dict[str, Any]]] = {}
    dups: dict[str, str | None] = {}
    for row in table.to_pylist():
        cid = str(row["conversation_id"])
        rows.setdefault(cid, {})[int(row["turn_index"])] = row
        dups[cid] = row.get("duplicate_of")
    shards = sorted((out / "work" / registry.dirname(registry.get("signals"))).glob("part-*.parquet"))
    if not shards:
        raise ConfigError(f"{out}/work holds no signal-stage shards (the de-identified sessions): rerun `uxbench "
                          "mine run` there without deleting work/")
    for shard in shards:
        part = read_with_sessions(shard, ["conversation_id", "session"])
        for cid, session in zip(part.column(0).to_pylist(), part.column(1).to_pylist(), strict=True):
            data = orjson.loads(session)
            turns = [MinedTurn(int(t["turn_index"]), str(t["role"]), str(t.get("content") or ""),
                               t.get("feedback"), t.get("meta") or {}) for t in data["turns"]]
            yield MinedConversation(str(cid), turns, rows.get(str(cid), {}), dups.get(str(cid)))
