"""Tasks by name."""

from __future__ import annotations

from typing import Any

from uxbench.errors import ConfigError
from uxbench.tasks.base import Task

TASK_NAMES = ("judge", "eval", "recovery")


def create_task(name: str, options: dict[str, Any] | None = None) -> Task:
    """Build a task from its name and options (the CLI's --formulation, --strategy, --lang, ...)."""
    opts = {k: v for k, v in (options or {}).items() if v is not None}
    if name == "judge":
        from pydantic import ValidationError

        from uxbench.tasks.judge.options import JudgeOptions
        from uxbench.tasks.judge.task import JudgeTask

        try:
            return JudgeTask(JudgeOptions(**opts))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"Invalid judge option '{field}': {first['msg']}") from exc
    if name in ("eval", "recovery"):
        raise ConfigError(
            f"Task '{name}' is not available yet: Task 2 (eval) and Task 3 (recovery) need the reward-model "
            "scoring layer, which lands in the next release. The data loaders already read their files "
            "(`uxbench data validate`)."
        )
    raise ConfigError(f"Unknown task '{name}'. Tasks: {', '.join(TASK_NAMES)}.")
