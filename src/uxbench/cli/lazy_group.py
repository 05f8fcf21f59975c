"""The root command group, which imports a command's module only when that command is run or its help is shown.

`uxbench --help` lists every command from the one-line help written in `main.py`, without importing any command
module or building any command's options (typer builds a command by reading its function's signature, which
costs more than the imports); `uxbench run --help` imports `run_cmd` alone. Everything else (the options, the
help panels, the did-you-mean of an unknown command) is typer's, unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    """A command or command group known by where it lives: `target` is "module:attribute", the attribute a
    command function or a `typer.Typer` of subcommands; `help` is what `uxbench --help` shows for it."""

    target: str
    help: str

    def load(self, name: str) -> Any:
        """The click command this entry names (its module imported, its options built)."""
        module_name, _, attribute = self.target.partition(":")
        obj = getattr(importlib.import_module(module_name), attribute)
        if isinstance(obj, typer.Typer):
            group = typer.main.get_group(obj)  # a group even when it has one subcommand, as add_typer gives
            group.name, group.help = name, self.help
            return group
        single = typer.Typer(add_completion=False)
        single.command(name, help=self.help)(obj)
        return typer.main.get_command(single)


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name: every name of the table is there from the start, and a command is loaded
    when it is first looked up. Iterating gives the names without loading anything."""

    def __init__(self, table: dict[str, LazyCommand], loaded: Mapping[str, Any]) -> None:
        self._table = table
        self._loaded = dict(loaded)

    def is_loaded(self, name: str) -> bool:
        return name in self._loaded

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            self._loaded[name] = self._table[name].load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("uxbench's commands are fixed")

    def __iter__(self) -> Iterator[str]:
        yield from self._table
        yield from (name for name in self._loaded if name not in self._table)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class LazyGroup(TyperGroup):
    """A typer group whose `lazy` commands are loaded on first use. While the group writes its own help it
    lists them from their help text alone."""

    lazy: ClassVar[dict[str, LazyCommand]] = {}
    """Set by a subclass: the program's table of commands, in the order its help lists them."""

    _listing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.lazy, self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names alone (typer's own reads every command)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        commands = self.commands
        if self._listing and isinstance(commands, LazyCommands) and cmd_name in self.lazy \
                and not commands.is_loaded(cmd_name):
            return TyperCommand(cmd_name, help=self.lazy[cmd_name].help)
        return commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
