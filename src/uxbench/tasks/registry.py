"""Tasks by name: one registry entry per task, imported only when the task is asked for."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from uxbench.errors import ConfigError
from uxbench.tasks.base import Task

T = TypeVar("T", bound=type[Task])


@dataclass(frozen=True)
class TaskEntry:
    """How to build one task from user options."""

    name: str
    title: str
    """Human name, e.g. "Task 1, UX Judge"."""
    options: type[BaseModel]
    """The pydantic model of the task's options (extra fields forbidden)."""
    factory: Callable[[Any], Task]
    """Builds the task from a validated options object."""


# name -> module that defines (and registers) the task
_TASK_MODULES: dict[str, str] = {
    "judge": "uxbench.tasks.judge.task",
    "eval": "uxbench.tasks.eval.task",
    "recovery": "uxbench.tasks.recovery.task",
}
TASK_NAMES = tuple(_TASK_MODULES)
_REGISTRY: dict[str, TaskEntry] = {}


def register_task(name: str, title: str, options: type[BaseModel]) -> Callable[[T], T]:
    """Class decorator: make a Task subclass available by `name`, built from `options`."""

    def deco(cls: T) -> T:
        _REGISTRY[name] = TaskEntry(name=name, title=title, options=options, factory=cls)
        return cls

    return deco


def get_task_entry(name: str) -> TaskEntry:
    if name not in _REGISTRY:
        module = _TASK_MODULES.get(name)
        if module is None:
            close = difflib.get_close_matches(name, TASK_NAMES, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"Unknown task '{name}'. Tasks: {', '.join(TASK_NAMES)}.{hint}")
        importlib.import_module(module)
    return _REGISTRY[name]


def create_task(name: str, options: dict[str, Any] | None = None) -> Task:
    """Build a task from its name and options (the CLI's --formulation, --strategy, --lang, ...).

    None values mean "not given" and leave the option's default.
    """
    entry = get_task_entry(name)
    opts = {k: v for k, v in (options or {}).items() if v is not None}
    try:
        validated = entry.options.model_validate(opts)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "options"
        raise ConfigError(f"Invalid {name} option '{field}': {first['msg']}") from None
    return entry.factory(validated)
