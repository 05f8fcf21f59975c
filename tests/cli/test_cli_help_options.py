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

DELIBERATE_PAIRS = {("score", "--primary"), ("run", "--primary"), ("mine", "--errors")}
"""Options whose --no- form means something of its own (score --no-primary: never primary; mine eval-signals
--no-errors: leave out the list of errors, shown by default)."""


def _commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, command


COMMANDS = [path for path, _ in _commands()]
OUTSIDE = {"judge"}
"""Command groups that do not follow every rule below yet (their own issue brings them in)."""
CHECKED = {path for path in COMMANDS if path[0] not in OUTSIDE}
"""Commands whose declarations follow the rules below (docs/CONTRIBUTING.md); a new command joins them."""


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
        assert "--no-cache" in text and "--no-fresh" not in text and "[default: all cases]" in text


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


PYTHON_TYPES = re.compile(r"<(str|int|float|bool|path|list\[[^>]*\]|[a-z]+ range)>|\[x[<>]=|list\[|\[default: \(")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_values_in_words_not_python_types(command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    text = invoke(*command, "--help").output
    assert not PYTHON_TYPES.search(text), PYTHON_TYPES.search(text)
    assert "{" not in text.splitlines()[1]  # the usage line: RUN_DIRS..., not {run_dirs}...


def test_each_default_is_said_once() -> None:
    """A default shown as `[default: ...]` is not repeated in the option's help text."""
    problems = []
    for path, command in _commands():
        if path not in CHECKED:
            continue
        for param in command.params:
            if param.name == "help":
                continue
            help_text = param.help or ""
            if not help_text.strip():
                problems.append(f"{' '.join(path)} {param.opts[0]}: no help text")
            shown = isinstance(param.show_default, str) or (param.default is not None and not param.is_flag)
            if shown and re.search(r"\bdefault\b", help_text, flags=re.IGNORECASE):
                problems.append(f"{' '.join(path)} {param.opts[0]}: '{help_text}'")
    assert not problems, problems


def test_version_and_h() -> None:
    from uxbench import __version__

    result = invoke("--version")
    assert result.exit_code == 0 and result.output.strip() == f"uxbench {__version__}"
    for command in (("-h",), ("run", "-h"), ("data", "stats", "-h"), ("mine", "run", "-h")):
        shown = invoke(*command)
        assert shown.exit_code == 0 and "Usage:" in shown.output and "--help" in shown.output, command


def test_run_groups_its_options_in_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    text = invoke("run", "--help").output
    from uxbench.cli import options

    panels = [options.PANEL_WHAT, options.PANEL_MODEL, options.PANEL_JUDGE, options.PANEL_TASK1,
              options.PANEL_TASKS23, options.PANEL_RUNTIME, options.PANEL_OUTPUT]
    at = [text.index(f"─ {panel} ") for panel in panels]
    assert at == sorted(at)
    run = next(command for path, command in _commands() if path == ("run",))
    assert all(p.rich_help_panel for p in run.params if p.name != "help")  # every option sits in a panel


def test_role_letters_are_the_same_everywhere() -> None:
    """-m/-M: the model under test and its provider arguments; -j/-J: the judge and its provider arguments."""
    letters = {"--model": "-m", "--model-arg": "-M", "--judge": "-j", "--judge-arg": "-J"}
    seen: dict[str, set[str]] = {}
    for path, command in _commands():
        if path not in CHECKED:
            continue
        for param in command.params:
            if param.param_type_name == "option" and param.opts[0] in letters:
                seen.setdefault(param.opts[0], set()).add(" ".join(path))
                assert letters[param.opts[0]] in param.opts, (path, param.opts)
            for short in ("-m", "-M", "-j", "-J"):
                if short in param.opts:
                    assert letters.get(param.opts[0]) == short, (path, param.opts)
    assert {"run", "score"} <= seen["--judge"] | {"run"} and "run" in seen["--model-arg"]


def test_output_format_is_one_option_with_the_same_values() -> None:
    from uxbench.cli.options import FORMATS

    with_format = []
    for path, command in _commands():
        for param in command.params:
            if param.name in ("json", "as_json") and path[0] not in OUTSIDE:
                raise AssertionError(f"{' '.join(path)} has a --json flag: use --format json")
            if param.param_type_name == "option" and "--format" in param.opts and path[0] not in OUTSIDE:
                offered = str(param.metavar).split("|")
                assert offered and set(offered) <= set(FORMATS), (path, offered)
                assert offered[0] == "table" and param.default == "table", path
                with_format.append(path)
    assert {("run",), ("score",), ("report",), ("bias",), ("leaderboard",), ("pairwise",), ("data", "stats"),
            ("mine", "report"), ("human", "results")} <= set(with_format)


def test_a_wrong_format_says_what_to_write(tmp_path: Any) -> None:
    from cli_support import assert_clean_error

    assert_clean_error(invoke("data", "stats", "demo", "--format", "txt"), "--format 'txt' is not a format",
                       "Did you mean 'table'?")
    assert_clean_error(invoke("data", "stats", "demo", "--format", "text"), "Did you mean 'table'?")
    assert_clean_error(invoke("data", "stats", "demo", "--format", "csv"),
                       "--format csv is not available for `uxbench data stats`: choose table or json")
    assert_clean_error(invoke("mine", "run", tmp_path, "--out", tmp_path / "o", "--format", "sharegpt"),
                       "No such option: --format")


def test_run_score_and_report_print_the_cost_and_any_format(tmp_path: Any) -> None:
    import json

    from cli_support import judge_rows, write_jsonl

    data = write_jsonl(tmp_path / "judge.jsonl", judge_rows(6))
    task1 = invoke("run", "--model", "scripted:always-good", "--quiet", "--data", data, "--out", tmp_path / "t1")
    assert task1.exit_code == 0, task1.output
    cost = "Cost: $0.0000; model scripted:always-good: 6 answers, "
    assert cost in " ".join(task1.stdout.split())
    assert cost in " ".join(invoke("report", tmp_path / "t1").stdout.split())
    eval_dir = tmp_path / "t2"
    task2 = invoke("run", "--task", "eval", "--model", "scripted:echo", "--judge", "scripted:always-good", "--quiet",
                   "--data", "demo", "--out", eval_dir, "--format", "json")
    assert task2.exit_code == 0, task2.output
    summary = json.loads(task2.stdout)
    assert summary["task"] == "eval" and summary["usage"]["model"]["requests"] == summary["n_samples"]
    scored = invoke("score", eval_dir, "--judge", "scripted:always-bad", "--quiet", "--format", "md")
    text = " ".join(scored.stdout.split())
    assert scored.exit_code == 0 and "| scripted:always-bad |" in text and "judge scripted:always-bad: " in text
    both = invoke("run", "--task", "judge,eval", "--model", "scripted:always-good", "--quiet", "--data", "demo",
                  "--out", tmp_path / "t3", "--format", "json", "--judge", "scripted:always-good")
    assert both.exit_code == 0, both.output
    assert [s["task"] for s in json.loads(both.stdout)] == ["judge", "eval"]
