"""The one reader of the YAML and JSON files a user hands in: persona files, rubric files, price and model tables
(`$UXBENCH_PRICES`, `--models`, `$UXBENCH_MODELS`), scripted and replay files, a signal model, a run's manifest.

A hostile or broken file meets three limits, each refusal naming the file, the limit and the line:

- **size**: the file is measured before it is read (a 10 GB file is refused, not loaded);
- **nesting**: at most `max_depth` levels of lists and mappings, checked on YAML's parser events before anything
  is composed (5,000 nested lists would otherwise exhaust Python's recursion) and, for JSON, by orjson (which
  stops at 1,024 levels) and then by a walk without recursion;
- **aliases**: a YAML alias repeats everything its anchor holds, so ten aliases of ten aliases of ... ("billion
  laughs": 2 KB) stand for a billion values once anything serialises them. Aliases are allowed (merge keys are
  useful in a model table) while the values they repeat, counted in full, stay under `max_alias_nodes`; an alias
  inside its own anchor is refused.

Only YAML's safe types are built (`yaml.SafeLoader`); JSON is strict (no NaN, no lone surrogates)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from uxbench.errors import DataError

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 64 * MiB
    """Largest file read (about 50,000 personas of `personas build`, ~1.2 KB each as JSON Lines)."""
    max_depth: int = 64
    """Levels of lists and mappings (the deepest of the project's own YAML files has 7); orjson writes at most
    255, so a value read here can always be hashed and stored."""
    max_alias_nodes: int = 100_000
    """Values that YAML aliases may repeat in all, each alias counted with everything its anchor holds."""


DEFAULT = Limits()
YAML_LIMITS = Limits(max_bytes=8 * MiB)
"""YAML builds a node tree first (~60x its size in memory at the peak with the pure-Python loader, measured on the
bundled personas): a smaller bound, ~6,000 personas; larger sets are JSON Lines."""
_HINT = "a limit on files uxbench reads, against malformed or hostile files"


def _mib(n: int) -> str:
    return f"{n / MiB:.0f} MiB" if n >= MiB else f"{n:,} bytes"


def check_size(path: Path, source: str, limits: Limits = DEFAULT) -> None:
    """Refuse a file larger than `limits.max_bytes` before reading it."""
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise DataError(f"is {_mib(size)}, more than the {_mib(limits.max_bytes)} uxbench reads in such a file",
                        source=source, hint="split it into several files" if path.suffix.lower() in (
                            ".jsonl", ".ndjson") else _HINT)


def read_bytes(path: str | Path, source: str | None = None, *, limits: Limits = DEFAULT) -> bytes:
    """The bytes of a user's file, refused when larger than the limit."""
    path = Path(path)
    source = source or str(path)
    check_size(path, source, limits)
    return path.read_bytes()


def read_text(path: str | Path, source: str | None = None, *, limits: Limits = DEFAULT) -> str:
    """A user's file as text (UTF-8, a BOM allowed), refused when larger than the limit or not UTF-8."""
    source = source or str(path)
    data = read_bytes(path, source, limits=limits)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise DataError(f"is not UTF-8 text ({err.reason} at byte {err.start})", source=source, line=line,
                        hint="save it as UTF-8") from None


# -- JSON -----------------------------------------------------------------------------------------------------

_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _deep_line(data: bytes, depth: int) -> int | None:
    """The line where the nesting of JSON text first goes past `depth` (strings skipped); error path only."""
    level = 0
    for match in _JSON_TOKEN.finditer(data):
        token = match.group()
        if token in (b"[", b"{"):
            level += 1
            if level > depth:
                return data[: match.start()].count(b"\n") + 1
        elif token in (b"]", b"}"):
            level -= 1
    return None


_LEAVES = frozenset((str, int, float, bool, type(None)))
"""The types of JSON's scalars, exactly (a subclass of dict or list is not among them)."""


def _flat(container: Any) -> bool:
    for item in (container.values() if isinstance(container, dict) else container):
        if isinstance(item, (dict, list)):
            return False
    return True


def depth_exceeds(value: Any, max_depth: int) -> bool:
    """Whether lists and mappings nest deeper than `max_depth` (a walk without recursion; a flat row, the common
    case, is settled by one look at its values)."""
    if type(value) is dict and _LEAVES.issuperset(map(type, value.values())):  # the common row, in two C calls
        return max_depth < 1
    if isinstance(value, dict):
        top: Any = value.values()
    elif isinstance(value, list):
        top = value
    else:
        return False
    if _flat(value):  # the common row: text and numbers only
        return max_depth < 1
    if all(_flat(child) for child in top if isinstance(child, (dict, list))):  # a few flat lists or mappings
        return max_depth < 2
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if level > max_depth:
            return True
        for child in (node.values() if isinstance(node, dict) else node):
            if isinstance(child, (dict, list)):
                stack.append((child, level + 1))
    return False


def _too_deep(source: str, line: int | None, limits: Limits) -> DataError:
    return DataError(f"nests lists or mappings deeper than {limits.max_depth} levels", source=source, line=line,
                     hint=_HINT)


def parse_json(data: str | bytes, source: str, *, line: int | None = None, limits: Limits = DEFAULT) -> Any:
    """One JSON value (a file's text, or one line of a JSON Lines file: `line` is its number); DataError when it
    is not valid JSON or nests deeper than the limit."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        if "depth limit" in str(err) or "recursion" in str(err).lower():
            found = _deep_line(raw, limits.max_depth)
            raise _too_deep(source, line if line is not None else found, limits) from None
        where = line if line is not None else (err.lineno if err.lineno else None)
        raise DataError(f"is not valid JSON: {err.msg}" + (f" (column {err.colno})" if err.colno else ""),
                        source=source, line=where) from None
    if depth_exceeds(value, limits.max_depth):
        raise _too_deep(source, line if line is not None else _deep_line(raw, limits.max_depth), limits)
    return value


# -- YAML -----------------------------------------------------------------------------------------------------

_FAST = bool(getattr(yaml, "__with_libyaml__", False))
_Loader: Any = yaml.CSafeLoader if _FAST else yaml.SafeLoader
"""libyaml's safe loader where PyYAML was built with it (a 200 KB persona file, checks included, loads 8-9x faster
than the two pure-Python passes persona files took before), else the pure-Python one: the same safe types."""
_LIBYAML_DEPTH = "exceeded maximum nesting depth"


def _check_events(text: str, source: str, limits: Limits) -> None:
    """A pass over the parser's events (no node is built, no recursion) that refuses nesting past the limit and
    aliases that repeat too much: each alias counts every value of its anchor, so the count is what serialising
    the loaded value would produce. Only then is the text composed and constructed."""
    depth = expanded = 0
    open_sizes: list[list[Any]] = []  # [values so far, anchor] of each collection not yet closed
    sizes: dict[str, int] = {}  # anchor -> the values it holds, counted in full
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > limits.max_depth:
                raise _too_deep(source, event.start_mark.line + 1, limits)
            open_sizes.append([1, event.anchor])
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
            size, anchor = open_sizes.pop()
        elif isinstance(event, yaml.ScalarEvent):
            size, anchor = 1, event.anchor
        elif isinstance(event, yaml.AliasEvent):
            anchor, size = None, sizes.get(event.anchor)
            if size is None:
                if any(a == event.anchor for _, a in open_sizes):
                    raise DataError(f"the alias *{event.anchor} is inside its own anchor (an endless value)",
                                    source=source, line=event.start_mark.line + 1)
                continue  # an undefined alias: the composer names it
            expanded += size
            if expanded > limits.max_alias_nodes:
                raise DataError(f"its aliases repeat more than {limits.max_alias_nodes:,} values (each alias stands "
                                f"for everything its anchor holds; *{event.anchor} alone holds {size:,})",
                                source=source, line=event.start_mark.line + 1,
                                hint="write the values out, or use fewer aliases")
        elif isinstance(event, yaml.DocumentEndEvent):
            sizes.clear()  # anchors are per document
            continue
        else:
            continue
        if anchor:
            sizes[anchor] = size
        if open_sizes:
            open_sizes[-1][0] += size


def _yaml_error(err: yaml.YAMLError, source: str) -> DataError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    return DataError(f"is not valid YAML: {problem}", source=source,
                     line=mark.line + 1 if mark is not None else None)


def parse_yaml_documents(text: str, source: str, *, limits: Limits = YAML_LIMITS) -> list[tuple[yaml.Node, Any]]:
    """Every document of YAML text: (its node, for line numbers; its value). Empty documents are left out."""
    out: list[tuple[yaml.Node, Any]] = []
    try:
        _check_events(text, source, limits)
        loader = _Loader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    out.append((node, loader.construct_document(node)))
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        if _LIBYAML_DEPTH in str(err):  # libyaml stops at 1,000 levels on its own
            mark = getattr(err, "problem_mark", None)
            raise _too_deep(source, mark.line + 1 if mark is not None else None, limits) from None
        raise _yaml_error(err, source) from None
    except (ValueError, OverflowError) as err:  # a value YAML reads but Python cannot hold (an int of 5,000 digits)
        raise DataError(f"holds a value that cannot be read: {err}", source=source) from None
    return out


def parse_yaml(text: str, source: str, *, limits: Limits = YAML_LIMITS) -> Any:
    """The one document of YAML (or JSON) text; None for an empty one."""
    documents = parse_yaml_documents(text, source, limits=limits)
    if len(documents) > 1:
        raise DataError("holds several YAML documents (---); one was expected", source=source,
                        line=documents[1][0].start_mark.line + 1)
    return documents[0][1] if documents else None


def load_file(path: str | Path, source: str | None = None) -> Any:
    """A user's YAML or JSON file (by its suffix: .json is JSON, anything else YAML), with the limits."""
    path = Path(path)
    source = source or str(path)
    if path.suffix.lower() == ".json":
        return parse_json(read_bytes(path, source), source)
    return parse_yaml(read_text(path, source, limits=YAML_LIMITS), source)


def read_json_object(path: Path, *, fix: str) -> dict[str, Any] | None:
    """A JSON object file of a directory a user hands in (a run's manifest or summary), None when there is none;
    a damaged one (cut short, not JSON, over the limits) is a DataError that ends with `fix`."""
    if not path.is_file():
        return None
    try:
        data = parse_json(read_bytes(path), str(path))
    except DataError as err:
        said = f"it {err.reason}" if err.reason.startswith("is ") else err.reason
        raise DataError(f"is damaged: {said}", source=str(path), line=err.line, hint=fix) from None
    if not isinstance(data, dict):
        raise DataError(f"should hold a JSON object, not {type(data).__name__}", source=str(path), hint=fix)
    return data
