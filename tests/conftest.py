"""Session-wide test settings.

- The `extra` marker skips a test whose extra is not installed, with the install line, and
  `--record-skips FILE` lists the skipped tests for CI's second stage (tests/extra_skip.py).
- No test reads or writes the developer's own configuration directory (the de-identification key lives there),
  so every test process and its children get a private one.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

pytest_plugins = ["extra_skip"]  # the `extra` marker and --record-skips (tests/extra_skip.py)

_CONFIG_HOME: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="uxbench-test-config-")
    _CONFIG_HOME.append(home)
    os.environ["XDG_CONFIG_HOME"] = home


def pytest_unconfigure(config: pytest.Config) -> None:
    for home in _CONFIG_HOME:
        shutil.rmtree(home, ignore_errors=True)
