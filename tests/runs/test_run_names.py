"""Run directories are named by what a person needs to tell them apart: task, model, the options that differ
from the task's defaults, and the identity hash."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.runs.manifest import run_name


def test_only_the_options_that_differ_name_the_run() -> None:
    defaults = {"formulation": "binary", "strategy": "zero_shot", "lang": "auto", "verdict_from": "text"}
    same = run_name("judge", "openai:gpt-4o-mini", dict(defaults), defaults, "8dec2694ab12")
    assert same == "judge-openai-gpt-4o-mini-8dec2694ab"
    changed = run_name("judge", "openai:gpt-4o-mini", {**defaults, "strategy": "cot", "lang": "zh"}, defaults,
                       "8dec2694ab12")
    assert changed == "judge-openai-gpt-4o-mini-cot-zh-8dec2694ab"
    rubric = run_name("judge", "m", {**defaults, "formulation": "rubric", "rubric": "/home/me/my rubric.yaml"},
                      defaults, "0123456789ab")
    assert rubric == "judge-m-rubric-my-rubric-0123456789"  # a file by its name only, no local path


@pytest.mark.parametrize(("args", "name"), [
    ((), "judge-scripted-always-good-"),
    (("--strategy", "cot", "--lang", "zh"), "judge-scripted-always-good-cot-zh-"),
])
def test_a_run_directory_says_its_options(args: tuple[str, ...], name: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["run", "--model", "scripted:always-good", "--quiet", *args])
    assert result.exit_code == 0, result.output
    (made,) = (tmp_path / "runs").iterdir()
    assert made.name.startswith(name) and len(made.name) == len(name) + 10
