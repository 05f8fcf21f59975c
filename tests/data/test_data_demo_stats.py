"""The bundled demo set, dataset statistics and validation reports."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from uxbench.data.loaders import DEMO_DIR, load_cases
from uxbench.data.schema import EvalCase, JudgeCase, RecoveryCase
from uxbench.data.stats import dataset_stats, validate
from uxbench.errors import DataError


def test_demo_set_size_languages_tasks() -> None:
    source = load_cases(None)
    assert source.is_demo and "demo" in source.description
    cases = list(source)
    assert len(cases) >= 40 and source.count() == len(cases)
    assert source.skipped.count == 0
    by = Counter((c.task, c.lang) for c in cases)
    for task in ("judge", "eval", "recovery"):
        assert by[(task, "zh")] > 0 and by[(task, "en")] > 0
    assert all(c.source == "demo" for c in cases)
    labels = Counter(c.label for c in cases if isinstance(c, JudgeCase))
    assert labels["good"] >= 12 and labels["bad"] >= 12
    assert len({c.id for c in cases}) == len(cases)


def test_demo_rows_are_labelled_and_map_to_the_taxonomy() -> None:
    for case in load_cases():
        assert case.labels.scenario_key is not None, case.id
        if isinstance(case, JudgeCase) and case.label == "good":
            assert case.labels.success_dimension_key is not None, case.id
        else:
            assert case.labels.failure_dimension_key is not None, case.id


def test_demo_exercises_the_raw_variants() -> None:
    rows = [
        json.loads(line)
        for p in sorted(DEMO_DIR.glob("*.jsonl"))
        for line in p.read_text("utf-8").splitlines()
    ]
    keys = Counter(k for r in rows for k in r)
    assert keys["selected_history"] and keys["source_query"] and keys["agent_response_full"]
    assert keys["history"] and keys["query"] and keys["response"] and keys["messages"]
    assert any(isinstance(r.get("history") or r.get("selected_history"), str) for r in rows)
    assert any(
        '"content": [' in str(r.get("agent_response_full")) or isinstance(r.get("agent_response_full"), dict)
        for r in rows
    )
    assert any(
        "ground_truth" not in r for r in rows if "agent_response_full" in r
    )  # label from the file name
    assert all(r.get("lang") in ("zh", "en") for r in rows)


def test_demo_filtered_by_task() -> None:
    assert all(isinstance(c, JudgeCase) for c in load_cases(task="judge"))
    assert all(isinstance(c, EvalCase) for c in load_cases(task="eval"))
    assert all(isinstance(c, RecoveryCase) for c in load_cases(task="recovery"))
    assert load_cases(task="eval").count() == len(list(load_cases(task="eval")))
    assert load_cases("demo", task="judge").is_demo
    assert load_cases(task="judge").fingerprint() != load_cases().fingerprint()


def test_payload_reply_in_demo_is_unwrapped() -> None:
    replies = [c.response for c in load_cases(task="judge")]  # type: ignore[union-attr]
    assert not any('"type"' in r for r in replies)


def test_dataset_stats_on_demo() -> None:
    stats = dataset_stats(load_cases())
    n = stats["n_cases"]
    assert n >= 40 and sum(stats["by_task"].values()) == n
    assert stats["by_label"] == {"bad": 12, "good": 12}
    overall = stats["overall"]
    assert 0 < overall["multi_turn_pct"] < 100
    assert overall["mean_turns"] > 1
    assert overall["mean_query_chars"] > 0 and overall["mean_response_chars"] > 0
    assert sum(overall["scenario"].values()) == n
    assert set(overall["lang"]) == {"zh", "en"}
    judge = stats["tasks"]["judge"]
    assert judge["label"] == {"bad": 12, "good": 12}
    assert sum(v for k, v in judge["success_dimension"].items() if k != "(none)") == 12
    assert stats["skipped"] == {"count": 0, "entries": []}
    assert stats["is_demo"] is True and len(stats["fingerprint"]) == 64


def test_stats_exact_values(tmp_path: Path) -> None:
    rows = [
        {
            "cid": "a",
            "query": "abcd",
            "history": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}],
            "scenario": "娱乐消遣",
            "difficulty": "easy",
        },
        {"cid": "b", "query": "ab", "scenario": "其他"},
        {"cid": "c", "query": ""},
    ]
    path = tmp_path / "task2_eval.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    stats = dataset_stats(load_cases(path, skip_invalid=True))
    assert stats["n_cases"] == 2
    ev = stats["tasks"]["eval"]
    assert ev["multi_turn_pct"] == 50.0 and ev["mean_turns"] == 1.5 and ev["mean_query_chars"] == 3.0
    assert ev["mean_response_chars"] is None
    assert ev["scenario"] == {"entertainment": 1, "其他": 1}
    assert ev["difficulty"] == {"easy": 1, "(none)": 1}
    assert stats["skipped"]["count"] == 1 and "line 3" in stats["skipped"]["entries"][0]
    with pytest.raises(DataError):
        dataset_stats(load_cases(path))


def test_validate_reports_errors_and_duplicates(tmp_path: Path) -> None:
    good = {"cid": "x", "query": "q"}
    path = tmp_path / "eval.jsonl"
    path.write_text("\n".join([
        json.dumps(good), "{broken", json.dumps(good), json.dumps({"cid": "y", "query": 5}),
        json.dumps({"cid": "x", "query": "another"}),
    ]))
    source = load_cases(path)
    report = validate(source)
    assert (report.n_valid, report.n_invalid) == (2, 2)
    assert [(e.line, e.field) for e in report.errors] == [(2, None), (4, "query")]
    # line 3 repeats line 1 exactly: left out and counted; line 5 reuses the id with other text
    assert report.read.exact_duplicates == 1 and report.read.duplicate_examples == [f"{path}, line 3 repeats line 1"]
    assert report.n_duplicate_ids == 1 and report.duplicate_ids == ["x"]
    assert report.by_task == {"eval": 2} and not report.ok
    assert source.skip_invalid is False  # validate works on a copy
    assert validate(load_cases()).ok
