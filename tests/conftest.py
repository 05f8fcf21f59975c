"""Session-wide test settings.

- The `extra` marker skips a test whose extra is not installed, with the install line (tests/extra_skip.py).
- No test reads or writes the developer's own configuration directory (the de-identification key lives there),
  so every test process and its children get a private one.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from extra_skip import skip_reason

_CONFIG_HOME: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="uxbench-test-config-")
    _CONFIG_HOME.append(home)
    os.environ["XDG_CONFIG_HOME"] = home
    config.addinivalue_line(
        "markers", "extra(name, ...): needs these extras of pyproject.toml; skipped with the install line without them")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("extra"):
        reason = skip_reason(*mark.args)
        if reason is not None:
            pytest.skip(reason)


def pytest_unconfigure(config: pytest.Config) -> None:
    for home in _CONFIG_HOME:
        shutil.rmtree(home, ignore_errors=True)
