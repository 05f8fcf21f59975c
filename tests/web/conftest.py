"""Shared fixtures of the web tests: the served directories (built once per session) and a TestClient.

The tests of this folder that need the `web` extra skip when it is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from web_support import build_all

    return build_all(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="session")
def review(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The review workspace (`web_support_review`): runs of every task, a mining output, a simulated-user run and
    two studies, written by the project's own commands with scripted providers."""
    from web_support_review import build_review

    return build_review(tmp_path_factory.mktemp("review"))
