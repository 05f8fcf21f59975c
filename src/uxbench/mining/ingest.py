"""Streaming readers: log files -> (source, line, Turn), with memory flat in the input size.

JSON Lines (``.jsonl``, ``.ndjson``, ``.json`` with one object per line, any of them ``.gz``) are read line
by line; Parquet is read with ``pyarrow.parquet.ParquetFile.iter_batches``; neither holds a whole file. (A
pretty-printed ``.json`` array is therefore not accepted: convert it to JSON Lines.)
A line may also hold a JSON array of rows (the product's batch wrapper). Directories are walked in sorted
order. Line numbers are 1-based (for Parquet: the row number). Lines and Parquet rows are decoded by the
dataset's readers (`uxbench.data.readers`): a UTF-8 BOM is dropped, and a line that is not UTF-8 is
reported with the byte offset of its first bad byte.

With ``skip_invalid`` a bad row is counted in an `IngestReport` (file, line, field, reason; the first
`MAX_REPORTED_ERRORS` kept) instead of stopping the run. Reasons never quote row content.
Reading nothing is an error: no log file under the paths given, or a read that gives no turn (empty
files, every row invalid, only system rows) raises `DataError` saying which.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, PrivateAttr

from uxbench.data.readers import iter_jsonl, iter_parquet
from uxbench.errors import DataError
from uxbench.mining.logformat import check_format, parse_row, parse_row_fields, turn_of_fields
from uxbench.mining.sessions import fields_line, spill_line
from uxbench.mining.types import Turn

T = TypeVar("T")
MAX_REPORTED_ERRORS = 20
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
PARQUET_SUFFIXES = (".parquet", ".pq")
SAMPLE_LOG = Path(__file__).resolve().parent / "resources" / "sample_chat_log.jsonl"
"""A small chat log written by this project (38 conversations, zh and en, with thumbs, a regeneration, repeats,
a rephrase, complaints, a dismissal and names, phone numbers and e-mails to de-identify): `mine run demo`."""


class InvalidRow(BaseModel):
    """Where a skipped row was and why (never its content)."""

    source: str
    line: int | None
    field: str | None
    reason: str


class IngestReport(BaseModel):
    """Counts of one read; pass one in to `iter_log_rows` to have it filled."""

    files: int = 0
    rows: int = 0
    turns: int = 0
    empty_turns: int = 0
    """Turns with no text (null or empty content): kept, and counted so that they are not silent."""
    invalid_rows: int = 0
    errors: list[InvalidRow] = Field(default_factory=list)
    """The first `MAX_REPORTED_ERRORS` invalid rows."""

    _first_error: DataError | None = PrivateAttr(default=None)

    @property
    def first_error(self) -> DataError | None:
        """The first invalid row's error (not in the report's JSON)."""
        return self._first_error

    def add_invalid(self, err: DataError) -> None:
        self.invalid_rows += 1
        if self._first_error is None:
            self._first_error = err
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(InvalidRow(
                source=err.source or "", line=err.line, field=err.field, reason=err.reason,
            ))

    def count(self, tally: RowTally) -> None:
        self.rows += tally.rows
        self.turns += tally.turns
        self.empty_turns += tally.empty_turns

    def add(self, other: IngestReport) -> None:
        """Count in the report of a later part of the same read (a chunk parsed in another process)."""
        self.files += other.files
        self.rows += other.rows
        self.turns += other.turns
        self.empty_turns += other.empty_turns
        self.invalid_rows += other.invalid_rows
        self.errors.extend(other.errors[: max(0, MAX_REPORTED_ERRORS - len(self.errors))])
        if self._first_error is None:
            self._first_error = other.first_error


def batched(iterable: Iterable[T], n: int) -> Iterator[list[T]]:
    """Lists of up to ``n`` consecutive items (the last one may be shorter)."""
    if n < 1:
        raise ValueError("batch size must be at least 1")
    iterator = iter(iterable)
    while chunk := list(islice(iterator, n)):
        yield chunk


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named, plus the readable log files under any directory named (sorted; hidden ones skipped)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = (p for p in path.rglob("*") if p.is_file() and _kind(p))
            out.extend(sorted(p for p in found if not _hidden(p.relative_to(path))))
        elif path.is_file():
            if _kind(path) is None:
                raise DataError(
                    "unsupported file type", source=str(path),
                    hint="use .jsonl / .ndjson / .json (optionally .gz) or .parquet",
                )
            out.append(path)
        else:
            raise DataError("no such file or directory", source=str(path))
    for path in out:
        try:
            path.open("rb").close()
        except OSError as exc:
            raise DataError(f"cannot read the file: {exc.strerror or type(exc).__name__}", source=str(path),
                            hint="check its permissions") from None
    if not out:
        raise DataError(
            "no log files here: nothing to read", source=", ".join(str(p) for p in paths) or "(no path)",
            hint="expected .jsonl / .ndjson / .json (optionally .gz) or .parquet files",
        )
    return out


def row_items(value: Any) -> list[Any]:
    """The rows a decoded line holds: itself, or the items of a batch wrapper (one line, several rows)."""
    return value if isinstance(value, list) else [value]


def iter_raw_rows(paths: Iterable[str | Path]) -> Iterator[tuple[str, int, Any]]:
    """(source, line, row object or DataError) over every file, streaming."""
    for path in expand_paths(paths):
        # The dataset's readers (`uxbench.data.readers`): one decoding of bytes, BOMs, big integers, bad UTF-8.
        rows = iter_parquet(path) if is_parquet(path) else iter_jsonl(path)
        for number, value in rows:
            for item in row_items(value):
                yield str(path), number, item


def is_parquet(path: Path) -> bool:
    return _kind(path) == "parquet"


def _located(err: DataError, source: str, line: int | None) -> DataError:
    return DataError(err.reason, source=source, line=line, field=err.field, hint=err.hint)


class RowTally:
    """Rows, turns and empty turns of a read, counted in plain attributes (a pydantic model's attribute
    assignment costs ~2 us, three per row) and added to its `IngestReport` once (`IngestReport.count`)."""

    __slots__ = ("empty_turns", "rows", "turns")

    def __init__(self) -> None:
        self.rows = self.turns = self.empty_turns = 0


def _refused(err: DataError, source: str, line: int, skip_invalid: bool, report: IngestReport) -> None:
    """A bad row: raised located (file, line, field), or recorded in ``report`` with ``skip_invalid``."""
    located = _located(err, source, line)
    if not skip_invalid:
        raise located from None
    report.add_invalid(located)


def turns_of_row(source: str, line: int, row: Any, fmt: str, skip_invalid: bool, report: IngestReport,
                 tally: RowTally) -> list[Turn]:
    """One row (or the DataError of a row that could not be decoded) -> its turns, counted in ``tally``.

    A bad row raises `DataError` naming file, line and field, unless ``skip_invalid`` (then it is recorded in
    ``report`` and gives no turn)."""
    tally.rows += 1
    try:
        if isinstance(row, DataError):
            raise row
        turns = parse_row(row, fmt)
    except DataError as exc:
        _refused(exc, source, line, skip_invalid, report)
        return []
    tally.turns += len(turns)
    for turn in turns:
        if not turn.content.strip():
            tally.empty_turns += 1
    return turns


def lines_of_row(source: str, line: int, row: Any, fmt: str, skip_invalid: bool, report: IngestReport,
                 tally: RowTally) -> list[tuple[str, bytes]]:
    """`turns_of_row`'s turns as (conversation id, bucket line `sessions.spill_line`). A canonical row's line is
    written from its checked fields (`sessions.fields_line`, the same bytes): making a Turn only to serialise it
    was two thirds of the work of a row."""
    tally.rows += 1
    try:
        if isinstance(row, DataError):
            raise row
        parsed = parse_row_fields(row, fmt)
        if isinstance(parsed, dict):
            spilled = fields_line(parsed)
            if spilled is not None:
                tally.turns += 1
                if not parsed["content"].strip():
                    tally.empty_turns += 1
                return [(parsed["conversation_id"], spilled)]
            parsed = [turn_of_fields(parsed)]
    except DataError as exc:
        _refused(exc, source, line, skip_invalid, report)
        return []
    if parsed is None:
        return []
    tally.turns += len(parsed)
    for turn in parsed:
        if not turn.content.strip():
            tally.empty_turns += 1
    return [(turn.conversation_id, spill_line(turn)) for turn in parsed]


def iter_log_rows(
    paths: Iterable[str | Path] | str | Path,
    format: str = "auto",
    *,
    skip_invalid: bool = False,
    report: IngestReport | None = None,
    allow_empty: bool = False,
) -> Iterator[tuple[str, int, Turn]]:
    """Every turn of every file as (source, line, Turn), streaming.

    A bad row raises `DataError` naming file, line and field, unless ``skip_invalid`` (then it is counted
    in ``report``). ``format`` is ``auto`` (detected per row) or an adapter name from `logformat`. A read
    that gives no turn raises `DataError` at its end, saying why, unless ``allow_empty``.
    """
    check_format(format)
    # Resolve files now, so a missing path fails at the call and not at the first next().
    files = expand_paths([paths] if isinstance(paths, (str, Path)) else paths)
    report = report if report is not None else IngestReport()
    report.files += len(files)
    return _iter_turns(files, format, skip_invalid, report, allow_empty)


def _iter_turns(
    files: list[Path], format: str, skip_invalid: bool, report: IngestReport, allow_empty: bool
) -> Iterator[tuple[str, int, Turn]]:
    read, tally = IngestReport(), RowTally()  # this read's own counts (``report`` may hold earlier reads')
    try:
        for source, line, row in iter_raw_rows(files):
            for turn in turns_of_row(source, line, row, format, skip_invalid, read, tally):
                yield source, line, turn
    finally:
        read.count(tally)
        report.add(read)
    if read.turns == 0 and not allow_empty:
        raise nothing_read(files, read)


def nothing_read(files: list[Path], report: IngestReport) -> DataError:
    """The error of a read that gave no turn, saying why."""
    reason = _empty_reason(files, report.rows, report.invalid_rows, report.first_error)
    return DataError(f"no turns were read: {reason}",
                     source=", ".join(str(f) for f in files[:3]) + (" ..." if len(files) > 3 else ""))


def require_turns(paths: Iterable[str | Path] | str | Path, format: str = "auto", *,
                  skip_invalid: bool = False) -> None:
    """Raise `DataError` (saying why) unless the logs hold at least one turn; reads up to the first one.
    Lets a command refuse an empty input before it writes anything."""
    turns = iter_log_rows(paths, format, skip_invalid=skip_invalid)
    try:
        next(turns, None)  # a read that gives no turn raises instead of stopping
    finally:
        turns.close()  # type: ignore[attr-defined]  # a generator


def _empty_reason(files: list[Path], rows: int, invalid: int, first_error: DataError | None) -> str:
    if rows == 0:
        return "the files hold no rows (empty, or only blank lines)" if len(files) > 1 else \
            "the file holds no rows (empty, or only blank lines)"
    if invalid == rows:
        return f"all {rows} rows were invalid and skipped" + (f"; the first: {first_error}" if first_error else "")
    return f"the {rows - invalid} valid rows hold only system or tool messages (no user or assistant turn)"
