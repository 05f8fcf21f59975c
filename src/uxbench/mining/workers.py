"""Where the local mining engine's worker processes come from: a fork server that imported the stage modules once.

``forkserver`` where the platform has it, else ``spawn``; never ``fork``, since the driver may hold threads (an HTTP
client, say) that ``fork`` would copy half-way. The fork server imports `WORKER_MODULES` once and every worker
forked from it starts with them, where ``spawn`` had each worker import them again (about a second of CPU each).

This module imports nothing heavy, so that `start_early` can start the fork server before the driver itself
imports the pipeline: the two imports then overlap instead of the first batch waiting for both.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.context
import os

WORKER_MODULES = ("uxbench.mining.preload_start", "uxbench.mining.pipeline.engine",
                  "uxbench.mining.pipeline.driver_stages", "pandas", "pyarrow.pandas_compat")
"""What a worker runs: the stage functions and everything they import. pyarrow imports pandas, when it is
installed, on a process's first conversion (about 0.3 s of CPU): done once in the fork server, not in each
worker. A module that is not installed is skipped (the fork server ignores an ImportError)."""


WORKER_GC_YOUNG = 100_000
"""Net allocations between two collections of a worker's youngest generation (CPython's default: 700; the command
line's own process: 20,000, `uxbench.cli.main.GC_YOUNG`). A batch keeps ~1,000 sessions, their turns and their
signals alive while it is worked on, and collections go over them again and again. Over the pool, time in the
collector per worker (`gc.callbacks`): 0.49-0.50 CPU s at CPython's defaults, 0.25 at 20,000 with the loaded
modules frozen, 0.08 at 100,000, 0.04-0.05 with the fork server loading them with the collector off
(`preload_start`) (of ~8.7 CPU s each)."""


def tune_gc() -> None:
    """Each worker's first act (the pool's initializer): what the fork server loaded (the stage modules, their
    compiled patterns and automata) stays for the worker's life, so the collector leaves it alone (`gc.freeze`),
    and the young generation is collected less often (`WORKER_GC_YOUNG`). Cyclic garbage is still collected.
    Collection is on again afterwards, also where the fork server had it off (`preload_start`)."""
    gc.freeze()
    young, *older = gc.get_threshold()
    if young:  # 0: automatic collection is off by the threshold; leave it so
        gc.set_threshold(max(young, WORKER_GC_YOUNG), *older)
    gc.enable()  # off in the fork server while it loaded the stage modules (`preload_start`)


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def worker_context() -> multiprocessing.context.BaseContext:
    """The fork server's context with `WORKER_MODULES` preloaded, or ``spawn`` where there is no fork server."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(WORKER_MODULES))
    return context


def start_early(workers: int) -> None:
    """Start the fork server now, when a run will use a pool of ``workers`` processes: it imports the stage modules
    while the driver does its own start-up. Nothing happens for one worker (in-line work) or without a fork
    server; starting it again is a no-op."""
    if workers > 1 and "forkserver" in multiprocessing.get_all_start_methods():
        worker_context()
        from multiprocessing import forkserver

        forkserver.ensure_running()
