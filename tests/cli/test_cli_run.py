"""`uxbench run` through typer's runner with scripted and loopback models (never the embedded one):
exit codes and messages for good and bad input."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import assert_clean_error, invoke, judge_row, judge_rows, unprivileged, write_jsonl

from uxbench.testing import LoopbackConfig, LoopbackServer

SCRIPTED = ("--model", "scripted:always-good", "--quiet")


def test_a_run_and_its_resume(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "judge.jsonl", judge_rows(8))
    out = tmp_path / "run"
    first = invoke("run", *SCRIPTED, "--data", data, "--out", out)
    assert first.exit_code == 0, first.output
    assert f"Run directory: {out}" in first.stderr and "Avg-Acc" in first.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_samples"] == 8 and summary["n_errors"] == 0
    again = invoke("run", *SCRIPTED, "--data", data, "--out", out)
    assert again.exit_code == 0, again.output


def test_nothing_to_run_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    # "No cases were read" or "no cases were read": the runner checks first, the data layer in any case
    assert_clean_error(invoke("run", *SCRIPTED, "--data", empty, "--out", tmp_path / "r1"), "o cases were read")
    invalid = write_jsonl(tmp_path / "invalid.jsonl", [{"cid": "a"}, {"cid": "b"}])
    result = invoke("run", *SCRIPTED, "--data", invalid, "--skip-invalid", "--out", tmp_path / "r2")
    assert_clean_error(result, "no cases were read", "all 2 rows were invalid")
    result = invoke("run", *SCRIPTED, "--data", invalid, "--out", tmp_path / "r3")
    assert_clean_error(result, "line 1", "--skip-invalid")


def test_bad_model_task_and_options(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "judge.jsonl", judge_rows(2))
    assert_clean_error(invoke("run", "--model", "nosuch:model", "--data", data, "--out", tmp_path / "r"), "nosuch")
    assert_clean_error(invoke("run", *SCRIPTED, "--data", data, "--formulation", "quaternary"), "formulation")
    result = invoke("run", "--modle", "scripted:always-good")
    assert result.exit_code == 2 and "No such option: --modle" in result.output and "--model" in result.output


def test_out_that_is_a_file_or_unwritable(tmp_path: Path, shared_tmp: Path) -> None:
    data = write_jsonl(tmp_path / "judge.jsonl", judge_rows(2))
    taken = tmp_path / "taken"
    taken.write_text("x")
    assert_clean_error(invoke("run", *SCRIPTED, "--data", data, "--out", taken), str(taken))
    assert_clean_error(invoke("run", *SCRIPTED, "--data", data, "--out", taken / "sub"), str(taken))
    readable = write_jsonl(shared_tmp / "judge.jsonl", judge_rows(2))
    readable.chmod(0o644)
    locked = shared_tmp / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    with unprivileged():
        result = invoke("run", *SCRIPTED, "--no-cache", "--data", readable, "--out", locked / "run")
    assert_clean_error(result, str(locked))


def test_every_call_failing_against_a_real_server(tmp_path: Path) -> None:
    rows = [judge_row(f"c{i}", "good", "good") for i in range(3)]
    for row in rows:
        row["agent_response_full"] = f"{row['agent_response_full']} [[FAULT:401]]"
    data = write_jsonl(tmp_path / "judge.jsonl", rows)
    with LoopbackServer(LoopbackConfig()) as server:
        result = invoke("run", "--model", "openai:loopback", "-M", f"base_url={server.base_url}", "--quiet",
                        "--data", data, "--out", tmp_path / "run", "--max-attempts", "1")
    assert_clean_error(result, "3 of 3 samples failed", "401", code=1)
