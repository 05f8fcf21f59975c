"""Model metadata (organisation, family, release date, size) from an editable table: the bundled `models.yaml`,
extended or overridden by `$UXBENCH_MODELS` and an explicit file. Leaderboards show it as columns, bias
analyses mark a judge's own family, and scaling trends correlate release date or size with a metric.

Matching rules are documented at the top of `models.yaml`.
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import os
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from uxbench.data import user_files
from uxbench.errors import ConfigError, DataError

_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it; our own files

SizeClass = Literal["tiny", "small", "medium", "large"]
SIZE_ORDER: dict[str, int] = {"tiny": 0, "small": 1, "medium": 2, "large": 3}
ENV_VAR = "UXBENCH_MODELS"
_SEPARATORS_RE = re.compile(r"[\s_:@]+")
_VERSION_DOT_RE = re.compile(r"(?<=\d)\.(?=\d)")
_DATE_SUFFIX_RE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")


class ModelInfo(BaseModel):
    """One entry of the table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    org: str | None = None
    """Who made the model."""
    family: str | None = None
    """Model family (GPT, Claude, Gemini, Qwen, ...)."""
    released: dt.date | None = None
    """First public release (a YYYY-MM entry is read as the first of the month)."""
    size: SizeClass | None = None
    """tiny | small | medium | large (see models.yaml)."""
    params_b: float | None = None
    """Parameters in billions, when published."""
    key: str = ""
    """The table key that matched (filled in by the lookup)."""

    @field_validator("released", mode="before")
    @classmethod
    def _month(cls, value: Any) -> Any:
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, str) and (m := _MONTH_RE.match(value.strip())):
            return dt.date(int(m[1]), int(m[2]), 1)
        return value

    @field_validator("params_b")
    @classmethod
    def _positive(cls, value: float | None) -> float | None:
        if value is not None and value <= 0:
            raise ValueError("must be > 0 (billions of parameters)")
        return value


def normalize_name(name: str) -> str:
    """The form names are compared in: lower case, '-' for '_', ' ', ':' and '@', '-' for a '.' between
    digits, no trailing date."""
    text = _SEPARATORS_RE.sub("-", name.strip().lower())
    text = _VERSION_DOT_RE.sub("-", text)
    return _DATE_SUFFIX_RE.sub("", text)


def _is_pattern(key: str) -> bool:
    return "*" in key or "?" in key


def _parse(data: Any, source: str) -> dict[str, ModelInfo]:
    if data is None:
        return {}
    models = data.get("models", data) if isinstance(data, Mapping) else None
    if not isinstance(models, Mapping):
        raise ConfigError(f"Model table {source} must map model names to {{org, family, released, size, params_b}} "
                          "(under a top-level 'models:' key, or at the top level).")
    out: dict[str, ModelInfo] = {}
    for name, entry in models.items():
        if not isinstance(entry, Mapping):
            raise ConfigError(f"Model table {source}: entry '{name}' must be a mapping such as "
                              "{org: OpenAI, family: GPT, released: 2024-05-13, size: large}.")
        try:
            info = ModelInfo.model_validate({k: v for k, v in entry.items() if k != "key"})
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "entry"
            hint = ""
            if first["type"] == "extra_forbidden":
                close = difflib.get_close_matches(field, [f for f in ModelInfo.model_fields if f != "key"], n=1)
                hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"Model table {source}: entry '{name}', field '{field}': {first['msg']} "
                              f"(got {first.get('input')!r}).{hint}") from None
        out[str(name)] = info.model_copy(update={"key": str(name)})
    return out


class ModelTable:
    """Model name -> `ModelInfo`; see `lookup` for the matching rules."""

    def __init__(self, entries: Mapping[str, ModelInfo] | None = None) -> None:
        self.entries: dict[str, ModelInfo] = dict(entries or {})
        self._exact: dict[str, ModelInfo] = {}
        self._patterns: list[tuple[str, ModelInfo]] = []
        for key, info in self.entries.items():
            if _is_pattern(key):
                self._patterns.append((normalize_name(key), info))
            elif ":" in key:
                self._exact[key.strip().lower()] = info  # a provider-qualified spec, compared whole
            else:
                self._exact[normalize_name(key)] = info

    @classmethod
    def bundled(cls) -> ModelTable:
        text = resources.files("uxbench.data").joinpath("models.yaml").read_text(encoding="utf-8")
        return cls(_parse(yaml.load(text, Loader=_FAST_LOADER), "bundled models.yaml"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ModelTable:
        """Read a YAML (or JSON) table of the bundled file's shape."""
        p = Path(path).expanduser()
        try:
            data = user_files.load_file(p, f"model table {p}")
        except OSError as exc:
            raise ConfigError(f"Cannot read the model table {p}: {exc.strerror or exc}") from None
        except DataError as exc:  # not YAML / JSON, or over the limits of a user's file
            raise ConfigError(str(exc)) from None
        return cls(_parse(data, str(p)))

    @classmethod
    def default(cls, path: str | os.PathLike[str] | None = None) -> ModelTable:
        """The bundled table, then `$UXBENCH_MODELS`, then `path`; later entries win."""
        table = cls.bundled()
        env = os.environ.get(ENV_VAR)
        if env:
            table = table.merged(cls.load(env))
        if path is not None:
            table = table.merged(cls.load(path))
        return table

    def merged(self, other: ModelTable) -> ModelTable:
        return ModelTable({**self.entries, **other.entries})

    def lookup(self, spec: str) -> ModelInfo | None:
        """The entry for a model spec (`provider:model`, or a bare name), or None when none matches.

        Order: a provider-qualified key equal to the spec; then for the model name (and, for a path or
        `org/name`, its last component): the exact key, the longest key that is a prefix followed by '-' and
        a non-digit, then shell-style patterns in table order."""
        spec = spec.strip()
        qualified = self._exact.get(spec.lower())
        if qualified is not None and ":" in spec:
            return qualified
        provider, sep, model = spec.partition(":")
        name = model if sep and provider and "/" not in provider else spec
        candidates = [name]
        tail = name.rstrip("/").rsplit("/", 1)[-1]
        if tail != name:
            candidates.append(tail)
        for candidate in candidates:
            found = self._match(normalize_name(candidate))
            if found is not None:
                return found
        return None

    def _match(self, name: str) -> ModelInfo | None:
        exact = self._exact.get(name)
        if exact is not None:
            return exact
        best: str | None = None
        for key in self._exact:
            if (len(name) > len(key) + 1 and name.startswith(key) and name[len(key)] == "-"
                    and not name[len(key) + 1].isdigit() and (best is None or len(key) > len(best))):
                best = key
        if best is not None:
            return self._exact[best]
        for pattern, info in self._patterns:
            if fnmatch.fnmatchcase(name, pattern):
                return info
        return None
