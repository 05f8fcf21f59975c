"""Options that several commands share, declared once so that they read and behave the same everywhere
(docs/CONTRIBUTING.md, "Command-line conventions"):

- `--format table|md|csv|json`: the one output option (no `--json` flag, no `text`); a command that cannot write
  one of the four says so and names those it can;
- `--width N`: the width tables are fitted to;
- the role letters: `--model`/`-m` and `--model-arg`/`-M KEY=VALUE` for the model under test, `--judge`/`-j` and
  `--judge-arg`/`-J KEY=VALUE` for the judge;
- the names of the help panels that big commands group their options in.
"""

from __future__ import annotations

import difflib
from typing import Any

import typer

from uxbench.errors import ConfigError

FORMATS = ("table", "md", "csv", "json")
"""Every output format a command may offer, in this order."""

_ALIASES = {"text": "table", "txt": "table", "plain": "table", "markdown": "md", "tsv": "csv", "jsonl": "json"}
"""Names people write for the formats."""

PANEL_WHAT = "What to run"
PANEL_MODEL = "Model under test"
PANEL_JUDGE = "Judge (Tasks 2/3)"
PANEL_TASK1 = "Task 1 (UX Judge)"
PANEL_TASKS23 = "Tasks 2/3 (UX Eval, UX Recovery)"
PANEL_RUNTIME = "Runtime"
PANEL_OUTPUT = "Output"


def check_format(value: str, offered: tuple[str, ...], command: str = "") -> str:
    """`value` when this command writes it; else a ConfigError with a "did you mean" or the formats offered."""
    if value in offered:
        return value
    choose = f"choose {', '.join(offered[:-1])} or {offered[-1]}" if len(offered) > 1 else f"use {offered[0]}"
    if value in FORMATS:
        where = f"`uxbench {command}`" if command else "this command"
        raise ConfigError(f"--format {value} is not available for {where}: {choose}.")
    alias = _ALIASES.get(value.lower())
    close = [alias] if alias in offered else difflib.get_close_matches(value, offered, n=1, cutoff=0.5)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise ConfigError(f"--format {value!r} is not a format: {choose}.{hint}")


def format_option(*offered: str, help: str | None = None) -> Any:
    """The `--format` option of a command that writes the formats `offered` (default: all four)."""
    chosen = tuple(f for f in FORMATS if f in offered) if offered else FORMATS
    unknown = set(offered) - set(FORMATS)
    if unknown:
        raise ValueError(f"not output formats: {sorted(unknown)}")

    def callback(ctx: typer.Context, value: str) -> str:
        return check_format(value, chosen, " ".join(ctx.command_path.split()[1:]))

    return typer.Option(
        "--format", metavar="|".join(chosen), callback=callback, rich_help_panel=PANEL_OUTPUT,
        help=help or "How to print the results: a table fitted to the terminal, Markdown, CSV or JSON.",
    )


def width_option() -> Any:
    """`--width N`: the tables' width."""
    return typer.Option(min=40, rich_help_panel=PANEL_OUTPUT, show_default="the terminal's",
                        help="Fit the tables to this many columns (columns are left out, never cut, and named in a "
                             "note).")


def model_option(help: str, *, show_default: str | bool = True, panel: str | None = PANEL_MODEL) -> Any:
    return typer.Option("--model", "-m", help=help, show_default=show_default, rich_help_panel=panel)


def model_args_option(help: str = "An argument of the model's provider (base_url, api_key_env, timeout ...); "
                                  "repeat for several. `uxbench providers` lists them.",
                      panel: str | None = PANEL_MODEL) -> Any:
    return typer.Option("--model-arg", "-M", metavar="KEY=VALUE", help=help, show_default="none",
                        rich_help_panel=panel)


def judge_option(help: str, *, show_default: str | bool = True, panel: str | None = PANEL_JUDGE) -> Any:
    return typer.Option("--judge", "-j", help=help, show_default=show_default, rich_help_panel=panel)


def judge_args_option(help: str = "An argument of the judge's provider (as -M); repeat for several.",
                      panel: str | None = PANEL_JUDGE) -> Any:
    return typer.Option("--judge-arg", "-J", metavar="KEY=VALUE", help=help, show_default="none",
                        rich_help_panel=panel)
