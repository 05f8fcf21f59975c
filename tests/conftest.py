"""Session-wide test settings.

- The `extra` marker skips a test whose extra is not installed, with the install line, and
  `--record-skips FILE` lists the skipped tests for CI's second stage (tests/extra_skip.py).
- No test reads or writes the developer's own configuration directory (the de-identification key lives there),
  so every test process and its children get a private one.
- Nor the developer's response cache and view indexes: `$UXBENCH_CACHE_DIR` is a private directory too (unless
  it is set already), whose `models/` is the real model cache, so the embedded model is fetched and converted
  once, as `uxbench run` does it, and kept. A damaged or busy `~/.cache/uxbench/responses.sqlite` fails no test.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["extra_skip"]  # the `extra` marker and --record-skips (tests/extra_skip.py)

_CONFIG_HOME: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="uxbench-test-config-")
    _CONFIG_HOME.append(home)
    os.environ["XDG_CONFIG_HOME"] = home
    if not os.environ.get("UXBENCH_CACHE_DIR"):
        from uxbench.models.embedded import models_dir

        models = models_dir()  # the real one, before the variable points elsewhere
        models.mkdir(parents=True, exist_ok=True)
        cache = Path(home) / "cache"
        cache.mkdir()
        (cache / "models").symlink_to(models, target_is_directory=True)
        os.environ["UXBENCH_CACHE_DIR"] = str(cache)


def pytest_unconfigure(config: pytest.Config) -> None:
    for home in _CONFIG_HOME:
        shutil.rmtree(home, ignore_errors=True)
