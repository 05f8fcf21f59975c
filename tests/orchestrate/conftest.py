"""Fixtures of the run-level tests (helpers are in run_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from uxbench.testing.loopback import LoopbackConfig, LoopbackServer


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    with LoopbackServer(LoopbackConfig(latency_ms=2, retry_after_s=0.05, timeout_sleep_s=3.0)) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
