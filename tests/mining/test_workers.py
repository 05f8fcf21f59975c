"""The local engine's workers come from one fork server, started early, that imported the stage modules once."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.parametrize(("words", "expected"), [
    (["mine", "run", "log.jsonl"], "all"),
    (["mine", "run", "log.jsonl", "--workers", "3"], 3),
    (["mine", "run", "--workers=4", "log.jsonl"], 4),
    (["mine", "run", "log.jsonl", "--engine", "local", "--workers", "2"], 2),
    (["mine", "run", "log.jsonl", "--engine", "ray"], None),
    (["mine", "run", "log.jsonl", "--engine=ray"], None),
    (["mine", "run", "--help"], None),
    (["mine", "run", "log.jsonl", "-h"], None),
    (["mine", "run", "log.jsonl", "--workers", "many"], None),  # the parser reports it; nothing starts
    (["mine", "run", "log.jsonl", "--workers"], None),
    (["mine", "audit", "out"], None),
    (["run", "--task", "judge"], None),
    ([], None),
])
def test_the_command_line_starts_the_fork_server_only_for_a_local_mining_run(
    monkeypatch: pytest.MonkeyPatch, words: list[str], expected: int | str | None,
) -> None:
    from uxbench.mining import workers

    started: list[int] = []
    monkeypatch.setattr(workers, "start_early", started.append)
    workers.start_for_command(words)
    if expected is None:
        assert started == []
    else:
        assert started == [workers.default_workers() if expected == "all" else expected]


def test_the_driver_does_not_load_the_detectors_the_workers_run() -> None:
    """The driver imports the stage modules (to name the stage functions) but never runs the signal rules or the
    de-identification rules: building their patterns there (~0.15-0.25 s of CPU) would only delay its first batch.
    The fork server loads them for the workers (`WORKER_MODULES`)."""
    probe = ("import sys, uxbench.mining.pipeline, uxbench.mining.pipeline.engine; "
             "print(sorted(m for m in ('uxbench.mining.signals.detect', 'uxbench.mining.signals.followup', "
             "'uxbench.mining.deid_rules', 'uxbench.mining.deid_names') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"
    assert {"uxbench.mining.signals.detect", "uxbench.mining.deid_rules"} <= set(WORKER_MODULES)


def test_a_mining_run_from_the_command_line_starts_its_fork_server_before_the_parse(tmp_path: Path) -> None:
    """`uxbench mine run` (through `cli.main.main`) starts the fork server before the command's module is even
    imported, and the run goes on with it."""
    log = tmp_path / "log.jsonl"
    rows = [{"conversation_id": f"c{i // 2}", "turn_index": i % 2, "role": "user" if i % 2 == 0 else "assistant",
             "content": f"message {i}"} for i in range(40)]
    log.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    probe = f"""
import json, sys
from uxbench.mining import workers
seen = []
original = workers.start_early
def start_early(n):
    seen.append({{"workers": n, "parsed": "uxbench.cli.mine_cmd" in sys.modules}})
    original(n)
workers.start_early = start_early
sys.argv = ["uxbench", "mine", "run", {str(log)!r}, "--out", {str(tmp_path / "out")!r}, "--no-llm", "--quiet",
            "--workers", "2"]
from uxbench.cli.main import main
try:
    main()
finally:
    print(json.dumps(seen))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen[0] == {"workers": 2, "parsed": False}  # then again from the command itself: a no-op
    assert (tmp_path / "out" / "signals.parquet").exists()


def test_workers_of_the_console_script_find_the_command_line_loaded(tmp_path: Path) -> None:
    """The `uxbench` console script is a file that multiprocessing runs again in each worker: its import of the
    command line is made once, in the fork server, and not by each worker (`python -m uxbench` is a module, which
    workers skip, and a plain script that does not load the command line preloads only the stage modules)."""
    script = tmp_path / "uxbench_script.py"
    script.write_text(
        "import sys\n"
        "PRELOADED = 'uxbench.cli.main' in sys.modules  # in a worker: before this script's own imports run\n"
        "import json\n"
        "if sys.argv[1] == 'cli':\n"
        "    from uxbench.cli.main import main  # as the console script does\n"
        "from multiprocessing import forkserver\n"
        "from uxbench.mining import workers\n"
        "def preloaded():\n"
        "    return PRELOADED\n"
        "if __name__ == '__main__':\n"
        "    workers.start_early(2)\n"
        "    from uxbench.mining.pipeline.engine import LocalEngine\n"
        "    engine = LocalEngine(2)\n"
        "    loaded = list(engine.map_ordered([(preloaded,)] * 2))\n"
        "    engine.close()\n"
        "    print(json.dumps({'preload': forkserver._forkserver._preload_modules, 'loaded': loaded}))\n",
        encoding="utf-8")
    for mode, extra in (("cli", ["uxbench.cli.main"]), ("plain", [])):
        done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, check=True,
                              timeout=120)
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found["preload"] == [*WORKER_MODULES, *extra]
        assert found["loaded"] == [bool(extra)] * 2
