"""Where the local mining engine's worker processes come from: a fork server that imported the stage modules once.

``forkserver`` where the platform has it, else ``spawn``; never ``fork``, since the driver may hold threads (an HTTP
client, say) that ``fork`` would copy half-way. The fork server imports `WORKER_MODULES` once and every worker
forked from it starts with them, where ``spawn`` had each worker import them again (about a second of CPU each).

This module imports nothing heavy, so that `start_early` can start the fork server before the driver itself
imports the pipeline: the two imports then overlap instead of the first batch waiting for both.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os

WORKER_MODULES = ("uxbench.mining.pipeline.engine", "uxbench.mining.pipeline.driver_stages",
                  "pandas", "pyarrow.pandas_compat")
"""What a worker runs: the stage functions and everything they import. pyarrow imports pandas, when it is
installed, on a process's first conversion (about 0.3 s of CPU): done once in the fork server, not in each
worker. A module that is not installed is skipped (the fork server ignores an ImportError)."""


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
