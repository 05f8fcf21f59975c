"""`uxbench report` on Task 2/3 runs: each run's Good% table (recomputed with --n-boot), and a headline table for
several runs of different tasks."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import invoke


def test_report_reads_task2_and_task3_runs(tmp_path: Path) -> None:
    eval_dir, recovery_dir = tmp_path / "eval", tmp_path / "recovery"
    assert invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", "scripted:always-good",
                  "--out", str(eval_dir), "--quiet").exit_code == 0
    assert invoke("run", "--task", "recovery", "--model", "scripted:echo", "--judge", "scripted:always-bad",
                  "--judge-mode", "pointwise", "--out", str(recovery_dir), "--quiet").exit_code == 0

    one = invoke("report", str(eval_dir))
    assert one.exit_code == 0, one.output
    assert "Good" in one.output and "scripted:always-good" in one.output and "Traceback" not in one.output

    recomputed = invoke("report", str(eval_dir), "--n-boot", "50", "--format", "json")
    assert recomputed.exit_code == 0, recomputed.output
    summary = json.loads(recomputed.stdout)
    stored = json.loads((eval_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["summary_options"] == {"n_boot": 50, "seed": 0}
    assert summary["judges"] == stored["judges"]  # Wilson intervals do not depend on the bootstrap

    both = invoke("report", str(eval_dir), str(recovery_dir))
    assert both.exit_code == 0, both.output
    assert "Task 2, UX Eval" in both.output and "Recovery" in both.output
    assert "uxbench leaderboard" in both.output
