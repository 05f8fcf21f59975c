"""Session-wide test settings: no test reads or writes the developer's own configuration directory (the
de-identification key lives there), so every test process and its children get a private one."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_CONFIG_HOME: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="uxbench-test-config-")
    _CONFIG_HOME.append(home)
    os.environ["XDG_CONFIG_HOME"] = home


def pytest_unconfigure(config: pytest.Config) -> None:
    for home in _CONFIG_HOME:
        shutil.rmtree(home, ignore_errors=True)
