"""mypy gives one verdict with and without the `local` extra: its libraries are checked as if absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def test_every_library_of_the_local_extra_is_checked_as_absent() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    local = config["project"]["optional-dependencies"]["local"]
    names = {re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].strip().lower().replace("-", "_") for req in local}
    skipped = {
        module
        for override in config["tool"]["mypy"].get("overrides", [])
        if override.get("follow_imports") == "skip"
        for module in override["module"]
    }
    assert names and {n for n in names if n not in skipped or f"{n}.*" not in skipped} == set()


def test_ci_lints_and_type_checks_before_the_tests_of_every_extra() -> None:
    """Stage 1 is a new user's `pytest`; stage 2 lints, type-checks and checks the layers, then runs the rest."""
    steps = [line.strip() for line in (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    first = next(i for i, s in enumerate(steps) if s.startswith("pytest "))
    second = next(i for i, s in enumerate(steps) if s.startswith("python -m pytest "))
    assert first < steps.index("ruff check src tests") < steps.index("mypy") < steps.index("lint-imports") < second
