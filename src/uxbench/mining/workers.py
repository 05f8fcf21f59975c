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
import sys

WORKER_MODULES = ("uxbench.mining.preload_start", "uxbench.mining.pipeline.engine",
                  "uxbench.mining.pipeline.driver_stages", "uxbench.mining.signals.detect",
                  "uxbench.mining.deid_rules", "pandas", "pyarrow.pandas_compat")
"""What a worker runs: the stage functions and everything they import, the signal detectors and the
de-identification rules included (the stage modules import those at their first use, so that the driver, which
imports the stage modules too, does not build their patterns). pyarrow imports pandas, when it is
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
    context.set_forkserver_preload([*WORKER_MODULES, *_main_imports()])
    return context


def _main_imports() -> list[str]:
    """What each worker would import again when it runs the driver's main script: the `uxbench` console script
    is a file, which multiprocessing runs in every worker (as ``__mp_main__``) before its first job, and its one
    import, the command line (typer and ~120 modules, ~0.05 s of CPU), would be made once per worker. Made in the
    fork server instead, each worker finds it loaded. ``python -m uxbench`` is a module, which workers skip."""
    main = sys.modules.get("__main__")
    script = main is not None and getattr(main, "__spec__", None) is None and getattr(main, "__file__", None)
    return ["uxbench.cli.main"] if script and "uxbench.cli.main" in sys.modules else []


def start_for_command(words: list[str]) -> None:
    """Start the fork server for ``uxbench mine run`` before the command line is even parsed (``words``: what
    follows ``uxbench``): the driver's parse and imports (~0.3 s) then overlap the fork server's (~0.5 s of
    CPU), and the first batch no longer waits for their sum. Only what the words plainly say is read here:
    nothing starts for help, for ``--engine ray``, for one worker, or for a ``--workers`` value that is not a
    number (the parser reports it). A guess that turns out wrong (the command stops on bad input) costs one idle
    fork server, ended with the process."""
    if words[:2] != ["mine", "run"] or {"-h", "--help"} & set(words):
        return
    options: dict[str, str] = {}
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in ("--engine", "--workers"):
            options[name] = value if eq else (words[i + 1] if i + 1 < len(words) else "")
    if options.get("--engine", "local") != "local":
        return
    workers = options.get("--workers")
    if workers is not None and not workers.isdigit():
        return
    start_early(int(workers) if workers is not None else default_workers())


def start_early(workers: int) -> None:
    """Start the fork server now, when a run will use a pool of ``workers`` processes: it imports the stage modules
    while the driver does its own start-up. Nothing happens for one worker (in-line work) or without a fork
    server; starting it again is a no-op."""
    if workers > 1 and "forkserver" in multiprocessing.get_all_start_methods():
        worker_context()
        from multiprocessing import forkserver

        forkserver.ensure_running()
