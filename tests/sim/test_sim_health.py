"""Broken configurations are not compared: with `--mode free --simulator scripted:user` against an assistant that
completes nothing, every session ends with a premature stop; `sim compare` refuses such a run and `sim
sensitivity` leaves it out (refusing when fewer than two usable configurations remain), saying why, and what
free mode does not measure is printed as "not measured", never as 0."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sim_support import REFUND, ZH_REFUND, helpful_rules, write_personas
from typer.testing import CliRunner, Result

from uxbench.cli.main import app


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("health")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_CACHE_DIR", str(tmp / "cache"))
        personas = write_personas(tmp / "p.jsonl", REFUND, ZH_REFUND, {**REFUND, "id": "refund-2"},
                                  {**ZH_REFUND, "id": "zh-refund-2"})
        helpful = helpful_rules(tmp / "helpful.json")
        out: dict[str, Path] = {}
        for name, model, mode in [("never_structured", "scripted:always-good", "structured"),
                                  ("never_free", "scripted:always-good", "free"),
                                  ("helpful_structured", f"scripted:file:{helpful}", "structured"),
                                  ("helpful_free", f"scripted:file:{helpful}", "free")]:
            out[name] = tmp / name
            result = invoke("sim", "run", "--personas", personas, "--model", model, "--simulator", "scripted:user",
                            "--mode", mode, "--trials", "2", "--out", out[name], "--quiet", "--n-boot", "100")
            assert result.exit_code in (0, 1), result.output
        yield out


def test_the_broken_configuration_really_is_broken(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["never_free"] / "summary.json").read_text())
    assert summary["n_errors"] == summary["n_sessions"] == 8


def test_compare_refuses_a_run_whose_sessions_mostly_ended_in_error(runs: dict[str, Path]) -> None:
    result = invoke("sim", "compare", runs["never_structured"], runs["never_free"])
    assert result.exit_code == 2, result.output
    assert "8 of 8 sessions ended in error" in result.output and "premature stop" in result.output
    assert "Traceback" not in result.output


def test_compare_prints_not_measured_for_free_mode_acts(runs: dict[str, Path]) -> None:
    result = invoke("sim", "compare", runs["helpful_structured"], runs["helpful_free"], "--format", "md")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("| dissatisfied_per_100_turns"))
    assert "not measured" in line and "0.000" not in line
    assert "free mode has no acts" in result.output


def test_sensitivity_leaves_out_a_broken_configuration_and_refuses_with_none_left(runs: dict[str, Path]) -> None:
    result = invoke("sim", "sensitivity", runs["never_structured"], runs["helpful_structured"], runs["never_free"],
                    runs["helpful_free"], "--format", "json", "--n-boot", "100")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [e["run"] for e in report["excluded"]] == [str(runs["never_free"])]
    assert "premature stop" in report["excluded"][0]["reason"]
    assert all(c["assistant"] != "scripted:always-good" for c in report["changes"])  # its only other config is gone
    for change in report["changes"]:
        assert "dissatisfied_per_100_turns" not in change["metrics"]  # free mode: not measured, never -100
        assert "dissatisfied_per_100_turns" in change["not_measured"]
    text = invoke("sim", "sensitivity", runs["never_structured"], runs["helpful_structured"], runs["never_free"],
                  runs["helpful_free"], "--n-boot", "100", "--format", "md").output
    assert "Left out:" in text and "not measured" in text
    only = invoke("sim", "sensitivity", runs["never_structured"], runs["never_free"])
    assert only.exit_code == 2 and "two usable simulator configurations" in only.output
