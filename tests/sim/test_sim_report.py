"""Simulated-session runs next to Task 1-3 runs: `uxbench report`, `leaderboard`, `sim compare` and `view` (the run
page, the session page with its transcript, acts and satisfaction curve)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sim_support import REFUND, ZH_REFUND, helpful_rules, write_personas
from typer.testing import CliRunner, Result

from extra_skip import require_extra
from uxbench.cli.main import app


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("simruns")
    personas = write_personas(root / "p.jsonl", REFUND, ZH_REFUND)
    rules = helpful_rules(root / "rules.json")
    common = ["--personas", personas, "--simulator", "scripted:user", "--trials", "4", "--quiet", "--n-boot", "200",
              "--cache-path", root / "cache.sqlite"]
    good, bad = root / "runs" / "good", root / "runs" / "bad"
    assert invoke("sim", "run", "--model", f"scripted:file:{rules}", "--out", good, *common).exit_code == 0
    assert invoke("sim", "run", "--model", "scripted:always-bad", "--out", bad, *common).exit_code == 0
    task1 = root / "runs" / "task1"
    assert invoke("run", "--model", "scripted:always-good", "--out", task1, "--quiet").exit_code == 0
    return good, bad, task1


def test_report_shows_sim_runs_beside_task_runs(runs: tuple[Path, Path, Path]) -> None:
    good, bad, task1 = runs
    both = invoke("report", good, bad, task1)
    assert both.exit_code == 0, both.output
    assert "Simulated-session runs" in both.stdout and "Avg-Acc" in both.stdout
    as_json = json.loads(invoke("report", good, "--format", "json").stdout)
    assert as_json["kind"] == "sim" and as_json["metrics"]["success_rate"]["value"] == 1.0
    again = invoke("report", good, "--n-boot", "100", "--format", "json")
    assert json.loads(again.stdout)["metrics"]["success_rate"]["value"] == 1.0


def test_leaderboard_ranks_sim_runs_on_their_own_board(runs: tuple[Path, Path, Path]) -> None:
    good, _bad, _task1 = runs
    result = invoke("leaderboard", good.parent, "--format", "json", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)
    assert "judge" in board["tasks"] and "sim" in board["tasks"]
    rows = board["tasks"]["sim"]["rows"]
    assert [r["rank"] for r in rows] == [1, 2] and rows[0]["model"].startswith("scripted:file")
    assert rows[1]["vs_previous"]["diff"] == pytest.approx(1.0) and not rows[1]["tied_with_previous"]
    assert "Simulated users" in invoke("leaderboard", good.parent).stdout


def test_sim_compare_pairs_sessions(runs: tuple[Path, Path, Path]) -> None:
    good, bad, _ = runs
    result = invoke("sim", "compare", bad, good, "--format", "json", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n_pairs"] == 8 and report["metrics"]["success_rate"]["diff"] == pytest.approx(1.0)
    assert "B (scripted:file" in invoke("sim", "compare", bad, good).stdout


def test_view_pages(runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    require_extra("web")
    from fastapi.testclient import TestClient

    from uxbench.web.app import create_app
    from uxbench.web.catalog import build_catalog

    good, _bad, _ = runs
    catalog = build_catalog([str(good.parent)])
    assert len(catalog.sims) == 2 and len(catalog.runs) == 1
    client = TestClient(create_app(catalog, index_dir=tmp_path), base_url="http://127.0.0.1")  # the Host check
    index = client.get("/")
    assert index.status_code == 200 and "Simulated-session runs" in index.text
    sim_id = next(k for k, e in catalog.sims.items() if e.path == good)
    page = client.get(f"/sims/{sim_id}")
    assert page.status_code == 200 and "Task success" in page.text
    link = re.search(rf"/sims/{re.escape(sim_id)}/sessions/[0-9a-f]+", page.text)
    assert link is not None
    session = client.get(link.group(0))
    assert session.status_code == 200
    assert "act: open" in session.text and "act: stop_success" in session.text and "<polyline" in session.text
    assert "KX-" in session.text  # the transcript itself
    assert client.get(f"/sims/{sim_id}/sessions/nope").status_code == 404


def test_several_runs_fit_80_columns_without_cutting_a_figure(runs: tuple[Path, Path, Path]) -> None:
    from uxbench.report.sim import load_sim_summary, render_sim_runs

    good, bad, _ = runs
    summaries = [load_sim_summary(p) for p in (good, bad, good)]
    text = render_sim_runs(summaries, "table", width=80, names=["good", "bad", "good-again"])
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert "…" not in text and "100.0" in text and "good-again" in text
    assert "good: scripted:file:" in text  # the legend names each column's run
    wide = render_sim_runs(summaries[:2], "table", width=160, names=["good", "bad"])
    assert re.search(r"100\.0 \[\d+\.\d, 100\.0\]", wide)  # room enough: value and CI on one line (Wilson)
