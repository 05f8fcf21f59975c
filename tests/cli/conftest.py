"""Fixtures of the CLI tests (helpers are in cli_support.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UXBENCH_DEID_SALT", "cli-tests-012345")


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory that an unprivileged user can enter (pytest's own are private to their owner)."""
    path = Path(tempfile.mkdtemp(prefix="uxbench-cli-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


