"""`uxbench site build --calibration T1_RUN` with a calibration that measured none of the runs' judges (issue 28):
the site says so, as `uxbench report` and `uxbench leaderboard` do, and the command prints it; no corrected
figure appears."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from uxbench.cli.main import app


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.extra("web")
def test_a_calibration_of_another_judge_is_said_in_the_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    t1 = tmp_path / "t1.jsonl"
    t1.write_text("".join(json.dumps({"cid": f"c{i}", "ground_truth": 1 if i % 2 else -1, "query": f"q{i}",
                                      "agent_response_full": f"a{i}"}) + "\n" for i in range(8)), encoding="utf-8")
    t2 = tmp_path / "t2.jsonl"
    t2.write_text("".join(json.dumps({"cid": f"e{i}", "lang": "en", "query": f"how {i}?"}) + "\n" for i in range(6)),
                  encoding="utf-8")
    calibration = tmp_path / "calibration"
    assert invoke("run", "--model", "scripted:always-bad", "--data", t1, "--out", calibration,
                  "--quiet").exit_code == 0
    run = tmp_path / "runs" / "eval"
    assert invoke("run", "--task", "eval", "--model", "scripted:echo", "--data", t2, "--judge",
                  "scripted:always-good", "--judge-mode", "pointwise", "--out", run, "--quiet").exit_code == 0
    site = tmp_path / "site"
    built = invoke("site", "build", tmp_path / "runs", "--out", site, "--calibration", calibration, "--n-boot", "50")
    assert built.exit_code == 0, built.output
    said = "measured scripted:always-bad, which scored none of these runs"
    assert said in built.stderr.replace("\n", " ")
    html = (site / "index.html").read_text(encoding="utf-8")
    assert said in html and str(tmp_path) not in html  # said, without the local path
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert all(not row.get("corrected") for row in board["tasks"]["eval"]["rows"])
