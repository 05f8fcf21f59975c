"""The gate's and the prefilter's shards hold a `kept` flag instead of the session text, joined back on read."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pipeline_support import write_log

from uxbench.errors import DataError
from uxbench.mining.deid import SALT_ENV
from uxbench.mining.pipeline import MineConfig, run_pipeline
from uxbench.mining.pipeline.engine import deid_shard
from uxbench.mining.pipeline.stages import GATE_SCHEMA
from uxbench.mining.pipeline.store import StageDir, read_with_sessions, with_session, without_session


def gate_rows(ids: list[str], sessions: list[str | None]) -> pa.Table:
    return pa.table({"batch": pa.array([0] * len(ids), pa.int32()), "conversation_id": ids, "session": sessions,
                     "gate": [None if s else '{"categories": []}' for s in sessions],
                     "counts": ["{}"] * len(ids)}, schema=GATE_SCHEMA)


def test_kept_in_place_of_the_text_and_the_text_joined_back() -> None:
    table = gate_rows(["a", "b", "c"], ['{"t": "A"}', None, '{"t": "C\\u00e9"}'])
    stored = without_session(table)
    assert stored.column_names == ["batch", "conversation_id", "kept", "gate", "counts"]
    assert stored["kept"].to_pylist() == [True, False, True]
    sessions = pa.table({"conversation_id": ["c", "b", "a", "z"],  # another order, and more rows
                         "session": ['{"t": "C\\u00e9"}', '{"t": "B"}', '{"t": "A"}', '{"t": "Z"}']})
    assert with_session(stored, sessions, "here").equals(table)


def test_a_kept_row_without_its_session_is_a_damaged_work_directory() -> None:
    stored = without_session(gate_rows(["a", "b"], ['{"t": "A"}', '{"t": "B"}']))
    with pytest.raises(DataError, match=r"02-gate batch 0.*damaged.*--fresh"):
        with_session(stored, pa.table({"conversation_id": ["a"], "session": ['{"t": "A"}']}), "02-gate batch 0")


def test_a_stage_that_keeps_or_drops_writes_no_text_and_reads_it_back(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, "stage-join-test-salt-0123")
    log = write_log(tmp_path / "log.jsonl")
    out = tmp_path / "out"
    run_pipeline(MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=1))
    work = out / "work"
    sessions = pq.read_table(work / "01-sessions" / "part-000000.parquet")
    texts = dict(zip(sessions["conversation_id"].to_pylist(), sessions["session"].to_pylist(), strict=True))
    for name in ("02-gate", "03-prefilter", "04-signals"):
        shard = pq.read_table(work / name / "part-000000.parquet")
        assert "session" not in shard.column_names and "kept" in shard.column_names
        stage = StageDir(work, name, "unused", session_from=StageDir(work, "01-sessions", "unused"))
        back = stage.read_input(0)
        assert back.column_names == [("session" if c == "kept" else c) for c in shard.column_names]
        for cid, kept, text in zip(shard["conversation_id"].to_pylist(), shard["kept"].to_pylist(),
                                   back["session"].to_pylist(), strict=True):
            assert text == (texts[cid] if kept else None)
        assert stage.read_input(0, ["session", "batch"]).column_names == ["session", "batch"]
        # a reader of the finished output, without the pipeline's stage objects: the marker says where the text is
        assert read_with_sessions(stage.shard_path(0), ["conversation_id", "session"]).equals(
            back.select(["conversation_id", "session"]))
    gate = pq.read_table(work / "02-gate" / "part-000000.parquet")
    assert not all(gate["kept"].to_pylist()) and any(gate["kept"].to_pylist())  # the log has a gated conversation


def test_the_chain_reads_a_finished_stage_with_its_text(tmp_path: Path) -> None:
    # de-identification redone for a batch whose gate shard an earlier run finished: the prefilter gets the text
    from uxbench.mining.pipeline.engine import MapLink
    from uxbench.mining.pipeline.stages import PREFILTER_SCHEMA, gate_map, prefilter_map
    from uxbench.mining.prefilter import PrefilterConfig
    from uxbench.mining.sessions import spill_line
    from uxbench.mining.types import Turn

    turns = [Turn(conversation_id=f"c{i}", turn_index=t, role="user" if t % 2 == 0 else "assistant",
                  content=f"question number {i} about the weather in town {t}") for i in range(3) for t in range(4)]
    conversations = [(f"c{i}", [spill_line(t) for t in turns if t.conversation_id == f"c{i}"]) for i in range(3)]
    sessions = StageDir(tmp_path, "01-sessions", "k1")
    gate = StageDir(tmp_path, "02-gate", "k2", session_from=sessions)
    prefilter = StageDir(tmp_path, "03-prefilter", "k3", session_from=sessions)
    for stage in (sessions, gate, prefilter):
        stage.prepare()
    columns = ("batch", "conversation_id", "session")
    chain = (MapLink(gate_map, gate, columns, GATE_SCHEMA),
             MapLink(lambda t: prefilter_map(t, PrefilterConfig()), prefilter, columns, PREFILTER_SCHEMA))
    deid_shard(sessions, 0, conversations, b"salt", chain)
    first = prefilter.shard_path(0).read_bytes()
    prefilter.marker_path(0).unlink()
    sessions.marker_path(0).unlink()
    deid_shard(sessions, 0, conversations, b"salt", chain)  # the gate's shard is done: read back, text joined
    assert prefilter.shard_path(0).read_bytes() == first
    assert pq.read_table(prefilter.shard_path(0))["kept"].to_pylist() == [True, True, True]


def test_a_shard_without_text_whose_marker_names_no_source_is_an_error(tmp_path: Path) -> None:
    stage = tmp_path / "work" / "04-signals"
    stage.mkdir(parents=True)
    pq.write_table(pa.table({"conversation_id": ["a"], "kept": [True]}), stage / "part-000000.parquet")
    with pytest.raises(DataError, match=r"part-000000.parquet holds no session text.*--fresh"):
        read_with_sessions(stage / "part-000000.parquet", ["conversation_id", "session"])
    (stage / "part-000000._DONE").write_text('{"key": "k", "counts": {}, "session_from": "../elsewhere"}')
    with pytest.raises(DataError, match="names no stage"):
        read_with_sessions(stage / "part-000000.parquet", ["conversation_id", "session"])
