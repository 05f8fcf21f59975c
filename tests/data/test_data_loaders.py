"""Loading local files and directories: formats, name hints, errors, skipping, counting, fingerprints."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uxbench.data.loaders import load_cases
from uxbench.data.schema import EvalCase, JudgeCase, RecoveryCase
from uxbench.errors import ConfigError, DataError


def judge(i: int, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cid": f"j{i}",
        "source_query": {"turn_index": 0, "message": f"question {i}"},
        "selected_history": [],
        "agent_response_full": f"answer {i}",
    }
    row.update(over)
    return row


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_official_names_give_task_and_label(tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "uxbench_task1_judge_bad_1k.jsonl", [judge(1), judge(2)])
    cases = list(load_cases(bad))
    assert [c.label for c in cases] == ["bad", "bad"]  # type: ignore[union-attr]
    assert all(isinstance(c, JudgeCase) and c.source == str(bad) for c in cases)
    good = write_jsonl(tmp_path / "uxbench_task1_judge_good_1k.jsonl", [judge(3)])
    assert [c.label for c in load_cases(good)] == ["good"]  # type: ignore[union-attr]


def test_directory_with_official_export(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "uxbench_task1_judge_bad_1k.jsonl", [judge(1), judge(2)])
    write_jsonl(tmp_path / "uxbench_task1_judge_good_1k.jsonl", [judge(3)])
    write_jsonl(tmp_path / "uxbench_task2_eval_4900.jsonl", [{"cid": "e1", "query": "q", "history": []}])
    rec = {"cid": "r1", "history": [], "failed_response": "f", "user_complaint": "c"}
    write_jsonl(tmp_path / "uxbench_task3_recovery_500.jsonl", [rec])
    (tmp_path / "README.md").write_text("not data")
    everything = load_cases(tmp_path)
    assert everything.count() == 5
    assert [type(c).__name__ for c in everything] == ["JudgeCase"] * 3 + ["EvalCase", "RecoveryCase"]
    judge_only = load_cases(tmp_path, task="judge")
    assert judge_only.count() == 3
    assert sorted(c.label for c in judge_only) == ["bad", "bad", "good"]  # type: ignore[union-attr]
    assert [c.id for c in load_cases(tmp_path, task="eval")] == ["e1"]
    assert [c.id for c in load_cases(tmp_path, task="recovery")] == ["r1"]
    assert "4 files" in everything.description and not everything.is_demo


def test_explicit_file_is_read_as_the_requested_task(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "uxbench_task1_judge_bad_1k.jsonl", [judge(1)])
    cases = list(load_cases(path, task="eval"))
    assert isinstance(cases[0], EvalCase) and cases[0].reference_response == "answer 1"


def test_mixed_file_is_filtered_by_row_task(tmp_path: Path) -> None:
    rows = [{**judge(1), "task": "judge", "ground_truth": 1}, {"cid": "e", "query": "q", "task": "eval"}]
    path = write_jsonl(tmp_path / "mixed.jsonl", rows)
    assert [c.id for c in load_cases(path, task="eval")] == ["e"]
    assert [c.task for c in load_cases(path)] == ["judge", "eval"]


def test_json_formats(tmp_path: Path) -> None:
    rows = [judge(1, ground_truth=1), judge(2, ground_truth=-1)]
    (tmp_path / "a.json").write_text(json.dumps(rows))
    (tmp_path / "b.json").write_text(json.dumps({"data": rows}))
    (tmp_path / "c.json").write_text(json.dumps(rows[0]))
    assert [c.id for c in load_cases(tmp_path / "a.json")] == ["j1", "j2"]
    assert [c.id for c in load_cases(tmp_path / "b.json")] == ["j1", "j2"]
    assert [c.id for c in load_cases(tmp_path / "c.json")] == ["j1"]
    assert load_cases(tmp_path / "b.json").count() == 2
    (tmp_path / "d.json").write_text("42")
    with pytest.raises(DataError, match=r"d\.json"):
        list(load_cases(tmp_path / "d.json"))


def test_parquet_in_batches_with_nested_history(tmp_path: Path) -> None:
    rows = [
        judge(i, ground_truth=1 if i % 2 else -1, selected_history=[{"role": "user", "message": f"h{i}"}])
        for i in range(1200)
    ]
    path = tmp_path / "cases.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=300)
    source = load_cases(path)
    assert source.count() == 1200
    cases = list(source)
    assert len(cases) == 1200
    assert cases[5].history[0].content == "h5" and cases[5].label == "good"  # type: ignore[union-attr]
    assert cases[1199].id == "j1199"


def test_parquet_error_names_row(tmp_path: Path) -> None:
    rows = [judge(1, ground_truth=1), judge(2, ground_truth=0)]
    path = tmp_path / "x.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(DataError) as info:
        list(load_cases(path))
    assert "row 2" in str(info.value) and info.value.field == "ground_truth"


def test_gzip_jsonl_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "task2_eval.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(
            "\ufeff"
            + json.dumps({"cid": "e1", "query": "q"})
            + "\n\n"
            + json.dumps({"cid": "e2", "query": "r"})
        )
    source = load_cases(path)
    assert source.count() == 2
    assert [c.id for c in source] == ["e1", "e2"]


def test_error_names_file_line_and_field_and_suggests_skip(tmp_path: Path) -> None:
    rows = [
        judge(1, ground_truth=1),
        judge(2, ground_truth=1, selected_history=[{"role": "bot?", "message": "x"}]),
    ]
    path = write_jsonl(tmp_path / "data.jsonl", rows)
    with pytest.raises(DataError) as info:
        list(load_cases(path))
    err = info.value
    assert err.source == str(path) and err.line == 2 and err.field == "selected_history[0].role"
    text = str(err)
    assert (
        str(path) in text
        and "line 2" in text
        and "selected_history[0].role" in text
        and "--skip-invalid" in text
    )


def test_invalid_json_line(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(judge(1, ground_truth=1)) + "\n\n{oops\n")
    with pytest.raises(DataError) as info:
        list(load_cases(path))
    assert info.value.line == 3 and "invalid JSON" in str(info.value)


def test_skip_invalid_counts_and_reasons(tmp_path: Path) -> None:
    rows: list[Any] = [judge(i, ground_truth=1) for i in range(30)]
    rows[3] = judge(3, ground_truth=0)
    rows[7] = "a string row"
    for i in range(10, 30):
        rows[i] = judge(i)  # no label and a name without bad/good: cannot infer
    path = write_jsonl(tmp_path / "data.jsonl", rows)
    source = load_cases(path, task="judge", skip_invalid=True)
    cases = list(source)
    assert len(cases) == 8
    report = source.skipped
    assert report.count == 22
    assert len(report.entries) == 20  # the first N reasons are kept
    first = report.entries[0]
    assert (first.source, first.line, first.field) == (str(path), 4, "ground_truth")
    assert report.entries[1].line == 8 and "JSON object" in report.entries[1].reason
    assert "line 4" in str(first)
    # a second pass starts a fresh report
    assert len(list(source)) == 8 and source.skipped.count == 22


def test_reiterable_and_fingerprint(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "judge_bad.jsonl", [judge(1), judge(2)])
    source = load_cases(path)
    assert [c.id for c in source] == [c.id for c in source] == ["j1", "j2"]
    fp = source.fingerprint()
    assert len(fp) == 64 and fp == load_cases(path).fingerprint()
    assert fp != load_cases(path, task="eval").fingerprint()
    write_jsonl(path, [judge(1), judge(3)])
    assert load_cases(path).fingerprint() != fp


def test_bad_sources(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        load_cases(tmp_path / "missing.jsonl")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DataError, match="unsupported"):
        load_cases(tmp_path / "notes.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=r"no \.jsonl"):
        load_cases(empty)
    with pytest.raises(ConfigError):
        load_cases(None, task="judgement")  # type: ignore[arg-type]
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="Parquet"):
        list(load_cases(tmp_path / "bad.parquet"))
    (tmp_path / "bad.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DataError, match="cannot read"):
        list(load_cases(tmp_path / "bad.jsonl.gz"))


def test_recovery_file(tmp_path: Path) -> None:
    row = {
        "cid": "r",
        "history": "[]",
        "failed_response": "f",
        "user_complaint": "c",
        "scenario": "办公与效率",
    }
    case = next(iter(load_cases(write_jsonl(tmp_path / "whatever.jsonl", [row]))))
    assert isinstance(case, RecoveryCase) and case.labels.scenario_key == "work_productivity"


def test_missing_id_gets_file_and_line(tmp_path: Path) -> None:
    row = {"query": "q"}
    case = next(iter(load_cases(write_jsonl(tmp_path / "eval.jsonl", [row, row]))))
    assert case.id == "eval.jsonl:1"


def test_parquet_with_message_and_content_variants(tmp_path: Path) -> None:
    rows = [
        judge(1, ground_truth=1, selected_history=[{"role": "user", "message": "via message"}]),
        judge(2, ground_truth=1, selected_history=[{"role": "user", "content": "via content"}]),
    ]
    path = tmp_path / "mixed.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert [c.history[0].content for c in load_cases(path)] == ["via message", "via content"]
