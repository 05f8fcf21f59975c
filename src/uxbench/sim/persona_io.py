"""Reading and writing persona files: YAML (one persona, a list of them, or several `---` documents) and JSON
Lines (one persona per line), or a directory of such files.

Every error names the file, the line and the field (`goal[1].check.pattern`), and for an unknown field the
nearest known one. `check_personas` collects every error of every file (`uxbench personas validate`);
`load_personas` stops at the first and says how many more files were not read.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import yaml
from pydantic import BaseModel, ValidationError

from uxbench.data import user_files
from uxbench.errors import DataError
from uxbench.sim.persona import Persona

YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
PERSONA_SUFFIXES = YAML_SUFFIXES + JSONL_SUFFIXES
DEMO = "demo"
"""`--personas demo`: the bundled demo set (written by this project)."""


@dataclass(frozen=True)
class LoadedPersona:
    """A persona and where it was read."""

    persona: Persona
    source: str
    line: int | None

    @property
    def where(self) -> str:
        return f"{self.source}, line {self.line}" if self.line is not None else self.source


def demo_dir() -> Path:
    """The bundled demo personas (24: 12 zh, 12 en)."""
    return Path(str(resources.files("uxbench.sim") / "personas"))


def persona_files(paths: Iterable[str | Path]) -> list[Path]:
    """The persona files named, and those under any directory named (sorted, hidden ones skipped)."""
    out: list[Path] = []
    for raw in paths:
        if str(raw) == DEMO:
            out.extend(persona_files([demo_dir()]))
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in PERSONA_SUFFIXES
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not found:
                raise DataError("holds no persona files", source=str(path),
                                hint=f"expected {' / '.join(PERSONA_SUFFIXES)} files")
            out.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in PERSONA_SUFFIXES:
                raise DataError("is not a persona file", source=str(path),
                                hint="personas are .yaml / .yml (one or several) or .jsonl (one per line)")
            out.append(path)
        else:
            raise DataError("no such file or directory", source=str(path))
    return out


def load_personas(paths: Iterable[str | Path]) -> list[LoadedPersona]:
    """Every persona of the files (and directories) named; the first error stops with its place. Persona ids
    must be unique across the files; nothing read is an error."""
    files = persona_files(paths)
    loaded: list[LoadedPersona] = []
    for path in files:
        for item in _read_file(path):
            if isinstance(item, DataError):
                raise item
            loaded.append(item)
    errors = _duplicates(loaded)
    if errors:
        raise errors[0]
    if not loaded:
        raise DataError("holds no persona", source=", ".join(str(p) for p in files),
                        hint="a persona file needs at least one persona mapping (see docs/PERSONAS.md)")
    return loaded


def check_personas(paths: Iterable[str | Path]) -> tuple[list[LoadedPersona], list[DataError]]:
    """Every persona read and every error found (`uxbench personas validate`): all files are read to the end."""
    loaded: list[LoadedPersona] = []
    errors: list[DataError] = []
    for path in persona_files(paths):
        for item in _read_file(path):
            if isinstance(item, DataError):
                errors.append(item)
            else:
                loaded.append(item)
    errors.extend(_duplicates(loaded))
    return loaded, errors


def _duplicates(loaded: Sequence[LoadedPersona]) -> list[DataError]:
    first: dict[str, LoadedPersona] = {}
    errors = []
    for item in loaded:
        earlier = first.setdefault(item.persona.id, item)
        if earlier is not item:
            errors.append(DataError(f"persona id '{item.persona.id}' is also used at {earlier.where}",
                                    source=item.source, line=item.line, field="id",
                                    hint="persona ids must be unique across the files of a run"))
    return errors


def _read_file(path: Path) -> Iterator[LoadedPersona | DataError]:
    yaml_file = path.suffix.lower() not in JSONL_SUFFIXES
    try:
        text = user_files.read_text(path, limits=user_files.YAML_LIMITS if yaml_file else user_files.DEFAULT)
    except DataError as err:
        yield err
        return
    if yaml_file:
        yield from _read_yaml(path, text)
    else:
        yield from _read_jsonl(path, text)


def _read_jsonl(path: Path, text: str) -> Iterator[LoadedPersona | DataError]:
    # lines end at "\n" only: `splitlines` would also cut at U+2028, \x0b, \x1c ... inside a JSON string (real user
    # text holds them, and JSON writers leave them unescaped)
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = user_files.parse_json(line, str(path), line=number)
        except DataError as err:
            yield err
            continue
        yield _validate(row, str(path), number, lambda _loc, n=number: n)


def _read_yaml(path: Path, text: str) -> Iterator[LoadedPersona | DataError]:
    try:
        documents = user_files.parse_yaml_documents(text, str(path))
    except DataError as err:
        yield err
        return
    for node, value in documents:
        if value is None:
            continue
        if isinstance(value, dict) and set(value) == {"personas"}:
            node, value = _child(node, "personas") or node, value["personas"]
        if isinstance(value, list):
            items = node.value if isinstance(node, yaml.SequenceNode) else [node] * len(value)
            for child, row in zip(items, value, strict=False):
                yield _validate(row, str(path), child.start_mark.line + 1, _line_finder(child))
        else:
            yield _validate(value, str(path), node.start_mark.line + 1, _line_finder(node))


def _child(node: yaml.Node, key: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key:
                return v
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key]
    return None


def _key_node(node: yaml.Node, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, _v in node.value:
            if k.value == key:
                return k
    return None


def _line_finder(root: yaml.Node) -> Any:
    def find(loc: tuple[Any, ...]) -> int:
        node, line = root, int(root.start_mark.line) + 1
        for i, part in enumerate(loc):
            nxt = _child(node, part)
            if nxt is None:
                key = _key_node(node, str(part)) if i == len(loc) - 1 else None
                return int(key.start_mark.line) + 1 if key is not None else line
            node, line = nxt, int(nxt.start_mark.line) + 1
        return line

    return find


def _validate(row: Any, source: str, line: int, line_of: Any) -> LoadedPersona | DataError:
    if not isinstance(row, dict):
        return DataError(f"a persona must be a mapping of fields, got {type(row).__name__}", source=source, line=line)
    try:
        persona = Persona.model_validate(row)
    except ValidationError as err:
        first = err.errors()[0]
        loc = tuple(first["loc"])
        more = len(err.errors()) - 1
        hint = f"{more} more error{'s' if more > 1 else ''} in this persona" if more else None
        return DataError(_message(first, loc), source=source, line=line_of(loc), field=field_path(loc) or None,
                         hint=hint)
    try:  # what `personas list` and a run do with it: a persona that cannot be hashed is refused here too
        persona.content_hash()
    except (TypeError, ValueError, orjson.JSONEncodeError) as err:
        return DataError(f"cannot be written as JSON: {err}", source=source, line=line,
                         hint="`meta` takes text, numbers, true/false, null, lists and mappings with text keys")
    return LoadedPersona(persona, source, line)


def field_path(loc: Sequence[Any]) -> str:
    """('goal', 1, 'check', 'pattern') -> 'goal[1].check.pattern'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(error: Any, loc: tuple[Any, ...]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        known = _fields_at(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f"; known fields here: {', '.join(known)}"
        return f"unknown field{hint}"
    if kind == "missing":
        return "is required"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """The field names the model at `loc` accepts (for "did you mean")."""
    model: Any = Persona
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return []
        model = _model_in(field.annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(model.model_fields)
    return []


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def personas_jsonl(personas: Iterable[Persona]) -> Iterator[bytes]:
    """One JSON line per persona (for `atomic_write_lines`)."""
    for persona in personas:
        yield orjson.dumps(_dump(persona))


def persona_yaml(persona: Persona) -> str:
    """A persona as a YAML document (defaults left out)."""
    return str(yaml.safe_dump(_dump(persona), allow_unicode=True, sort_keys=False, width=100))


def _dump(persona: Persona) -> dict[str, Any]:
    """The persona's fields without defaults, `schema_version` always first (a reader checks it)."""
    data = persona.model_dump(mode="json", exclude_defaults=True)
    return {"schema_version": persona.schema_version, **data}
