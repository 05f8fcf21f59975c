"""The help cell of an option in a help page (its text, then `[default: ...]`), drawn as typer draws it, for less.

Typer puts an option's help text and its default in a `rich.columns.Columns`, which lays them out on one line when
they fit (one space apart) and else one under the other, by building a grid `Table` and drawing that inside the
cell of the options table: a table per option, about 40 M instructions of the 45 options of `uxbench run --help`.
`HelpColumns` is that `Columns` with the two layouts it takes for one-line texts drawn directly, the same calls on
the same texts at the same widths and options as the grid would make; any other case (other renderables, other
settings, a layout of several rows and columns) is drawn by `Columns` itself. Nothing else changes: it measures as
`Columns` does (it has no `__rich_measure__`, so the options table gives it the rest of the row).

tests/cli/test_help_columns.py draws every command's help both ways, at several widths, plain and in colour, and
compares the bytes, and the two layouts against `Columns` directly.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.columns import Columns
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

_GAP = 1
"""The space between two texts on one line: the right padding of `Columns`' default `padding=(0, 1)`."""


class HelpColumns(Columns):
    """`Columns` that draws one-line texts itself when they go on one line, or one under the other."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        items = self.renderables
        if not items or not self._defaults() or not all(type(item) is Text and item.end == "\n" for item in items):
            yield from super().__rich_console__(console, options)
            return
        texts: list[Text] = items  # type: ignore[assignment]  # checked just above
        max_width = options.max_width
        widths = [Measurement.get(console, options, text).maximum for text in texts]
        count = _column_count(widths, max_width)
        if count == 1:
            yield from _one_column(console, options, texts, max(widths) or 1)
            return
        if count == len(texts) and min(widths) >= 1:
            lines = [console.render_lines(text, _cell_options(options, width))
                     for text, width in zip(texts, widths, strict=True)]
            if all(len(rendered) == 1 for rendered in lines):
                yield from _one_line(lines)
                return
        yield from super().__rich_console__(console, options)

    def _defaults(self) -> bool:
        """Whether this is `Columns(items)` with every setting as typer leaves it."""
        return (self.padding == (0, _GAP) and self.width is None and not self.expand and not self.equal
                and not self.column_first and not self.right_to_left and self.align is None and self.title is None)


def _column_count(widths: list[int], max_width: int) -> int:
    """How many columns `Columns` chooses for items of these widths, in order, row by row (its own loop)."""
    count = len(widths)
    while count > 1:
        used: dict[int, int] = {}
        column = 0
        for width in widths:
            used[column] = max(used.get(column, 0), width)
            if sum(used.values()) + _GAP * (len(used) - 1) > max_width:
                count = len(used) - 1
                break
            column = (column + 1) % count
        else:
            break
    return count


def _cell_options(options: ConsoleOptions, width: int) -> ConsoleOptions:
    """The options the grid gives a cell of this width: a `Column`'s defaults (left, wrapped, ellipsis)."""
    return options.update(width=width, justify="left", no_wrap=False, overflow="ellipsis", height=None,
                          highlight=False)


def _one_line(lines: list[list[list[Segment]]]) -> Iterator[Segment]:
    """The texts drawn each at its own width, one line each, side by side one space apart."""
    gap = Segment(" " * _GAP)
    for index, rendered in enumerate(lines):
        if index:
            yield gap
        yield from rendered[0]
    yield Segment.line()


def _one_column(console: Console, options: ConsoleOptions, texts: list[Text], width: int) -> Iterator[Segment]:
    """One under the other, each wrapped to the width of the widest (at most the cell's) and filled to it."""
    cell = _cell_options(options, width)
    for text in texts:
        for line in console.render_lines(text, cell):
            yield from line
            yield Segment.line()
