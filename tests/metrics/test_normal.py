"""The standard library's normal quantile and tails agree with scipy.stats, and a run's summary and report paths do
not import scipy.stats (about a second on a small machine, paid by every run and every `--procs` worker)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

import uxbench
from uxbench.metrics import normal


@pytest.mark.parametrize("p", [1e-12, 1e-6, 0.001, 0.025, 0.3, 0.5, 0.8, 0.95, 0.975, 0.995, 1 - 1e-9])
def test_ppf_matches_scipy(p: float) -> None:
    assert normal.ppf(p) == pytest.approx(float(norm.ppf(p)), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("x", [-8.0, -2.0, -0.5, 0.0, 0.7, 1.959963984540054, 4.0, 12.0, 30.0])
def test_sf_matches_scipy_in_the_far_tail_too(x: float) -> None:
    assert normal.sf(x) == pytest.approx(float(norm.sf(x)), rel=1e-12, abs=0.0)
    assert normal.sf(np.float64(x)) == pytest.approx(float(norm.sf(x)), rel=1e-12, abs=0.0)


@pytest.mark.parametrize("x", [-30.0, -8.0, -1.3, 0.0, 2.5, 9.0])
def test_cdf_matches_scipy_in_the_far_left_tail_too(x: float) -> None:
    assert normal.cdf(x) == pytest.approx(float(norm.cdf(x)), rel=1e-12, abs=0.0)


def test_ppf_rejects_what_has_no_quantile() -> None:
    with pytest.raises(ValueError):
        normal.ppf(1.0)


def test_a_runs_summary_and_report_paths_do_not_import_scipy_stats() -> None:
    """Also the reports `uxbench run` and `uxbench sim run` print (and `sim run --procs N` imports in each worker)."""
    probe = ("import json, sys; import uxbench.orchestrate.runner, uxbench.orchestrate.summary, "
             "uxbench.orchestrate.calibration, uxbench.metrics, uxbench.report, uxbench.report.sim, "
             "uxbench.sim.run; print(json.dumps(sorted(sys.modules)))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(uxbench.__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120,
                          check=True)
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "uxbench.metrics.proportions" in modules  # the probe imported the path it checks
    assert "scipy.stats" not in modules, "import scipy.stats inside the function that needs it"
