"""`uxbench plot` through typer's runner: a Task 1 run's scenario bars and a mining run's funnel and signal rates
as PNG and SVG files; wrong kinds, suffixes and directories refused clearly. Skips without matplotlib."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_support import assert_clean_error, invoke, judge_rows, log_rows, write_jsonl

from extra_skip import require_extra

require_extra("plot")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("plot")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UXBENCH_CACHE_DIR", str(root / "cache"))
        mp.setenv("UXBENCH_DEID_SALT", "cli-tests-012345")
        run = invoke("run", "--model", "scripted:always-good", "--quiet", "--data",
                     write_jsonl(root / "judge.jsonl", judge_rows(20)), "--out", root / "run")
        assert run.exit_code == 0, run.output
        mined = invoke("mine", "run", write_jsonl(root / "log.jsonl", log_rows()), "--out", root / "mined",
                       "--no-llm", "--workers", "1", "--quiet")
        assert mined.exit_code == 0, mined.output
    return root / "run", root / "mined"


def _texts(svg: Path) -> str:
    return " ".join("".join(t.itertext()) for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}text"))


def test_scenario_bars_of_a_run(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    run, _ = dirs
    result = invoke("plot", run, "--kind", "scenario", "--out", tmp_path / "s.svg")
    assert result.exit_code == 0, result.output
    assert f"Wrote {tmp_path / 's.svg'}" in result.stdout
    scenarios = json.loads((run / "summary.json").read_text())["metrics"]["breakdowns"]["scenario"]
    texts = _texts(tmp_path / "s.svg")
    for key, cell in scenarios.items():
        value = cell["avg_acc"]["value"]
        assert key in texts and (value is None or f"{100 * value:.1f}" in texts)
    png = invoke("plot", run, "-k", "scenario", "-o", tmp_path / "s.png")
    assert png.exit_code == 0 and (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG")


def test_funnel_and_signal_rates_of_a_mining_run(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    _, mined = dirs
    assert invoke("plot", mined, "--kind", "funnel", "--out", tmp_path / "f.svg").exit_code == 0
    counts = json.loads((mined / "stage_counts.json").read_text())
    texts = _texts(tmp_path / "f.svg")
    assert "conversations" in texts and str(counts["sessions"]["sessions"]) in texts.split()
    result = invoke("plot", mined, "--kind", "signals", "--out", tmp_path / "r.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.png").read_bytes().startswith(b"\x89PNG")


def test_refusals(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    run, mined = dirs
    assert_clean_error(invoke("plot", run, "--kind", "scenaro", "--out", tmp_path / "x.png"),
                       "Did you mean 'scenario'")
    assert_clean_error(invoke("plot", run, "--kind", "scenario", "--out", tmp_path / "x.jpg"),
                       "must end in .png or .svg")
    assert_clean_error(invoke("plot", run, "--kind", "funnel", "--out", tmp_path / "x.png"),
                       "not a mining output directory")
    assert_clean_error(invoke("plot", mined, "--kind", "reliability", "--out", tmp_path / "x.png"),
                       "--kind funnel or signals")
    assert not list(tmp_path.glob("x.*"))
