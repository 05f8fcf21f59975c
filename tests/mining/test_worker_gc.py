"""The mining workers' garbage collector: on, collecting cycles, the fork server's loaded modules left alone."""

from __future__ import annotations

import gc
import subprocess
import sys

from uxbench.mining.pipeline.engine import LocalEngine
from uxbench.mining.workers import WORKER_GC_YOUNG


class _Node:
    other: _Node


def _probe() -> tuple[bool, tuple[int, int, int], int, int]:
    for _ in range(3 * WORKER_GC_YOUNG):
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # unreachable cycles: only the collector frees them
    nodes = sum(isinstance(o, _Node) for o in gc.get_objects())
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), nodes


def test_a_worker_collects_cycles_with_the_fork_servers_modules_frozen() -> None:
    pool = LocalEngine(2)
    try:
        results = list(pool.map_ordered([(_probe,), (_probe,)]))
    finally:
        pool.close()
    for enabled, threshold, frozen, nodes_left in results:
        assert enabled  # the fork server loaded the modules with collection off (preload_start): on again
        assert threshold[0] == WORKER_GC_YOUNG
        assert frozen > 10_000  # the stage modules' objects, loaded by the fork server
        assert nodes_left < 2 * WORKER_GC_YOUNG  # the cycles were collected as the worker went


def test_only_the_fork_server_loads_with_collection_off() -> None:
    # the driver imports the same stage modules: none of them may pull in preload_start and leave the collector off
    code = ("import gc, sys, uxbench.mining.pipeline.run, uxbench.mining.pipeline.driver_stages; "
            "print(gc.isenabled(), 'uxbench.mining.preload_start' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]
