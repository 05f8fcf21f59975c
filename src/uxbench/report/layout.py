"""Fitting report tables into a terminal: which columns to keep so that no number is ever cut.

Rich shrinks wrappable columns when a table is too wide, and cuts the others with an ellipsis when that is not
enough. Tables here keep every figure whole instead: optional columns are dropped (in a stated order, with a
note naming them) until the non-wrapping columns fit at full width and each wrapping column keeps its longest
word.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

MIN_WIDTH = 40


def terminal_width(default: int = 80) -> int:
    """The terminal's width (`$COLUMNS` first, as `shutil` reads it), `default` when there is no terminal."""
    return max(MIN_WIDTH, shutil.get_terminal_size((default, 24)).columns)


FOLD_WIDTH = 20
"""A wrapping column is never squeezed below its longest word, or this many cells when a word (a model path)
is longer: such a word is folded onto the next line."""


def _width(header: str, texts: Sequence[str], wrap: bool) -> int:
    if wrap:
        words = max((cell_len(word) for t in texts for word in t.split()), default=1)
        return max(min(words, FOLD_WIDTH), max((cell_len(w) for w in header.split()), default=1))
    return max((cell_len(line) for t in [header, *texts] for line in t.split("\n")), default=1)


def table_width(header: Sequence[str], rows: Sequence[Sequence[str]], keep: Sequence[int],
                wrap: Sequence[int]) -> int:
    """Narrowest width of a rich table (default box, padding 1) showing columns `keep` without cutting any."""
    total = 1
    for i in keep:
        total += 3 + _width(header[i], [r[i] for r in rows], i in wrap)
    return total


def fit_columns(
    header: Sequence[str], rows: Sequence[Sequence[str]], width: int, *, optional: Sequence[int] = (),
    wrap: Sequence[int] = (0, 1),
) -> tuple[list[int], list[str]]:
    """(indices of the columns to show, names of the columns left out). `optional` lists droppable columns in
    the order they go; `wrap` the columns whose text may wrap (rich's first two in `report.render._rich`)."""
    keep = list(range(len(header)))
    dropped: list[str] = []
    for index in optional:
        if table_width(header, rows, keep, wrap) <= width:
            break
        keep.remove(index)
        dropped.append(header[index])
    return keep, dropped


def wrap_widths(header: Sequence[str], rows: Sequence[Sequence[str]], wraps: Sequence[bool], width: int
                ) -> list[int | None]:
    """Widths for the wrapping columns of a table too wide for `width` (None: natural width). rich would shrink
    the widest text column first, below its longest word ("gpt-4" / "o-mini"); here each keeps its longest
    word and the room left is shared in proportion to what each would need in full."""
    columns = range(len(header))
    wrap_cols = [i for i in columns if wraps[i]]
    natural = {i: _width(header[i], [r[i] for r in rows], False) for i in columns}
    if 1 + sum(3 + natural[i] for i in columns) <= width or not wrap_cols:
        return [None] * len(header)
    least = {i: min(natural[i], _width(header[i], [r[i] for r in rows], True)) for i in wrap_cols}
    fixed = 1 + sum(3 + (least[i] if wraps[i] else natural[i]) for i in columns)
    if fixed > width:  # even whole words do not fit: rich folds the names further, never the figures
        return [None] * len(header)
    room, need = width - fixed, {i: natural[i] - least[i] for i in wrap_cols}
    total = sum(need.values()) or 1
    return [least[i] + room * need[i] // total if wraps[i] else None for i in columns]


def select(header: Sequence[str], rows: Sequence[Sequence[str]], keep: Sequence[int]
           ) -> tuple[list[str], list[list[str]]]:
    return [header[i] for i in keep], [[r[i] for i in keep] for r in rows]


Section = tuple[str, list[str], list[list[str]]]
"""(title, header, rows) of one table."""


def render_tables(
    sections: Sequence[Section], notes: Sequence[str], width: int, *, droppable: Sequence[str] = (),
    wrap: Sequence[int] = (0, 1), after: Sequence[Sequence[str]] | None = None,
    show_all: str = "--format md, csv or json show everything",
) -> str:
    """Terminal tables no wider than `width`: columns named in `droppable` go (in that order) while a table is
    too wide, and a note says which; columns in `wrap` wrap and fold long names, the others (figures) are never
    wrapped or cut. `notes` come first, as in `report.render`; `after[i]` are lines printed below table i."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, highlight=False)
    shown, dropped_notes = [], []
    for title, header, rows in sections:
        optional = [header.index(name) for name in droppable if name in header]
        keep, dropped = fit_columns(header, rows, width, optional=optional, wrap=wrap)
        shown.append((title, *select(header, rows, keep), [i in wrap for i in keep]))
        if dropped:
            names = ", ".join(name.replace("\n", " ") for name in dropped)
            dropped_notes.append(f"'{title}' leaves out {names} to fit {width} columns ({show_all}).")
    for note in [*notes, *dropped_notes]:
        console.print(Text(note))
    for i, (title, header, rows, wraps) in enumerate(shown):
        table = Table(title=Text(title), title_justify="left")
        for h, wraps_, fixed in zip(header, wraps, wrap_widths(header, rows, wraps, width), strict=True):
            table.add_column(Text(h), justify="left" if wraps_ else "right", no_wrap=not wraps_,
                             overflow="fold" if wraps_ else "ellipsis", width=fixed)
        for r in rows:
            table.add_row(*(Text(c) for c in r))
        console.print(table)
        for line in (after[i] if after is not None and i < len(after) else ()):
            console.print(Text(line))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
