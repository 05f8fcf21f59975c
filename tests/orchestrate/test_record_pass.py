"""The summary's one pass over a run's records (`orchestrate.summary.RecordPass`): the usage, the first errors and
the samples.jsonl export it gathers are what separate passes give, whatever the task's summary reads."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from uxbench.models.api import Usage
from uxbench.orchestrate.summary import run_summary, usage_of
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import SAMPLES_JSONL, RunStore
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.judge.options import JudgeOptions
from uxbench.tasks.judge.task import JudgeTask

SPEC = "openai:some-model"
MANIFEST: dict[str, Any] = {"run_id": "r", "model": {"spec": SPEC}, "data": {}}


def _store(tmp_path: Path) -> tuple[RunStore, list[str]]:
    store = RunStore(tmp_path / "run")
    ids = []
    for i in range(12):
        status = "error" if i % 5 == 4 else "too_long" if i == 7 else "ok"
        cached = i % 3 == 0
        usage = Usage(input_tokens=100 + i, output_tokens=1 + i % 2)
        rec = SampleRecord(
            sample_id=f"s{i:02d}", case_id=f"c{i}", index=11 - i, status=status,  # data order: reversed
            gold="good" if i % 2 else "bad", prediction=None if status != "ok" else "good" if i % 4 else "bad",
            parse_note="single token", raw_output="好", error=f"failure {i}" if status != "ok" else None,
            strata={"scenario": "x", "n_turns": 2}, usage=usage, cached_usage=usage if cached else Usage(),
            n_calls=1, n_cached=int(cached), latency_s=0.25 * i, cached=cached,
        )
        store.put(rec, b"{}")
        ids.append(rec.sample_id)
    return store, ids


def test_the_one_pass_gives_what_separate_passes_give(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    selected = ids[1:]  # a selection: the export and the figures keep to it
    with store.exporting_jsonl() as export:
        summary = run_summary(store, JudgeTask(JudgeOptions(lang="zh")), MANIFEST, SummaryOptions(n_boot=20),
                              selected=selected, each=export)
    fused = (store.path / SAMPLES_JSONL).read_bytes()
    store.export_jsonl(selected)
    assert fused == (store.path / SAMPLES_JSONL).read_bytes() and fused.count(b"\n") == 11
    expected = usage_of(store.iter_records(selected), SPEC).to_dict()
    assert {k: summary["usage"]["model"][k] for k in expected} == expected
    assert summary["usage"]["model"]["errors"] == 3  # s04 s07 s09: error, too_long, error
    errors = [r.error for r in store.iter_records(selected) if r.status == "error"]
    assert summary["errors"] == errors[:3] and summary["too_long_errors"] == ["failure 7"]
    store.close()


class _FirstOnly:
    """A task whose summary reads one record and stops."""

    name = "judge"
    generative = False

    def summarize(self, records: Iterable[SampleRecord], **_: Any) -> dict[str, Any]:
        first = next(iter(records))
        return {"n_samples": 1, "n_errors": 0, "first": first.sample_id}


def test_records_a_task_leaves_unread_are_still_counted_and_exported(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    seen: list[str] = []
    summary = run_summary(store, _FirstOnly(), MANIFEST, SummaryOptions(), selected=ids,  # type: ignore[arg-type]
                          each=lambda r: seen.append(r.sample_id))
    assert summary["first"] == "s11"  # data order
    assert seen == [f"s{i:02d}" for i in reversed(range(12))]
    assert summary["usage"]["model"]["requests"] == 12
    store.close()


def test_an_export_whose_block_fails_leaves_the_old_file(tmp_path: Path) -> None:
    store, ids = _store(tmp_path)
    store.export_jsonl(ids)
    before = (store.path / SAMPLES_JSONL).read_bytes()
    with pytest.raises(RuntimeError), store.exporting_jsonl() as export:
        for rec in store.iter_records(ids[:2]):
            export(rec)
        raise RuntimeError("the summary failed")
    assert (store.path / SAMPLES_JSONL).read_bytes() == before
    assert not [p for p in store.path.iterdir() if ".tmp-" in p.name]  # no temporary file left
    store.close()


def _scored(tmp_path: Path) -> tuple[RunStore, list[str], dict[str, Any]]:
    """A Task 2 run's store: 12 generations, two judges' scores (one with a failed call), in reversed data order."""
    from uxbench.runs.records import ScoreRecord

    store = RunStore(tmp_path / "run")
    ids = []
    for i in range(12):
        rec = SampleRecord(sample_id=f"s{i:02d}", case_id=f"c{i}", index=11 - i, status="ok", raw_output="reply",
                           strata={"scenario": "x"}, usage=Usage(input_tokens=10, output_tokens=3), n_calls=1)
        store.put(rec, b"{}")
        ids.append(rec.sample_id)
        for judge, n in (("grm-b", 7), ("grm-a", 5)):
            store.put_score(ScoreRecord(
                sample_id=rec.sample_id, case_id=rec.case_id, judge=judge, index=11 - i,
                status="error" if i == 3 else "ok",
                label=None if i == 3 else "good" if i % 2 else "bad", usage=Usage(input_tokens=n + i, output_tokens=1),
                n_calls=1, latency_s=0.1 * i))
    manifest = {**MANIFEST, "task": "eval", "judges": {"grm-a": {"spec": "openai:a"}, "grm-b": {"spec": "openai:b"}}}
    return store, ids, manifest


def test_the_scores_are_read_once_for_their_summary_usage_and_export(tmp_path: Path) -> None:
    """The judges' usage and scores.jsonl gathered in the summary's pass over the scores are what the separate
    passes give (`usage_of`, `export_scores_jsonl`), and the scores are read once, not three times."""
    from uxbench.runs.store import SCORES_JSONL
    from uxbench.tasks.eval.task import EvalTask

    store, ids, manifest = _scored(tmp_path)
    selected = ids[2:]
    reads: list[str] = []
    real = store.iter_scores

    def counted(judge: str, sample_ids: Any = None) -> Any:
        reads.append(judge)
        return real(judge, sample_ids)

    store.iter_scores = counted  # type: ignore[method-assign]
    with store.exporting_scores_jsonl(selected) as sink:
        summary = run_summary(store, EvalTask(), manifest, SummaryOptions(n_boot=20), selected=selected,
                              scores_sink=sink)
    assert sink.whole and sorted(reads) == ["grm-a", "grm-b"]  # one read of each judge's scores
    store.iter_scores = real  # type: ignore[method-assign]
    fused = (store.path / SCORES_JSONL).read_bytes()
    store.export_scores_jsonl(selected)
    assert fused == (store.path / SCORES_JSONL).read_bytes() and fused.count(b"\n") == 20
    for key, spec in (("grm-a", "openai:a"), ("grm-b", "openai:b")):
        expected = usage_of(store.iter_scores(key, selected), spec).to_dict()
        assert {k: summary["usage"][f"judge:{key}"][k] for k in expected} == expected
    store.close()


class _SecondJudgeFirst:
    """A generative task whose summary reads the judges out of the store's order, one of them twice."""

    name = "eval"
    generative = True

    def summarize(self, records: Iterable[SampleRecord], *, scores: Any = None, **_: Any) -> dict[str, Any]:
        for _ in records:
            pass
        later = [s.sample_id for s in scores["grm-b"]]
        again = [s.sample_id for s in scores["grm-b"]]
        first = [s.sample_id for s in scores["grm-a"]][:1]
        return {"n_samples": 12, "n_errors": 0, "seen": (later == again, first)}


def test_scores_read_out_of_order_are_exported_and_counted_from_the_store(tmp_path: Path) -> None:
    from uxbench.runs.store import SCORES_JSONL

    store, ids, manifest = _scored(tmp_path)
    store.export_scores_jsonl(ids)
    expected_file = (store.path / SCORES_JSONL).read_bytes()
    (store.path / SCORES_JSONL).unlink()
    with store.exporting_scores_jsonl(ids) as sink:
        summary = run_summary(store, _SecondJudgeFirst(), manifest, SummaryOptions(), selected=ids,  # type: ignore[arg-type]
                              scores_sink=sink)
    assert not sink.whole and summary["seen"] == (True, ["s11"])
    assert (store.path / SCORES_JSONL).read_bytes() == expected_file  # written from the store instead
    assert not [p for p in store.path.iterdir() if ".tmp-" in p.name]
    for key, spec in (("grm-a", "openai:a"), ("grm-b", "openai:b")):
        expected = usage_of(store.iter_scores(key, ids), spec).to_dict()
        assert {k: summary["usage"][f"judge:{key}"][k] for k in expected} == expected
    store.close()
