"""`uxbench --help`, every command's help, `providers`, and unknown commands."""

from __future__ import annotations

import pytest
from cli_support import invoke

COMMANDS = [("run",), ("report",), ("providers",), ("data",), ("data", "validate"), ("data", "stats"), ("mine",),
            ("mine", "run"), ("mine", "report"), ("mine", "audit")]


def test_top_level_help_lists_every_command() -> None:
    result = invoke("--help")
    assert result.exit_code == 0, result.output
    for name in ("run", "report", "data", "mine", "providers"):
        assert name in result.output


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help(command: tuple[str, ...]) -> None:
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and "Traceback" not in result.output


def test_data_validate_help_names_the_task_option() -> None:
    assert "judge | eval | recovery" in invoke("data", "validate", "--help").output
    assert "--n-boot" in invoke("report", "--help").output


def test_providers_lists_the_providers() -> None:
    result = invoke("providers")
    assert result.exit_code == 0
    for name in ("openai", "scripted", "replay", "hf"):
        assert name in result.output


def test_unknown_commands_suggest_the_right_one() -> None:
    result = invoke("rn")
    assert result.exit_code == 2 and "No such command 'rn'" in result.output and "Did you mean 'run'" in result.output
    result = invoke("data", "validat")
    assert result.exit_code == 2 and "validate" in result.output
    result = invoke("mine", "reprot")
    assert result.exit_code == 2 and "report" in result.output
