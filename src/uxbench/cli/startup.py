"""What `uxbench` does to typer before any command, so that `uxbench --help` and `uxbench COMMAND --help` import
only what they print with (docs/CONTRIBUTING.md, Imports; tests/cli/test_startup_imports.py keeps the list).

Typer builds its help and error panels with `typer.rich_utils`, which imports rich's Markdown renderer (with
markdown-it and Pygments) and rich's traceback printer at its top, for two features uxbench turns off (markdown
help text, pretty tracebacks); and it validates an option that was not given through a pydantic adapter it
builds for the purpose. Both are kept off the path of a help page here, each with a fallback to typer's own
behaviour when typer changes. And the help cell of each option is drawn without the table typer draws it with
(help_columns.py: the same bytes), and rich's `rich_cast` answers its common case without an import.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import typer.core


def install() -> None:
    """Both changes, once, before the first command is parsed."""
    no_pydantic_for_absent_values()
    for cls in (typer.core.TyperCommand, typer.core.TyperGroup):
        _before_help(cls)


def _before_help(cls: type) -> None:
    original: Callable[..., Any] = cls.format_help  # type: ignore[attr-defined]
    if getattr(original, "_uxbench_help", False):
        return

    def format_help(self: Any, ctx: Any, formatter: Any) -> Any:
        help_without_markdown()
        help_cells_without_tables()
        rich_cast_without_import()
        return original(self, ctx, formatter)

    format_help._uxbench_help = True  # type: ignore[attr-defined]
    cls.format_help = format_help  # type: ignore[attr-defined]


_DEFERRED = (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback"))


def help_without_markdown() -> None:
    """Import `typer.rich_utils` with rich's Markdown and Traceback left out until one is used (uxbench's help
    uses neither: rich markup, no pretty tracebacks). A no-op once rich_utils is imported."""
    if "typer.rich_utils" in sys.modules:
        return
    deferred = [(name, attribute) for name, attribute in _DEFERRED if name not in sys.modules]
    for name, attribute in deferred:
        placeholder = ModuleType(name)
        setattr(placeholder, attribute, _Deferred(attribute, (), {"_where": (name, attribute)}))
        sys.modules[name] = placeholder
    try:
        import typer.rich_utils  # noqa: F401
    except ImportError:  # a typer that wants more of them: it imports the real modules when it needs them
        sys.modules.pop("typer.rich_utils", None)
    finally:
        for name, _ in deferred:
            del sys.modules[name]  # a later `import rich.markdown` gets the real module


def help_cells_without_tables() -> None:
    """Typer's help cell of an option drawn by `HelpColumns` (help_columns.py): the same bytes without a grid table
    per option. A no-op before `typer.rich_utils` is imported, once done, or when typer draws it otherwise."""
    rich_utils = sys.modules.get("typer.rich_utils")
    if rich_utils is None:
        return
    from rich.columns import Columns

    if getattr(rich_utils, "Columns", None) is Columns:
        from uxbench.cli.help_columns import HelpColumns

        rich_utils.Columns = HelpColumns  # type: ignore[attr-defined]


def rich_cast_without_import() -> None:
    """rich's `rich_cast`, called for every renderable drawn or measured (thousands in a help page), runs
    `from rich.console import RenderableType` on each call, which costs a formatted AttributeError each time in
    Python 3.11 (the import looks up the module's `__path__`): about 15 M instructions of `uxbench run --help`.
    For an object without `__rich__` it returns the object itself, which is answered here first; any other goes
    to rich's own. A no-op once done, or when rich calls it otherwise."""
    import rich.console
    import rich.measure
    import rich.protocol

    original = rich.protocol.rich_cast

    def rich_cast(renderable: object) -> Any:
        if not hasattr(renderable, "__rich__"):
            return renderable  # what rich_cast returns: its loop does not start
        return original(renderable)

    for module in (rich.console, rich.measure):
        if getattr(module, "rich_cast", None) is original:
            module.rich_cast = rich_cast  # type: ignore[attr-defined]


class _Deferred(type):
    """The class of a stand-in for `module.attribute` that imports the real one when it is used: called (an
    instance made) or asked for an attribute (`Traceback.from_exception`)."""

    _where: tuple[str, str]

    def _real(cls) -> Any:
        import importlib

        module, attribute = cls._where
        return getattr(importlib.import_module(module), attribute)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)


class _AbsentValue:
    """Typer's coercion of a value that was not given (RuntimeParam.coerce of None), without an adapter."""

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        return () if param.multiple or param.nargs == -1 else None


def no_pydantic_for_absent_values() -> None:
    """Typer validates each option's value through a pydantic adapter that it builds on first use, even for an
    option that was not given (value None, which it then returns as is): the root's `--help`, absent in
    `uxbench run --help`, made every command import pydantic before its help. Build the adapter only for a value
    that was given. (A no-op for a typer without this machinery.)"""
    parameter = getattr(typer.core, "_TyperParameter", None)
    original: Callable[..., Any] | None = getattr(parameter, "process_value", None)
    if parameter is None or original is None or getattr(original, "_uxbench_absent", False):
        return

    def process_value(self: Any, ctx: Any, value: Any) -> Any:
        if value is not None or getattr(self, "_runtime_param", ...) is not None:
            return original(self, ctx, value)
        self._runtime_param = _ABSENT
        try:
            return original(self, ctx, value)
        finally:
            self._runtime_param = None

    process_value._uxbench_absent = True  # type: ignore[attr-defined]
    parameter.process_value = process_value


_ABSENT = _AbsentValue()
