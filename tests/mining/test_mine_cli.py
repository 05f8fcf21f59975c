"""`uxbench mine run|report|audit` through the real CLI (typer's runner), on the synthetic log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pipeline_support import PipelineScript, write_log
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.mining.deid import SALT_ENV
from uxbench.testing import LoopbackConfig, LoopbackServer

runner = CliRunner()


@pytest.fixture(scope="module")
def mined_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("cli")
    log = write_log(root / "log.jsonl")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SALT_ENV, "cli-salt-0123456")
        result = runner.invoke(app, ["mine", "run", str(log), "--out", str(root / "out"), "--no-llm",
                                     "--workers", "1"])
        assert result.exit_code == 0, result.output
        assert "30 turns, 8 conversations; 1 gated" in result.output
        assert "signals_csv:" in result.output
        yield root / "out"


def test_run_without_model_or_no_llm_says_what_to_pass(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl")
    result = runner.invoke(app, ["mine", "run", str(log), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "error:" in result.stderr and "--model" in result.stderr and "--no-llm" in result.stderr
    bad = runner.invoke(app, ["mine", "run", str(log), "--out", str(tmp_path / "o"), "--no-llm", "--batch-size", "0"])
    assert bad.exit_code == 2


def test_report_json_md_and_table(mined_dir: Path) -> None:
    result = runner.invoke(app, ["mine", "report", str(mined_dir), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["assistant_turns"] == 11 and report["conversations"] == 6
    assert [s["key"] for s in report["by_scenario"]] == ["(unlabelled)"]
    assert [d["key"] for d in report["by_day"]] == ["2024-05-01", "2024-05-02"]
    assert sum(d["turns"] for d in report["by_day"]) == 11
    assert report["patterns_from"] == "signals"
    assert sum(p["count"] for p in report["patterns"]) == report["dissatisfied_turns"]
    assert sum(o["count"] for o in report["recovery"]) == report["dissatisfied_turns"]
    assert report["stage_counts"]["gate"]["gated"] == 1
    md = runner.invoke(app, ["mine", "report", str(mined_dir), "--format", "md"])
    assert "## Signal rates per day" in md.output and "| 2024-05-01 |" in md.output
    table = runner.invoke(app, ["mine", "report", str(mined_dir)])
    assert table.exit_code == 0 and "Recovery outcomes" in table.output and "user_gave_up" in table.output
    assert runner.invoke(app, ["mine", "report", str(mined_dir), "--format", "xml"]).exit_code == 2


def test_report_takes_scenarios_and_patterns_from_candidates(mined_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "out"
    copy.mkdir()
    for name in ("signals.parquet", "stage_counts.json"):
        (copy / name).write_bytes((mined_dir / name).read_bytes())
    candidates = [
        {"conversation_id": "zh-complaint", "kind": "bad", "turn_index": 1, "status": "kept",
         "scenario": "office_productivity", "failure_dimension": "factual_error", "signal": "complaint"},
        {"conversation_id": "zh-card-repeat", "kind": "bad", "turn_index": 3, "status": "rejected",
         "scenario": "product_service", "failure_dimension": "task_incomplete", "signal": "dismiss"},
    ]
    (copy / "candidates.jsonl").write_text("\n".join(json.dumps(c) for c in candidates) + "\n")
    report = json.loads(runner.invoke(app, ["mine", "report", str(copy), "--format", "json"]).output)
    turns = {s["key"]: s["turns"] for s in report["by_scenario"]}
    assert turns == {"(unlabelled)": 7, "office_productivity": 2, "product_service": 2}
    assert report["scenarios_from"] == "agents" and report["patterns_from"] == "candidates"
    assert [p["pattern"] for p in report["patterns"]] == ["factual_error x complaint"]  # kept ones only


def test_audit_rules_and_model(mined_dir: Path) -> None:
    result = runner.invoke(app, ["mine", "audit", str(mined_dir), "--format", "json"])
    assert result.exit_code == 0, result.output
    audit = json.loads(result.output)
    counts = {s["strategy"]: s["count"] for s in audit["strategies"]}
    assert audit["complaints"] == 2 and audit["with_reply"] == 2 and audit["method"] == "rules"
    assert counts == {"apology": 1, "agreement": 1, "error_diagnosis": 0, "humor": 0, "clarification": 0,
                      "direct_fix": 0}
    assert audit["cues"] == {"apology": {"抱歉": 1}, "agreement": {"you're right": 1}}
    apology = next(s for s in audit["strategies"] if s["strategy"] == "apology")
    assert apology["outcomes"]["recovered"] == 1 and apology["recovered_rate"] == 1.0
    assert 0 < apology["ci"][0] < 0.5 < apology["ci"][1] < 1
    script = PipelineScript()
    with LoopbackServer(LoopbackConfig(responder=script)) as server:
        by_model = runner.invoke(app, ["mine", "audit", str(mined_dir), "--format", "json", "--model",
                                       "openai:loopback", "--model-arg", f"base_url={server.base_url}"])
    assert by_model.exit_code == 0, by_model.output
    labelled = json.loads(by_model.stdout)  # progress goes to stderr
    assert "audit: 2/2 replies" in by_model.stderr
    assert labelled["method"] == "model" and script.audits == 2 and labelled["model_fallbacks"] == 0
    assert {s["strategy"]: s["count"] for s in labelled["strategies"] if s["count"]} == {"apology": 1, "direct_fix": 1}
    md = runner.invoke(app, ["mine", "audit", str(mined_dir), "--format", "md"])
    assert "| apology | 1 | 50% [9%, 91%] |" in md.output


def test_log_files_need_no_sim_import(tmp_path: Path) -> None:
    """`mine run` on log files does not import the sim package (a sim run is a directory): ~0.1 s of CPU at the
    start of every run, before the first input is read."""
    import subprocess
    import sys

    log = tmp_path / "log.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    code = ("import sys; from uxbench.cli.mine_cmd import _sim_run_logs; "
            f"print(_sim_run_logs([{str(log)!r}], True) == [{str(log)!r}], 'uxbench.sim.store' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "False"]
