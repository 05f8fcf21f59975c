"""Killing `uxbench mine run` in the middle of a stage (SIGKILL: no cleanup runs) and running it again
gives the same outputs, byte for byte, as a run that was never interrupted; the raw-text buckets of the
killed run do not survive the rerun."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pipeline_support import PII_VALUES, tree_bytes, write_log

from uxbench.dirlock import LOCK_FILE
from uxbench.mining.deid import SALT_ENV, scan_for_values
from uxbench.mining.pipeline import MineConfig, run_pipeline
from uxbench.mining.pipeline.run import bucket_tmpdir

SALT = "kill-test-salt-0"


def command(log: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "uxbench", "mine", "run", str(log), "--out", str(out), "--no-llm",
            "--batch-size", "1", "--workers", "1", "--quiet"]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_kill_mid_stage_then_rerun_gives_identical_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SALT_ENV, SALT)
    log = write_log(tmp_path / "log.jsonl", copies=20)  # 160 conversations, one batch each
    out = tmp_path / "killed"
    env = {**os.environ, SALT_ENV: SALT}
    proc = subprocess.Popen(command(log, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = out / "work" / "01-sessions" / "part-000000._DONE"
    deadline = time.monotonic() + 120
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    assert first.exists() and not (out / "stage_counts.json").exists()  # it died mid-run
    assert not (out / "work" / "05-dedup" / "_DONE").exists()

    rerun = subprocess.run(command(log, out), env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    reference = tmp_path / "reference"
    run_pipeline(MineConfig(inputs=(str(log),), out=str(reference), llm=False, batch_size=1, workers=1))

    skip = ("manifest.json", LOCK_FILE)  # the command holds the directory's lock; the library call does not
    got, want = tree_bytes(out, skip=skip), tree_bytes(reference, skip=skip)
    assert sorted(got) == sorted(want)
    assert [name for name in want if got[name] != want[name]] == []
    assert not bucket_tmpdir(out).exists()
    assert scan_for_values([out], PII_VALUES) == []
