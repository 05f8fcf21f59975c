"""`HelpColumns` (uxbench/cli/help_columns.py) draws an option's help cell byte for byte as typer's `Columns` does:
every command's help page both ways, and the two layouts it draws itself against `Columns` directly. And the
`rich_cast` of a help page (startup.py) gives what rich's gives."""

from __future__ import annotations

import contextlib
import io

import pytest
import rich.console
import rich.measure
import rich.protocol
import typer
import typer.rich_utils as rich_utils
from rich.columns import Columns
from rich.console import Console
from rich.table import Table
from rich.text import Text

from uxbench.cli import main as cli_main
from uxbench.cli import startup
from uxbench.cli.help_columns import HelpColumns


def _help(path: tuple[str, ...], width: int, colour: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setattr(rich_utils, "FORCE_TERMINAL", True if colour else None)
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
        typer.main.get_command(cli_main.app).main([*path, "--help"], prog_name="uxbench", standalone_mode=True)
    return shown.getvalue()


def _every_command() -> list[tuple[str, ...]]:
    group = typer.main.get_command(cli_main.app)
    paths: list[tuple[str, ...]] = [()]
    for name in group.commands:  # type: ignore[attr-defined]
        paths.append((name,))
        paths.extend((name, sub) for sub in getattr(group.commands[name], "commands", {}))  # type: ignore[attr-defined]
    return paths


def _both_ways(path: tuple[str, ...], width: int, colour: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    startup.help_without_markdown()
    monkeypatch.setattr(rich_utils, "Columns", HelpColumns)
    ours = _help(path, width, colour, monkeypatch)
    monkeypatch.setattr(rich_utils, "Columns", Columns)
    monkeypatch.setattr(startup, "help_cells_without_tables", lambda: None)  # typer's own, as before
    monkeypatch.setattr(startup, "rich_cast_without_import", lambda: None)  # and rich's
    for module in (rich.console, rich.measure):
        monkeypatch.setattr(module, "rich_cast", rich.protocol.rich_cast)
    typers = _help(path, width, colour, monkeypatch)
    return ours, typers


def test_every_help_page_is_the_same_as_typers(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _every_command()
    assert ("run",) in paths and ("mine", "run") in paths and len(paths) > 30
    for index, path in enumerate(paths):
        width, colour = (80, True) if index % 2 else (120, False)
        ours, typers = _both_ways(path, width, colour, monkeypatch)
        assert "Usage:" in ours and "─" in ours
        assert ours == typers, (path, width, colour)


@pytest.mark.parametrize("width", [20, 41, 60, 79, 100, 137, 200])
@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
def test_run_help_is_the_same_as_typers(width: int, colour: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    ours, typers = _both_ways(("run",), width, colour, monkeypatch)
    assert ours == typers


def test_a_help_page_uses_help_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rich_utils, "Columns", Columns)
    _help(("run",), 100, False, monkeypatch)
    assert rich_utils.Columns is HelpColumns


_TEXTS = [
    Text("Dataset split of hf: sources."),
    Text.from_markup("A [bold]marked-up[/] help, with --an-option, `code` and a long tail of words to wrap"),
    Text("[default: test]", style="dim"),
    Text("[default: the provider's, or a much longer default that has to wrap somewhere]", style="dim"),
    Text("[env var: UXBENCH_X]", style="dim yellow"),
    Text("[required]", style="dim red"),
    Text("中文的帮助文本，宽字符"),
    Text("two\nlines", style="italic"),
    Text(""),
    Text("x"),
]
_CASES = [[0], [1], [0, 2], [1, 2], [0, 3], [1, 3], [6, 2], [7, 2], [8, 2], [0, 4, 2], [1, 4, 3, 5], [9, 9],
          [2, 9, 8]]


def _drawn(cell: Columns, width: int, colour: bool) -> str:
    """The cell in a table row as typer's options table holds it (the cell takes the rest of the row)."""
    console = Console(width=width, file=io.StringIO(), force_terminal=colour, color_system="truecolor",
                      legacy_windows=False)
    table = Table(show_header=False, expand=True, box=None, padding=(0, 1), pad_edge=False, highlight=True)
    table.add_row(Text("--option", style="bold cyan"), Text("TEXT", style="bold yellow"), cell)
    console.print(table)
    console.print(cell)
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", _CASES, ids=lambda c: "-".join(map(str, c)))
def test_help_columns_draw_as_columns(case: list[int]) -> None:
    for width in range(1, 90, 3):
        for colour in (False, True):
            texts = [_TEXTS[i] for i in case]
            assert _drawn(HelpColumns(texts), width, colour) == _drawn(Columns(texts), width, colour), width


def test_other_settings_and_renderables_are_drawn_by_columns() -> None:
    for cell, reference in [(HelpColumns([Text("a"), "b"]), Columns([Text("a"), "b"])),
                            (HelpColumns([Text("a b c")] * 5, equal=True), Columns([Text("a b c")] * 5, equal=True)),
                            (HelpColumns([Text("a")] * 7, padding=(0, 3)), Columns([Text("a")] * 7, padding=(0, 3)))]:
        for width in (5, 12, 40):
            assert _drawn(cell, width, True) == _drawn(reference, width, True)


class _Cast:
    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __rich__(self) -> object:
        return self.inner


class _Claims:
    """An object that says it has every attribute (as a mock does)."""

    def __getattr__(self, name: str) -> object:
        return lambda: self


def test_rich_cast_of_a_help_page_gives_what_richs_gives() -> None:
    startup.rich_cast_without_import()
    ours = rich.console.rich_cast
    assert ours is not rich.protocol.rich_cast and rich.measure.rich_cast is ours
    text = Text("x")
    for thing in [text, "str", 3, None, Columns([]), Text, _Cast(text), _Cast(_Cast("deep")), _Cast, _Claims()]:
        expected, got = rich.protocol.rich_cast(thing), ours(thing)
        assert got is expected or (isinstance(got, str) and got == expected), thing
