"""Curation files: an append-only audit trail whose latest event per case is its state, and `uxbench run`
leaving out the excluded cases (a file beside the data, or `--curation FILE`), as a run of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.errors import UxbenchError
from uxbench.runs.curation import CURATION_DB, Curation, curation_file, curation_for_data
from uxbench.runs.store import RunStore


def _rows(n: int) -> list[dict[str, object]]:
    return [{"cid": f"k{i:02d}", "ground_truth": 1 if i % 2 == 0 else -1,
             "source_query": {"turn_index": 2, "message": f"question {i}"},
             "selected_history": [{"turn_index": 0, "role": "user", "message": "hello"},
                                  {"turn_index": 1, "role": "assistant", "message": "hi"}],
             "agent_response_full": f"answer {i}", "scenario": "信息与知识查询"} for i in range(n)]


def _data(folder: Path, n: int = 8) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "task1_judge.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _rows(n)), encoding="utf-8")
    return path


def test_events_are_appended_and_the_latest_is_the_state(tmp_path: Path) -> None:
    c = Curation(tmp_path / CURATION_DB)
    assert c.events() == [] and c.excluded() == set() and not c.path.exists()  # reading creates nothing
    c.record("a", "exclude", "wrong label", "ann")
    c.record("b", "flag", "odd", "ann")
    c.record("a", "clear", "label checked again", "bob")
    c.record("c", "exclude", "duplicate", "bob")
    assert c.excluded() == {"c"} and set(c.states()) == {"b", "c"}
    assert [(e.case_id, e.action, e.who) for e in c.events("a")] == [("a", "exclude", "ann"), ("a", "clear", "bob")]
    assert oct(c.path.stat().st_mode & 0o777) == "0o600"
    for bad in (("a", "delete", "x", "y"), ("a", "exclude", " ", "y"), ("a", "exclude", "x", ""),
                ("", "exclude", "x", "y")):
        with pytest.raises(UxbenchError):
            c.record(*bad)


def test_the_file_beside_the_data_or_a_mining_outputs_cases(tmp_path: Path) -> None:
    data = _data(tmp_path / "d")
    assert curation_for_data(data) is None
    Curation(tmp_path / "d" / CURATION_DB).record("k01", "exclude", "x", "y")
    assert curation_for_data(data) == curation_for_data(tmp_path / "d") == tmp_path / "d" / CURATION_DB
    mined = _data(tmp_path / "mined" / "cases")
    Curation(tmp_path / "mined" / CURATION_DB).record("k01", "exclude", "x", "y")
    assert curation_for_data(mined) == tmp_path / "mined" / CURATION_DB
    with pytest.raises(UxbenchError, match="no such file"):
        curation_file(str(data), tmp_path / "nope.sqlite")
    assert curation_file("hf:some/repo", None) is None


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["run", "--model", "scripted:always-good", "--quiet", *args])
    return result.exit_code, result.output


def _case_ids(run_dir: Path) -> set[str]:
    with RunStore(run_dir) as store:
        return {r.case_id for r in store.iter_records()}


def test_uxbench_run_leaves_out_excluded_cases(tmp_path: Path) -> None:
    data = _data(tmp_path / "d")
    code, out = _run(["--data", str(data), "--out", str(tmp_path / "plain")])
    assert code == 0, out
    assert _case_ids(tmp_path / "plain") == {f"k{i:02d}" for i in range(8)}
    curation = Curation(tmp_path / "d" / CURATION_DB)
    curation.record("k01", "exclude", "label is wrong", "tester")
    curation.record("k02", "flag", "look again", "tester")  # flagged cases stay in
    code, out = _run(["--data", str(data), "--out", str(tmp_path / "curated")])
    assert code == 0, out
    assert "1 excluded case ids" in out
    assert _case_ids(tmp_path / "curated") == {f"k{i:02d}" for i in range(8)} - {"k01"}
    with RunStore(tmp_path / "plain") as a, RunStore(tmp_path / "curated") as b:
        manifest_a, manifest_b = a.read_manifest() or {}, b.read_manifest() or {}
        assert (b.read_summary() or {})["n_samples"] == 7
    assert manifest_a["run_id"] != manifest_b["run_id"]  # another data set, another run
    elsewhere = _data(tmp_path / "other")
    code, out = _run(["--data", str(elsewhere), "--curation", str(curation.path), "--out", str(tmp_path / "x")])
    assert code == 0 and _case_ids(tmp_path / "x") == {f"k{i:02d}" for i in range(8)} - {"k01"}
    code, out = _run(["--data", str(elsewhere), "--curation", str(tmp_path / "none.sqlite")])
    assert code == 2 and "no such file" in out
    for i in range(8):
        curation.record(f"k{i:02d}", "exclude", "all out", "tester")
    code, out = _run(["--data", str(data), "--out", str(tmp_path / "empty")])
    assert code == 2 and "excluded by curation" in out
