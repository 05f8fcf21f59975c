"""The stage registry: a stage is a pure batch function plus one entry; the runner, the checkpoint names and
keys, the counts and resume all follow from the list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest
from pipeline_support import write_log

from uxbench.mining.deid import SALT_ENV
from uxbench.mining.pipeline import MineConfig, registry, run_pipeline
from uxbench.mining.pipeline.registry import Stage
from uxbench.mining.pipeline.stages import load_session

LANGUAGE_SCHEMA = pa.schema([("batch", pa.int32()), ("conversation_id", pa.string()), ("session", pa.string()),
                             ("language", pa.string()), ("counts", pa.string())])


def language_map(table: pa.Table) -> pa.Table:
    """A new stage: the script of each conversation's first user message."""
    rows: list[dict[str, Any]] = []
    for row in table.to_pylist():
        if row["session"] is None:
            continue
        first = next(t.content for t in load_session(row["session"]).turns if t.role == "user")
        lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in first) else "en"
        rows.append({**row, "language": lang, "counts": orjson.dumps({lang: 1}).decode()})
    return pa.Table.from_pylist(rows, schema=LANGUAGE_SCHEMA)


def test_stage_names_come_from_the_list(tmp_path: Path) -> None:
    assert [registry.dirname(s) for s in registry.STAGES] == [
        "01-sessions", "01b-deid-model", "02-gate", "03-prefilter", "04-signals", "05-dedup", "06-llm-signals",
        "07-agents", "08-cases"]
    rules_only = MineConfig(inputs=("log.jsonl",), out=str(tmp_path / "out"), llm=False)
    with_model = rules_only.model_copy(update={"deid_model": "openai:local"})
    # "previous" is the nearest enabled stage: the optional model pass of de-identification when it runs.
    assert registry.upstream(registry.get("gate"), rules_only) is registry.get("sessions")
    assert registry.upstream(registry.get("gate"), with_model) is registry.get("deid_model")
    assert registry.upstream(registry.get("agents")) is registry.get("dedup")  # agents read dedup, not 06
    with pytest.raises(KeyError, match="no mining stage named 'nope'"):
        registry.get("nope")


def test_a_new_map_stage_is_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "registry-salt-01")
    log = write_log(tmp_path / "log.jsonl")
    config = MineConfig(inputs=(str(log),), out=str(tmp_path / "out"), llm=False, workers=1)
    before = run_pipeline(config)

    stages = list(registry.STAGES)
    stages.insert(stages.index(registry.get("signals")) + 1, Stage(
        "language", "map", bind=lambda c: language_map, schema=LANGUAGE_SCHEMA, settings=lambda ctx: {"v": 1}))
    monkeypatch.setattr(registry, "STAGES", tuple(stages))
    after = run_pipeline(config)

    work = tmp_path / "out" / "work"
    assert (work / "05-language" / "_DONE").exists() and (work / "06-dedup" / "_DONE").exists()
    assert after.stage_counts["language"] == {"en": 3, "zh": 3}  # the conversations the prefilter kept
    # Stages before the new one were reused; the one after it was recomputed under its new name and key.
    assert after.resumed == ["01-sessions", "02-gate", "03-prefilter", "04-signals"]
    assert after.stage_counts["dedup"] == before.stage_counts["dedup"]
    again = run_pipeline(config)
    assert again.resumed == ["01-sessions", "02-gate", "03-prefilter", "04-signals", "05-language", "06-dedup"]
