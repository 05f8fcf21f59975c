"""Reports over real run directories (RunStore on SQLite) with summaries from judge_metrics."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from uxbench.errors import ConfigError, UxbenchError
from uxbench.metrics import judge_metrics, mcnemar
from uxbench.report import compare_runs, load_run, render, render_summary, report_from_summaries
from uxbench.report.render import pct
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore

Case = tuple[str, str, str | None]


def make_run(
    root: Path, name: str, model: str, cases: Sequence[Case], *, demo: bool = False,
    errors: frozenset[str] = frozenset(), task_config: dict[str, str] | None = None,
) -> Path:
    """A finished judge run: manifest, one record per case, summary with judge_metrics output."""
    path = root / name
    with RunStore(path) as store:
        store.write_manifest({
            "run_id": name, "task": "judge", "model": {"spec": model, "args": {}},
            "task_config": task_config or {"formulation": "binary"},
            "data": {"description": "unit cases", "fingerprint": "fp1"},
        })
        for i, (cid, gold, pred) in enumerate(cases):
            store.put(SampleRecord(
                sample_id=f"{name}-{cid}", case_id=cid, index=i, status="error" if cid in errors else "ok",
                gold=gold, prediction=pred, strata={"scenario": "s1" if i % 2 else "s2"},
            ))
        golds = [g for _, g, _ in cases]
        preds = [p for _, _, p in cases]
        metrics = judge_metrics(golds, preds, strata={"scenario": ["s1" if i % 2 else "s2"
                                                                    for i in range(len(cases))]}, n_boot=300)
        store.write_summary({
            "task": "judge", "model": model, "demo_data": demo,
            "data": {"description": "unit cases", "fingerprint": "fp1"},
            "n_samples": len(cases), "n_errors": len(errors), "metrics": metrics, "usage": {},
            "run_dir": str(path),
        })
    return path


def _cases() -> tuple[list[Case], list[Case]]:
    # 20 good + 20 bad. A: 18/20 good right, 8/20 bad right (2 unparseable bad).
    # B: 16/20 good right, 12/20 bad right; B lacks case b19 and has an extra case x1.
    a: list[Case] = []
    b: list[Case] = []
    for i in range(20):
        a.append((f"g{i}", "good", "good" if i < 18 else "bad"))
        b.append((f"g{i}", "good", "good" if i < 16 else "bad"))
    for i in range(20):
        a.append((f"b{i}", "bad", "bad" if i < 8 else (None if i < 10 else "good")))
        if i < 19:
            b.append((f"b{i}", "bad", "bad" if i < 12 else "good"))
    b.append(("x1", "bad", "bad"))
    return a, b


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = _cases()
    return make_run(tmp_path, "run-a", "hf:tiny-a", a, demo=True), make_run(tmp_path, "run-b", "hf:tiny-b", b)


def test_load_run(two_runs: tuple[Path, Path]) -> None:
    view = load_run(two_runs[0])
    assert view.model == "hf:tiny-a" and view.task == "judge" and view.run_id == "run-a"
    recs = view.records()
    assert len(recs) == 40 and recs[0].case_id == "g0"


def test_load_run_errors(tmp_path: Path) -> None:
    with pytest.raises(UxbenchError, match="not a uxbench run directory"):
        load_run(tmp_path)
    with RunStore(tmp_path / "r") as store:
        store.write_manifest({"run_id": "r", "task": "judge"})
    with pytest.raises(UxbenchError, match="has not finished"):
        load_run(tmp_path / "r")
    with RunStore(tmp_path / "r") as store:
        store.write_summary({"task": "eval", "metrics": {}})
    with pytest.raises(UxbenchError, match="judge"):
        load_run(tmp_path / "r")


def test_compare_rows_and_paired(two_runs: tuple[Path, Path]) -> None:
    rep = compare_runs(two_runs, n_boot=500)
    ra, rb = rep["runs"]
    assert rep["baseline"] == "hf:tiny-a" and rep["demo_data"] is True
    assert (ra["n"], ra["n_good"], ra["n_bad"]) == (40, 20, 20)
    assert ra["all"]["good_acc"]["value"] == 0.9 and ra["all"]["bad_acc"]["value"] == 0.4
    assert ra["all"]["avg_acc"]["value"] == pytest.approx(0.65)
    assert ra["valid_only"]["bad_acc"]["value"] == pytest.approx(8 / 18)
    assert ra["valid_only"]["n"] == 38 and ra["unparseable"]["k"] == 2
    assert ra["data_label"] == "DEMO DATA" and rb["data_label"] == ""
    assert rb["all"]["good_acc"]["value"] == 0.8

    (p,) = rep["paired"]
    assert (p["baseline"], p["other"]) == ("hf:tiny-a", "hf:tiny-b")
    assert (p["n_matched"], p["n_baseline"], p["n_other"]) == (39, 40, 40)
    assert any("case sets differ" in w and "39 matched" in w for w in rep["warnings"])
    m = p["mcnemar"]
    # Matched: g0-g19, b0-b18. B (a) right only: b8-b11 (4). A (b) right only: g16, g17 (2).
    assert (m["a_only"], m["b_only"], m["n"]) == (4, 2, 39)
    ref = mcnemar([True] * 4 + [False] * 2, [False] * 4 + [True] * 2)
    assert m["p_value"] == pytest.approx(ref["p_value"]) == pytest.approx(2 * (1 + 6 + 15) / 64)
    d = p["avg_acc_diff"]
    # On matched cases: A good 18/20, bad 8/19; B good 16/20, bad 12/19.
    assert d["diff"] == pytest.approx((16 / 20 + 12 / 19) / 2 - (18 / 20 + 8 / 19) / 2)
    assert d["ci_low"] <= d["diff"] <= d["ci_high"]


def test_paired_counts_errors_as_wrong_and_flags_gold_mismatch(tmp_path: Path) -> None:
    a: list[Case] = [("c1", "good", "good"), ("c2", "bad", "bad"), ("c3", "good", "good")]
    b: list[Case] = [("c1", "good", "good"), ("c2", "bad", None), ("c3", "bad", "bad")]
    pa = make_run(tmp_path, "a", "m", a)
    pb = make_run(tmp_path, "b", "m", b, errors=frozenset({"c2"}))
    rep = compare_runs([pa, pb], n_boot=100)
    assert [r["label"] for r in rep["runs"]] == ["m (a)", "m (b)"]  # nothing recorded differs: the run ids
    (p,) = rep["paired"]
    assert p["n_gold_mismatch"] == 1 and p["n_matched"] == 2
    assert p["mcnemar"]["b_only"] == 1 and p["mcnemar"]["a_only"] == 0
    assert any("different gold labels" in w for w in rep["warnings"])


def test_single_run_has_no_paired(two_runs: tuple[Path, Path]) -> None:
    rep = compare_runs(two_runs[:1])
    assert rep["paired"] == [] and len(rep["runs"]) == 1


def test_render_formats(two_runs: tuple[Path, Path]) -> None:
    rep = compare_runs(two_runs, n_boot=500)
    avg_a = pct(rep["runs"][0]["all"]["avg_acc"])
    assert avg_a.startswith("65.0 [")

    table = render(rep, "table")
    assert "DEMO DATA" in table and avg_a in table and "hf:tiny-b" in table
    assert "Valid answers only" in table and "McNemar p" in table and "40 (20/20)" in table

    md = render(rep, "md")
    assert "DEMO DATA" in md and f"| {avg_a} |" in md and "|---|---|---:|" in md

    rows = list(csv.DictReader(io.StringIO(render(rep, "csv"))))
    assert len(rows) == 2 and rows[0]["data_label"] == "DEMO DATA"
    assert float(rows[0]["all.avg_acc.value"]) == pytest.approx(0.65)
    assert float(rows[0]["valid_only.bad_acc.value"]) == pytest.approx(8 / 18)
    assert rows[0]["paired.n_matched"] == "" and rows[1]["paired.n_matched"] == "39"

    back = json.loads(render(rep, "json"))
    assert back == json.loads(json.dumps(rep))
    assert back["runs"][0]["data_label"] == "DEMO DATA"

    with pytest.raises(ConfigError):
        render(rep, "html")  # type: ignore[arg-type]


def test_render_summary(two_runs: tuple[Path, Path]) -> None:
    summary: dict[str, Any] = load_run(two_runs[0]).summary
    table = render_summary(summary, "table")
    assert "DEMO DATA" in table and "65.0 [" in table and "Unparseable answers: 2 of 40" in table
    assert "By scenario" in table and "s1" in table
    md = render_summary(summary, "md")
    assert "DEMO DATA" in md and "### By scenario" in md
    assert "DEMO DATA" in render_summary(summary, "csv")
    short = json.loads(render_summary(summary, "json"))
    assert short["data_label"] == "DEMO DATA" and "scenario" in short["breakdowns"]


def test_report_from_summaries_rejects_mixed_tasks(two_runs: tuple[Path, Path]) -> None:
    s = load_run(two_runs[0]).summary
    with pytest.raises(UxbenchError):
        report_from_summaries([])
    with pytest.raises(UxbenchError):
        report_from_summaries([s, {**s, "task": "eval"}])


def test_runs_of_one_model_are_named_by_what_differs(tmp_path: Path) -> None:
    """Issue 17 item 4: a Task 1 report over runs of one model says which settings set them apart."""
    a, b = _cases()
    pa = make_run(tmp_path, "a", "m", a, task_config={"formulation": "binary", "strategy": "zero_shot"})
    pb = make_run(tmp_path, "b", "m", b, task_config={"formulation": "binary", "strategy": "cot"})
    pc = make_run(tmp_path, "c", "other", a)
    rep = compare_runs([pa, pb, pc], n_boot=50)
    assert [r["label"] for r in rep["runs"]] == ["m (strategy=zero_shot)", "m (strategy=cot)", "other"]
    assert {p["other"] for p in rep["paired"]} == {"m (strategy=cot)", "other"}
