"""Streaming row readers for local files, and what a file's name says about its rows.

A reader yields `(position, row)` pairs where position is the 1-based line (JSONL) or row (JSON, Parquet),
and `row` is the decoded object or a `DataError` for a row that cannot be decoded, so the loader can skip
it. Errors that stop a whole file (unreadable, not Parquet) raise `DataError` directly.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from uxbench.data import user_files
from uxbench.data.schema import JudgeLabel, TaskName
from uxbench.errors import DataError

RowItem = tuple[int, "object | DataError"]
FileKind = Literal["jsonl", "json", "parquet"]

SUFFIXES: dict[str, FileKind] = {
    ".jsonl": "jsonl",
    ".jsonl.gz": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
}
# Metadata files that `datasets.save_to_disk` and the hub leave next to the data.
_NOT_DATA = {"dataset_info.json", "state.json", "dataset_dict.json", "config.json"}
_BOM = b"\xef\xbb\xbf"
_PARQUET_BATCH = 512
_WRAPPER_KEYS = ("data", "rows", "cases")
_SURROGATE = re.compile("[\ud800-\udfff]")


def file_kind(path: Path) -> FileKind | None:
    """The reader for a file name, or None when it is not a data file."""
    name = path.name.lower()
    if name in _NOT_DATA:
        return None
    for suffix, kind in SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return None


def data_files(root: Path) -> list[Path]:
    """Data files under a directory (recursively, hidden entries skipped), in sorted order."""
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        if file_kind(path) is not None:
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def name_hints(name: str) -> tuple[TaskName | None, JudgeLabel | None]:
    """(task, judge label) implied by a file or config name such as `uxbench_task1_judge_bad_1k.jsonl`."""
    tokens = [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t]
    task: TaskName | None = None
    for token_set, value in (({"task1"}, "judge"), ({"task2"}, "eval"), ({"task3"}, "recovery")):
        if token_set & set(tokens):
            task = value  # type: ignore[assignment]
            break
    if task is None:
        if "judge" in tokens:
            task = "judge"
        elif "recovery" in tokens:
            task = "recovery"
        elif "eval" in tokens:
            task = "eval"
    bad = any(t.startswith(("bad", "dislike")) for t in tokens) or "点踩" in name
    good = any(t.startswith(("good", "like")) for t in tokens) or "点赞" in name
    label: JudgeLabel | None = "bad" if bad and not good else "good" if good and not bad else None
    return task, label


def invalid_utf8_reason(raw: bytes, within: str = "") -> str | None:
    """Why `raw` is not UTF-8, with the byte offset of the first bad byte (None when it is UTF-8).

    `within` completes the offset, e.g. " of the line". A JSON decoder reports a character offset that
    means nothing for bytes it could not decode, so callers say this instead."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}{within} "
                f"(counting from 0); save the file as UTF-8")
    return None


def decode_json(raw: bytes, within: str = "") -> Any:
    """orjson first (fast); the standard library as fallback for NaN and UTF-16 files. Integers beyond 64
    bits come back as floats (orjson's reading): the adapters refuse such a float where an id is expected."""
    try:
        return _shallow(orjson.loads(raw))
    except orjson.JSONDecodeError:
        pass
    try:
        value = _shallow(json.loads(raw))
    except UnicodeDecodeError:
        raise DataError(invalid_utf8_reason(raw, within) or "not valid UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise DataError(f"invalid JSON ({str(exc)[:120]})") from None
    where = lone_surrogate(value)  # orjson refuses them; the standard library lets them through
    if where is not None:
        field, char = where
        raise DataError(f"holds a lone surrogate \\u{ord(char):04x} (half of a UTF-16 pair: not a character, and "
                        "not valid Unicode); fix the text where it was exported", field=field or None)
    return value


def _shallow(value: Any) -> Any:
    """`value`, refused when it nests deeper than a user's file may (`user_files.Limits.max_depth`): a case is
    serialised to be hashed, and the serialiser stops at 255 levels."""
    if user_files.depth_exceeds(value, user_files.DEFAULT.max_depth):
        raise DataError(f"nests lists or mappings deeper than {user_files.DEFAULT.max_depth} levels")
    return value


def lone_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, character) of the first lone surrogate in a decoded JSON value (keys included), or None."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return (path, found.group()) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            found_key = _SURROGATE.search(str(key))
            if found_key:
                return inner, found_key.group()
            hit = lone_surrogate(item, inner)
            if hit is not None:
                return hit
    elif isinstance(value, list):
        for index, item in enumerate(value):
            hit = lone_surrogate(item, f"{path}[{index}]")
            if hit is not None:
                return hit
    return None


def _open(path: Path) -> IO[bytes] | gzip.GzipFile:
    try:
        if path.name.lower().endswith(".gz"):
            return gzip.GzipFile(path, "rb")
        return path.open("rb")
    except OSError as exc:
        raise DataError(f"cannot open: {exc.strerror or exc}", source=str(path)) from None


def jsonl_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of the non-blank lines; a UTF-8 BOM on the first line is dropped."""
    with _open(path) as fh:
        try:
            for lineno, raw in enumerate(fh, 1):
                if lineno == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                if raw.strip():
                    yield lineno, raw
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"cannot read: {exc}", source=str(path)) from None


def jsonl_blocks(path: Path, block_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(number of its first line, block) of about ``block_bytes`` each, cut after a newline (a longer line is one
    block), so that another process can split them (`block_lines`) as `jsonl_lines` would have read the file:
    one read and one buffer per block instead of a Python object per line."""
    first, pending = 1, []  # the start of a line not ended yet (pieces: a line of many blocks is joined once)
    with _open(path) as fh:
        try:
            while data := fh.read(block_bytes):
                cut = data.rfind(b"\n") + 1
                if not cut:  # no line ends here yet: a line longer than the block
                    pending.append(data)
                    continue
                block = b"".join([*pending, data[:cut]])
                pending = [data[cut:]] if cut < len(data) else []
                yield first, block
                first += block.count(b"\n")
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"cannot read: {exc}", source=str(path)) from None
    if pending:
        yield first, b"".join(pending)


def block_lines(first: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """The (line number, bytes) that `jsonl_lines` gives for the lines of a block of `jsonl_blocks`."""
    if first == 1 and block.startswith(_BOM):
        block = block[len(_BOM) :]
    parts = block.split(b"\n")
    last = len(parts) - 1  # after the block's last newline: empty, or a last line without one
    for index, raw in enumerate(parts):
        if raw.strip():
            yield first + index, raw + b"\n" if index < last else raw


def decode_jsonl_line(raw: bytes) -> Any:
    """One line of a JSON Lines file -> its value, or the DataError saying why it cannot be read."""
    try:
        return decode_json(raw, " of the line")
    except DataError as err:
        return err


def iter_jsonl(path: Path) -> Iterator[RowItem]:
    """One row per non-blank line; memory stays flat however long the file is."""
    for lineno, raw in jsonl_lines(path):
        yield lineno, decode_jsonl_line(raw)


def _json_rows(path: Path) -> list[Any]:
    with _open(path) as fh:
        try:
            raw = fh.read()
        except (OSError, EOFError) as exc:
            raise DataError(f"cannot read: {exc}", source=str(path)) from None
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        data = decode_json(raw)
    except DataError as err:
        raise DataError(err.reason, source=str(path)) from None
    if isinstance(data, dict):
        wrapped = next((data[k] for k in _WRAPPER_KEYS if isinstance(data.get(k), list)), None)
        return wrapped if wrapped is not None else [data]
    if isinstance(data, list):
        return data
    raise DataError(f"expected a list of rows or an object, got {type(data).__name__}", source=str(path))


def iter_json(path: Path) -> Iterator[RowItem]:
    """A JSON list, `{"data": [...]}`, or a single object (one case). Read whole: JSON cannot stream."""
    yield from enumerate(_json_rows(path), 1)


def _parquet_file(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"not a readable Parquet file ({str(exc)[:160]})", source=str(path)) from None


def iter_parquet(path: Path) -> Iterator[RowItem]:
    """Rows in row-group batches, so memory holds one batch at a time."""
    import pyarrow as pa

    pf = _parquet_file(path)
    position = 0
    try:
        for batch in pf.iter_batches(batch_size=_PARQUET_BATCH):
            for row in batch.to_pylist():
                position += 1
                yield position, row
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"cannot read Parquet data ({str(exc)[:160]})", source=str(path)) from None


def iter_file(path: Path) -> Iterator[RowItem]:
    """Rows of any supported file."""
    kind = file_kind(path)
    if kind == "jsonl":
        return iter_jsonl(path)
    if kind == "json":
        return iter_json(path)
    if kind == "parquet":
        return iter_parquet(path)
    raise DataError(
        "unsupported file type", source=str(path), hint="use .jsonl, .jsonl.gz, .json or .parquet"
    )


def count_file(path: Path) -> int:
    """Row count without normalising: non-blank lines, list length, or Parquet metadata."""
    kind = file_kind(path)
    if kind == "parquet":
        return int(_parquet_file(path).metadata.num_rows)
    if kind == "json":
        return len(_json_rows(path))
    return sum(1 for _ in jsonl_lines(path))


def hash_file(path: Path) -> str:
    """sha256 of the file's bytes."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    return digest.hexdigest()
