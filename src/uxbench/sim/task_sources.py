"""`--tasks SOURCE:SELECTOR`: which tool tasks a run simulates, and the process's one task source per name.

`tau2:airline`, `tau2:retail:test` (a split), `tau2:mock:create_task_1,update_task_1` (task ids). The source's
adapter is imported only here, lazily, so nothing else in the package knows a third-party benchmark exists.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cache

from uxbench.errors import ConfigError
from uxbench.sim.task_compile import compile_persona
from uxbench.sim.tooltask import TaskSource, ToolTask

SOURCES = ("tau2",)


@cache
def task_source(name: str) -> TaskSource:
    """The process's source `name` (built once: it reads the benchmark's domains)."""
    if name == "tau2":
        from uxbench.sim.tau2_adapter import Tau2Source

        return Tau2Source()
    close = difflib.get_close_matches(name, SOURCES, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise ConfigError(f"--tasks: unknown task source '{name}'.{hint} Sources: {', '.join(SOURCES)} "
                      "(for example --tasks tau2:airline).")


@dataclass
class SelectedTasks:
    tasks: list[ToolTask] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(task id, why it was left out)."""
    versions: dict[str, str] = field(default_factory=dict)


def select_tasks(selectors: list[str]) -> SelectedTasks:
    out = SelectedTasks()
    seen: set[str] = set()
    for selector in selectors:
        name, sep, rest = selector.partition(":")
        if not sep or not rest:
            raise ConfigError(f"--tasks {selector}: write SOURCE:DOMAIN, for example tau2:airline, tau2:retail:test "
                              "or tau2:mock:create_task_1,update_task_1.")
        source = task_source(name)
        out.versions[name] = source.version
        for task in source.load(rest):
            if task.id not in seen:
                seen.add(task.id)
                out.tasks.append(task)
        skipped = getattr(source, "skipped", None)
        if skipped is not None:
            out.skipped += [(f"{name}:{rest.partition(':')[0]}/{tid}", why) for tid, why in skipped(rest)
                            if (f"{name}:{rest.partition(':')[0]}/{tid}", why) not in out.skipped]
    if not out.tasks:
        why = "; ".join(f"{tid}: {reason}" for tid, reason in out.skipped[:3])
        raise ConfigError(f"--tasks {' '.join(selectors)} selects no task that can run" + (f" ({why})" if why else
                                                                                          "."))
    return out


def compiled_personas(tasks: list[ToolTask]) -> list[tuple[ToolTask, object]]:
    """(task, its compiled persona) for each task."""
    return [(task, compile_persona(task)) for task in tasks]
