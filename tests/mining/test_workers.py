"""The local engine's workers come from one fork server, started early, that imported the stage modules once."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

import pytest

from uxbench.mining.workers import WORKER_MODULES

pytestmark = pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(),
                                reason="no fork server on this platform (the engine spawns its workers)")

SCRIPT = """
import json, os
from multiprocessing import forkserver
from uxbench.mining import workers
workers.start_early({workers})
server = forkserver._forkserver
started = server._forkserver_pid
parents = []
if {workers} > 1:
    from uxbench.mining.pipeline.engine import LocalEngine
    engine = LocalEngine({workers})
    parents = list(engine.map_ordered([(os.getppid,)] * 4))
    engine.close()
print(json.dumps({{"started": started, "server": server._forkserver_pid, "parents": parents,
                  "preload": server._preload_modules, "driver": os.getpid()}}))
"""


def _run(workers: int) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(workers=workers)], capture_output=True, text=True,
                          check=True, timeout=120)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_pool_starts_the_fork_server_early_and_its_workers_are_forked_from_it() -> None:
    found = _run(2)
    assert found["started"] is not None  # running before the engine asked for a worker
    assert found["server"] == found["started"]  # the engine used that server, not a second one
    assert found["parents"] == [found["server"]] * 4  # each job ran in a worker forked by it (spawn: the driver)
    assert found["preload"] == list(WORKER_MODULES)


def test_one_worker_starts_no_fork_server() -> None:
    found = _run(1)
    assert found["started"] is None and found["server"] is None
