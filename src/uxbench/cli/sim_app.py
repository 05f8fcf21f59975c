"""The `uxbench sim` and `uxbench personas` command groups and what their command modules share: each module
(sim_cmd, sim_quality_cmd, sim_validate_cmd, personas_cmd, personas_build_cmd) registers its commands on these
apps, so none of them imports another to find its group."""

from __future__ import annotations

import typer

sim_app = typer.Typer(no_args_is_help=True)
personas_app = typer.Typer(no_args_is_help=True)

FORMATS = ("table", "md", "csv", "json")


def choice(value: str, choices: tuple[str, ...], option: str) -> str:
    """`value` when it is one of `choices`, else a ConfigError naming the option, with a did-you-mean."""
    from uxbench.errors import ConfigError

    if value not in choices:
        import difflib

        close = difflib.get_close_matches(value, choices, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"{option} must be one of {', '.join(choices)}, not '{value}'.{hint}")
    return value
