"""A run directory whose samples.sqlite was deleted while samples.jsonl and scores.jsonl hold its records (issue
28): the store is rebuilt from them, so rerunning the command makes no call again, says so, gets the same
figures, and stores each case again as it meets it; a damaged manifest, moved aside, is written anew."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from uxbench.cli.main import app
from uxbench.models.providers.scripted import ScriptedModel


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "eval.jsonl"
    path.write_text("".join(json.dumps({"cid": f"e{i}", "lang": "en", "query": f"how do I do {i}?"}) + "\n"
                            for i in range(12)), encoding="utf-8")
    return path


def _run(data: Path, out: Path) -> Result:
    return invoke("run", "--task", "eval", "--model", "scripted:echo", "--data", data, "--judge",
                  "scripted:always-good", "--judge-mode", "pointwise", "--no-cache", "--out", out, "--format", "json")


def test_a_deleted_store_is_rebuilt_from_its_copies(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _run(data, out)
    assert first.exit_code == 0, first.output
    for path in out.glob("samples.sqlite*"):
        path.unlink()
    calls = ScriptedModel.total_calls
    again = _run(data, out)
    assert again.exit_code == 0, again.output
    assert ScriptedModel.total_calls == calls  # neither the model nor the judge was called again
    assert "12 records and 12 scores were read back" in again.stderr
    assert json.loads(again.stdout)["judges"] == json.loads(first.stdout)["judges"]  # the same Good% and CIs
    with sqlite3.connect(out / "samples.sqlite") as db:
        assert db.execute("SELECT COUNT(*), COUNT(case_json) FROM records").fetchone() == (12, 12)
        assert db.execute("SELECT COUNT(*) FROM scores").fetchone() == (12,)


def test_a_damaged_manifest_says_what_to_do_and_moving_it_aside_resumes(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(data, out).exit_code == 0
    manifest = out / "manifest.json"
    manifest.write_bytes(manifest.read_bytes()[:150])
    refused = invoke("report", out)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "is damaged" in refused.stderr and f"mv {manifest} {manifest}.damaged" in refused.stderr
    manifest.rename(out / "manifest.json.damaged")
    calls = ScriptedModel.total_calls
    resumed = _run(data, out)
    assert resumed.exit_code == 0, resumed.output
    assert ScriptedModel.total_calls == calls and json.loads(manifest.read_text("utf-8"))["task"] == "eval"
