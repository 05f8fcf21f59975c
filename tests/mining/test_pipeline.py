"""The mining pipeline without a model: checkpoints, stage functions, the deterministic end-to-end run
on a synthetic log, resume, and the guarantee that no original personal value is written anywhere."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pipeline_support import PII_VALUES, log_rows, tree_bytes, write_log

from uxbench.errors import ConfigError, DataError
from uxbench.mining.dedup import DedupConfig
from uxbench.mining.deid import SALT_ENV, scan_for_values
from uxbench.mining.logformat import parse_row
from uxbench.mining.pipeline import MineConfig, MineResult, run_pipeline
from uxbench.mining.pipeline.engine import LocalEngine, canonical
from uxbench.mining.pipeline.outputs import SIGNAL_TABLE_SCHEMA
from uxbench.mining.pipeline.run import bucket_tmpdir
from uxbench.mining.pipeline.stages import (
    GATE_SCHEMA,
    deid_batch_table,
    gate_locations,
    gate_map,
    prefilter_map,
    signals_map,
    sum_count_column,
)
from uxbench.mining.pipeline.store import StageDir, atomic_write_json, stage_key
from uxbench.mining.prefilter import PrefilterConfig
from uxbench.mining.sessions import build_sessions
from uxbench.mining.signals import SignalConfig

SALT = "pipeline-test-salt"


def mine(log: Path, out: Path, **options: object) -> MineResult:
    config = MineConfig(inputs=(str(log),), out=str(out), llm=False, workers=1, **options)  # type: ignore[arg-type]
    return run_pipeline(config)


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, MineResult]]:
    root = tmp_path_factory.mktemp("mined")
    log = write_log(root / "log.jsonl")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, SALT)
        yield log, root / "out", mine(log, root / "out")


@pytest.fixture()
def salted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, SALT)


def signal_rows(out: Path) -> dict[tuple[str, int], dict[str, object]]:
    return {(r["conversation_id"], r["turn_index"]): r for r in pq.read_table(out / "signals.parquet").to_pylist()}


def jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


# -- checkpoints ------------------------------------------------------------------------------------------

def test_stage_key_follows_settings_and_upstream() -> None:
    assert stage_key("s", {"a": 1}, "up") == stage_key("s", {"a": 1}, "up")
    assert stage_key("s", {"a": 1}, "up") != stage_key("s", {"a": 2}, "up")
    assert stage_key("s", {"a": 1}, "up") != stage_key("s", {"a": 1}, "other")


def test_stage_dir_keeps_its_own_work_and_clears_another_key(tmp_path: Path) -> None:
    table = pa.table({"conversation_id": ["a"], "counts": ['{"n": 1}']})
    stage = StageDir(tmp_path, "02-x", "k1")
    assert stage.prepare() is False
    stage.commit_table(0, table, {"n": 1})
    (stage.path / ".part-000001.parquet.tmp-99").write_bytes(b"half")  # a write killed half-way
    stage.shard_path(2).write_bytes(b"shard without marker")  # killed between shard and marker
    again = StageDir(tmp_path, "02-x", "k1")
    assert again.prepare() is True
    assert again.shard_done(0) and not again.shard_done(2)
    assert again.pending(3) == [1, 2]
    assert not list(stage.path.glob(".*tmp*"))
    assert again.finish(1)["counts"] == {"n": 1} and again.done() is not None
    other = StageDir(tmp_path, "02-x", "k2")
    assert other.done() is None
    assert other.prepare() is False
    assert not other.shard_done(0) and not other.shard_path(0).exists()


def test_atomic_json_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "a.json", {"b": 1, "a": [1, 2]})
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
    assert json.loads((tmp_path / "a.json").read_text()) == {"a": [1, 2], "b": 1}


# -- stage functions ---------------------------------------------------------------------------------------

def stage_one_table() -> pa.Table:
    turns = [t for row in log_rows() for t in parse_row(row)]
    sessions = build_sessions(turns)
    return deid_batch_table(7, list(reversed(sessions)), b"salt")


def test_stage_functions_drop_with_reasons_and_keep_order() -> None:
    first = stage_one_table()
    cids = first.column("conversation_id").to_pylist()
    assert cids == sorted(cids) and set(first.column("batch").to_pylist()) == {7}
    assert all(v not in s for s in first.column("session").to_pylist() for v in PII_VALUES)
    gated = gate_map(first)
    unsafe = gated.filter(pa.compute.equal(gated.column("conversation_id"), "unsafe")).to_pylist()[0]
    assert unsafe["session"] is None and json.loads(unsafe["gate"])["categories"] == ["weapons_drugs"]
    assert "bomb" not in unsafe["gate"]
    assert sum_count_column(gated) == {"checked": 8, "gated": 1, "gated_weapons_drugs": 1}
    kept = prefilter_map(gated, PrefilterConfig())
    assert kept.num_rows == 7  # the gated row is not carried on
    assert sum_count_column(kept) == {"dropped_no_reply": 1, "kept": 6}
    signals = signals_map(kept, SignalConfig(), DedupConfig())
    assert signals.num_rows == 6 and signals.column("conversation_id").to_pylist() == sorted(
        c for c in cids if c not in ("unsafe", "too-short"))
    rows = signals.column("turn_rows").to_pylist()[0]
    assert set(rows[0]) == set(SIGNAL_TABLE_SCHEMA.names) - {"duplicate_of", "llm_followup_label"}
    assert canonical(gated, GATE_SCHEMA).equals(gated)
    shuffled = gated.take(list(reversed(range(gated.num_rows))))  # out of order: sorted again
    assert canonical(shuffled, GATE_SCHEMA).equals(gated)
    accents = pa.table({"conversation_id": ["a", "é", "z", "ä"], "n": [1, 2, 3, 4]})  # UTF-8 byte order
    assert canonical(accents, accents.schema).column("n").to_pylist() == [1, 3, 4, 2]


def test_gate_reasons_lose_their_snippets() -> None:
    where = gate_locations(['weapons_drugs: "how to make a bomb" (user turn 2)', "sexual: odd"])
    assert where == [{"category": "weapons_drugs", "role": "user", "turn_index": 2},
                     {"category": "sexual", "role": None, "turn_index": None}]


def test_worker_pool_writes_the_same_shards_as_in_line(tmp_path: Path) -> None:
    first = stage_one_table()
    halves = [first.slice(0, 4).replace_schema_metadata(None), first.slice(4)]
    src = StageDir(tmp_path, "01", "k")
    src.prepare()
    for batch, half in enumerate(halves):
        src.commit_table(batch, half.set_column(0, "batch", pa.array([batch] * half.num_rows, pa.int32())),
                         {"n": half.num_rows})
    results = []
    for workers in (1, 2):
        dst = StageDir(tmp_path / f"w{workers}", "02", "k2")
        dst.prepare()
        engine = LocalEngine(workers)
        try:
            engine.run_map(gate_map, src, dst, [0, 1], ["batch", "conversation_id", "session"], GATE_SCHEMA)
        finally:
            engine.close()
        results.append([dst.shard_path(b).read_bytes() for b in (0, 1)])
    assert results[0] == results[1]


# -- the deterministic run end to end -------------------------------------------------------------------

def test_signal_table_has_one_row_per_assistant_turn_with_evidence(mined: tuple[Path, Path, MineResult]) -> None:
    _, out, _ = mined
    rows = signal_rows(out)
    assert pq.read_schema(out / "signals.parquet").names == SIGNAL_TABLE_SCHEMA.names
    assert {cid for cid, _ in rows} == {"zh-complaint", "en-complaint", "zh-regen", "en-liked", "en-liked-dup",
                                         "zh-card-repeat"}
    assert len(rows) == 11
    zh = rows[("zh-complaint", 1)]
    assert zh["thumbs_down"] and zh["complaint"] and zh["dissatisfied"]
    assert "不对" in str(zh["complaint_evidence"]) and zh["created_at"] == "2024-05-01T09:00:20+08:00"
    assert zh["recovery_outcome"] == "recovered"
    assert rows[("zh-regen", 1)]["regenerate"] and rows[("zh-regen", 1)]["thumbs_up"]
    card = rows[("zh-card-repeat", 1)]
    assert card["repeat"] and card["skim"] and not card["complaint"]
    assert rows[("zh-card-repeat", 3)]["dismiss"] and rows[("zh-card-repeat", 3)]["recovery_outcome"] == "user_gave_up"
    assert rows[("en-liked", 1)]["thumbs_up"] and rows[("en-liked", 1)]["satisfied"]
    assert rows[("en-liked", 3)]["conversation_end"] and rows[("en-liked", 3)]["complaint"] is None
    assert rows[("en-liked-dup", 1)]["duplicate_of"] == "en-liked"
    assert all(r["llm_followup_label"] is None for r in rows.values())
    with (out / "signals.csv").open(encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    assert lines[0].replace('"', "").split(",") == SIGNAL_TABLE_SCHEMA.names
    assert len([line for line in lines[1:] if line.startswith('"')]) == 11


def test_side_files_hold_reasons_types_and_hashes_only(mined: tuple[Path, Path, MineResult]) -> None:
    _, out, result = mined
    gated = jsonl(out / "gated.jsonl")
    assert gated == [{"conversation_id": "unsafe", "categories": ["weapons_drugs"], "hits": 1,
                      "where": [{"category": "weapons_drugs", "role": "user", "turn_index": 0}]}]
    changes = jsonl(out / "deid_changes.jsonl")
    types = {c["type"] for rec in changes for c in rec["changes"]}  # type: ignore[attr-defined]
    assert types == {"PHONE", "EMAIL", "ID", "CARD", "IP", "ADDRESS"}
    assert {k for rec in changes for c in rec["changes"] for k in c} == {  # type: ignore[attr-defined]
        "type", "turn_index", "regenerated", "field", "start", "end", "placeholder", "value_hash"}
    assert jsonl(out / "dropped.jsonl") == [
        {"conversation_id": "too-short", "stage": "prefilter", "reason": "no_reply"},
        {"conversation_id": "en-liked-dup", "stage": "dedup", "reason": "near_duplicate", "duplicate_of": "en-liked"},
    ]
    counts = json.loads((out / "stage_counts.json").read_text())
    assert counts == result.stage_counts
    assert counts["ingest"]["turns"] == 30 and counts["sessions"]["regenerated_replies"] == 1
    assert counts["gate"]["gated"] == 1 and counts["dedup"] == {"checked": 6, "duplicates": 1, "kept": 5}
    assert counts["signals"]["assistant_turns"] == 11
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and manifest["config"]["llm"] is False
    assert manifest["inputs"][0]["bytes"] > 0 and "sha256_head_tail" in manifest["inputs"][0]


def test_no_file_written_holds_an_original_value(mined: tuple[Path, Path, MineResult]) -> None:
    log, out, _ = mined
    assert scan_for_values([log], PII_VALUES)  # the scan does find them where they are
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 25  # outputs, shards, markers, keys, the salt
    assert scan_for_values(files, PII_VALUES) == []
    assert not bucket_tmpdir(out).exists()
    assert not [p for p in out.parent.iterdir() if ".uxbench-tmp" in p.name]


def test_rerun_resumes_everything_and_changes_nothing(mined: tuple[Path, Path, MineResult], salted: None) -> None:
    log, out, _ = mined
    before = tree_bytes(out)
    again = mine(log, out)
    assert again.resumed == ["01-sessions", "02-gate", "03-prefilter", "04-signals", "05-dedup"]
    assert tree_bytes(out) == before


def test_changed_settings_recompute_from_that_stage_on(tmp_path: Path, salted: None) -> None:
    log = write_log(tmp_path / "log.jsonl")
    out = tmp_path / "out"
    mine(log, out)
    shards = {p: p.read_bytes() for p in (out / "work" / "01-sessions").glob("part-*")}
    result = mine(log, out, signals=SignalConfig(skim_max_gap_s=1.0))
    assert result.resumed == ["01-sessions", "02-gate", "03-prefilter"]
    assert {p: p.read_bytes() for p in shards} == shards
    assert not signal_rows(out)[("zh-card-repeat", 1)]["skim"]
    with pytest.raises(ConfigError, match="--fresh"):
        mine(write_log(tmp_path / "log.jsonl", copies=2), out)
    assert mine(log, out, fresh=True).resumed == []


def test_a_killed_shard_is_redone_and_outputs_stay_identical(mined: tuple[Path, Path, MineResult],
                                                             tmp_path: Path, salted: None) -> None:
    log, out, _ = mined
    reference = tree_bytes(out)
    copy = tmp_path / "copy"
    for rel, data in tree_bytes(out).items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes(data)
    for name in ("03-prefilter", "04-signals"):
        (copy / "work" / name / "_DONE").unlink()
        (copy / "work" / name / "part-000000._DONE").unlink()
    (copy / "signals.parquet").unlink()
    mine(log, copy)
    assert tree_bytes(copy, skip=("manifest.json",)) == {k: v for k, v in reference.items() if k != "manifest.json"}


def test_the_llm_stages_need_a_model_or_no_llm(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--model.*--no-llm"):
        MineConfig(inputs=("x.jsonl",), out=str(tmp_path))
    with pytest.raises(ConfigError, match="--llm-signals"):
        MineConfig(inputs=("x.jsonl",), out=str(tmp_path), llm=False, llm_signals=True)
    config = MineConfig(inputs=("x",), out="o", model="openai:m",
                        model_args={"extra_body": '{"api_key": "sk-1"}', "base_url": "http://u"})
    assert config.public_dict()["model_args"] == {"extra_body": '{"api_key":"<redacted>"}', "base_url": "http://u"}
    with pytest.raises(ConfigError, match="Did you mean 'base_url'"):
        MineConfig(inputs=("x",), out="o", model="openai:m", model_args={"base-url": "http://u"})


def test_no_llm_run_imports_no_model_layer_and_no_ray(tmp_path: Path) -> None:
    import subprocess
    import sys

    log = write_log(tmp_path / "log.jsonl")
    code = (
        "import sys\n"
        "from uxbench.cli.main import app\n"
        f"app(['mine', 'run', {str(log)!r}, '--out', {str(tmp_path / 'out')!r}, '--no-llm', '--quiet'],"
        " standalone_mode=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('uxbench.models', 'ray', 'uxbench.mining.agents'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, SALT_ENV: SALT})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_conversation_files_without_times_and_an_empty_log(tmp_path: Path, salted: None) -> None:
    log = tmp_path / "chats.jsonl"
    chats = [
        {"id": "m1", "messages": [{"role": "user", "content": "What is the capital of Australia?"},
                                  {"role": "assistant", "content": "Canberra is the capital of Australia."},
                                  {"role": "user", "content": "That's wrong, it is Sydney!"},
                                  {"role": "assistant", "content": "Canberra has been the capital since 1913."}]},
        {"id": "s1", "conversations": [{"from": "human", "value": "写一首关于秋天的短诗"},
                                       {"from": "gpt", "value": "秋风起，落叶黄，一行大雁向南方。"}]},
        {"broken": True},
    ]
    log.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in chats) + "\n", encoding="utf-8")
    result = mine(log, tmp_path / "out", skip_invalid=True)
    assert result.stage_counts["ingest"]["invalid_rows"] == 1
    assert result.stage_counts["ingest"]["errors"][0]["line"] == 3
    rows = signal_rows(tmp_path / "out")
    assert rows[("m1", 1)]["complaint"] and rows[("m1", 1)]["skim"] is None  # no times: not computed
    assert rows[("m1", 1)]["created_at"] is None and len(rows) == 3

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(DataError, match="no turns were read: the file holds no rows"):  # nothing read: an error
        mine(empty, tmp_path / "empty-out")
