"""The sample chat log bundled for the mining quick start (`uxbench mine run demo`): it is read as the README
says, holds both languages, and the signals it was written to show fire on it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.ingest import SAMPLE_LOG


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("sample") / "mined"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_DEID_SALT", "sample-log-tests-0123")
        result = CliRunner().invoke(app, ["mine", "run", "demo", "--out", str(out), "--no-llm", "--workers", "1"])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_the_sample_is_ours_both_languages_and_valid() -> None:
    rows = [json.loads(line) for line in SAMPLE_LOG.read_text(encoding="utf-8").splitlines()]
    conversations = {r["conversation_id"] for r in rows}
    assert len(conversations) == 38
    assert {c.split("-")[0] for c in conversations} == {"zh", "en"}
    assert all(r["role"] in ("user", "assistant") and r["content"].strip() and r["created_at"] for r in rows)


def test_mine_run_demo_reads_the_sample_and_its_signals_fire(mined: tuple[Path, str]) -> None:
    out, output = mined
    assert "demo: the sample chat log bundled with uxbench" in output and str(SAMPLE_LOG) in output
    assert "169 turns, 38 conversations" in output
    table = pq.read_table(out / "signals.parquet").to_pylist()
    fired = {name: sum(bool(row[name]) for row in table) for name in
             ("thumbs_down", "thumbs_up", "regenerate", "complaint", "repeat", "rephrase", "dismiss", "praise")}
    assert all(count >= 1 for count in fired.values()), fired
    assert fired["complaint"] >= 5 and fired["repeat"] >= 2, fired
    lines = (out / "deid_changes.jsonl").read_text(encoding="utf-8").splitlines()
    kinds = {change["type"] for line in lines for change in json.loads(line)["changes"]}
    assert kinds >= {"PHONE", "EMAIL", "NAME"}, kinds


def test_a_file_named_demo_is_read_as_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UXBENCH_DEID_SALT", "sample-log-tests-0123")
    Path("demo").write_text("", encoding="utf-8")
    result = CliRunner().invoke(app, ["mine", "run", "demo", "--out", "m", "--no-llm"])
    assert result.exit_code == 2 and "bundled" not in result.output, result.output
