"""Every command's options, as `--help` shows them at 80 columns: flags are single (no `--no-no-cache`, no
`--no-quiet`), carry no `<bool>` type tag, and every option that takes a value shows its default."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from cli_support import invoke

from uxbench.cli.main import app

DELIBERATE_PAIRS = {("score", "--primary")}
"""Tri-state options whose --no- form means something of its own (score --no-primary: never primary)."""


def _commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, command


COMMANDS = [path for path, _ in _commands()]
CHECKED = {("run",), ("report",), ("score",), ("pairwise",), ("bias",), ("leaderboard",), ("plot",),
           ("data", "validate"), ("data", "stats"), ("mine", "run"), ("mine", "report"), ("mine", "audit")}
"""Commands whose declarations follow the rules below (a new command should join them)."""


def test_flags_are_single_and_every_value_option_shows_its_default() -> None:
    problems = []
    for path, command in _commands():
        if path not in CHECKED:
            continue
        for param in command.params:
            if param.param_type_name != "option":
                continue
            where = f"{' '.join(path)} {param.opts[0]}"
            if param.secondary_opts and (path[0], param.opts[0]) not in DELIBERATE_PAIRS:
                problems.append(f"{where}: also {param.secondary_opts}")
            shown = isinstance(param.show_default, str) or param.default is not None
            if not param.is_flag and not param.required and not shown:
                problems.append(f"{where}: no default shown")
    assert not problems, problems


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_at_80_columns(command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    text = result.output
    assert "<bool>" not in text and "--no-no-" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    if command in CHECKED:
        assert "--no-quiet" not in text and "--no-fresh" not in text
    if command == ("run",):
        assert "--no-cache" in text and "--no-fresh" not in text and "[default: (all cases)]" in text


def test_providers_say_how_to_name_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = invoke("providers").output
    assert max(len(line) for line in text.splitlines()) <= 80
    for example in ("openai:gpt-4o-mini", "hf:embedded", "scripted:"):
        assert example in text, text
    from uxbench.models.registry import _PROVIDER_MODULES

    listed = set(re.findall(r"^([\w-]+):MODEL", text, flags=re.MULTILINE))
    for name in _PROVIDER_MODULES:  # every built-in provider, a new one too, shows how its models are named
        assert name in listed and f"e.g. --model {name}:" in text, name
