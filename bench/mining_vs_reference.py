"""Mining speed against the reference implementation's signal stage: both on the same turns, in one run.

    python bench/mining_vs_reference.py --reference ~/src/UXBench     # your own checkout of the reference
    python bench/mining_vs_reference.py --reference ~/src/UXBench --log POOL --rounds 3 --workers 2
    python bench/mining_vs_reference.py --reference ~/src/UXBench --baseline /tmp/uxbench-before/src  # + older code

The reference implementation (the UXBench authors' repository, research-only license; not part of this
project and not copied into it) computes its behavioural signals in one function, ``enrich_dialogue(history)``
(its ``signals.py``). This script loads that one file from the checkout you name and calls only that function.

Before the rounds, the uxbench packages measured are compiled to bytecode, as an installed copy is (``--no-compile``
measures them as they are; see `byte_compile`). Each round runs, one after the other, each in a fresh child process:

1. **reference**: the log is read and turned into the reference's ``history`` lists (not timed), then
   ``enrich_dialogue`` is called once per conversation; timed: those calls alone (wall and CPU seconds), the
   most favourable measure of the reference (no reading, no writing, no start-up).
2. **uxbench**: ``python -m uxbench mine run LOG --out TMP --no-llm`` from start to exit: the whole
   process (start-up, reading, grouping, de-identification, gate, prefilter, signals, dedup, every output
   file), timed by wall clock, with the CPU seconds of the whole process tree (`TreeCpu`).

With ``--baseline SRC`` (the ``src`` directory of a checkout of earlier uxbench code), each round also runs
step 2 with that code (``PYTHONPATH=SRC``), right after the current code: the change between them, side by side.

Both rates are in turns per second over the same turns (every turn of the log). Printed: each round's rates and
their ratio with the load average before it, the ratio of CPU seconds (the reference's over uxbench's whole
process tree: what the two cost, less moved by other work on a loaded machine than the wall clock), and the
median ratios. The machine's load moves both sides:
compare the ratio, not the rates, and read the load average. Default log: the real ShareGPT development pool
(`UXBENCH_SIGNALS_POOL`, ``../shared/data/signals_dev/build_log.py --pool``; 92,489 turns).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psutil

DEFAULT_POOL = os.environ.get("UXBENCH_SIGNALS_POOL", "~/.cache/uxbench/signals_dev/pool.jsonl")


def reference_signals_file(path: Path) -> Path:
    """The reference's signals.py: the file named, or the one under a checkout that defines enrich_dialogue."""
    if path.is_file():
        return path
    for candidate in sorted(path.rglob("signals.py")):
        if "def enrich_dialogue" in candidate.read_text(encoding="utf-8", errors="replace"):
            return candidate
    sys.exit(f"error: no signals.py defining enrich_dialogue under {path}: pass the reference checkout's root "
             "or the file itself")


def histories(log: Path) -> tuple[list[list[dict[str, Any]]], int]:
    """The log's conversations as the reference's ``history`` lists (role, turn_index, message, create_time,
    is_unliked), in turn order, and the number of turns."""
    conversations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    turns = 0
    with log.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            turns += 1
            created = str(row.get("created_at") or "")[:19].replace("T", " ")
            conversations[str(row["conversation_id"])].append({
                "role": row["role"], "turn_index": row["turn_index"], "message": row.get("content") or "",
                "create_time": created, "is_unliked": int(row.get("feedback") in ("dislike", -1)),
            })
    return [sorted(h, key=lambda m: m["turn_index"]) for _, h in sorted(conversations.items())], turns


def reference_child(signals_file: Path, log: Path) -> None:
    """In a child process: time the reference's enrich_dialogue over every conversation of the log."""
    spec = importlib.util.spec_from_file_location("reference_signals", signals_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    enrich = module.enrich_dialogue
    prepared, turns = histories(log)
    wall, cpu = time.perf_counter(), time.process_time()
    for history in prepared:
        enrich(history)
    print(json.dumps({"turns": turns, "conversations": len(prepared), "wall_s": time.perf_counter() - wall,
                      "cpu_s": time.process_time() - cpu}))


class TreeCpu(threading.Thread):
    """CPU seconds of a process and every process under it (its worker pool, the fork server and the workers
    forked from it, which are not its own children and so escape ``RUSAGE_CHILDREN``): each process's own
    user + system time, sampled every `interval` seconds, its last sample kept (a process's last fraction
    of an interval is not counted)."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.root, self.interval = psutil.Process(pid), interval
        self.seen: dict[tuple[int, float], float] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                return
            for proc in procs:
                try:
                    times = proc.cpu_times()
                    self.seen[(proc.pid, proc.create_time())] = times.user + times.system
                except psutil.Error:
                    continue
            self._halt.wait(self.interval)

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return sum(self.seen.values())


def run_reference(signals_file: Path, log: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child-reference", str(signals_file), "--log", str(log)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_uxbench(log: Path, workers: int | None, batch_size: int | None, src: Path | None = None) -> dict[str, Any]:
    """One whole ``mine run --no-llm``: the current code, or the code under ``src`` (first on PYTHONPATH)."""
    tmp = Path(tempfile.mkdtemp(prefix="uxbench-vs-ref-"))
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    try:
        command = [sys.executable, "-m", "uxbench", "mine", "run", str(log), "--out", str(tmp / "out"), "--no-llm",
                   "--quiet"]
        command += ["--workers", str(workers)] if workers else []
        command += ["--batch-size", str(batch_size)] if batch_size else []
        wall = time.perf_counter()
        with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env) as process:
            sampler = TreeCpu(process.pid)
            sampler.start()
            _, stderr = process.communicate()
            wall = time.perf_counter() - wall
            cpu = sampler.stop()
        if process.returncode:
            tail = stderr.decode(errors="replace")[-2000:]
            sys.exit(f"error: uxbench mine run failed ({process.returncode}): {tail}")
        counts = json.loads((tmp / "out" / "stage_counts.json").read_text(encoding="utf-8"))
        return {"wall_s": wall, "cpu_s": cpu, "turns": counts["ingest"]["turns"]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def byte_compile(src: Path | None) -> Path:
    """Compile the uxbench package under ``src`` (None: the one this Python imports) to bytecode, as an install
    does (pip compiles a wheel's modules; an editable install writes them at its first run). Without it, a machine
    with PYTHONDONTWRITEBYTECODE set compiles every module from source in each of the run's processes, at every run
    (~0.1 s of CPU each for the driver and the fork server, on the path to the workers' first batch), which no
    installed copy does. The reference's time counts no import at all."""
    import compileall
    import importlib.util

    if src is None:
        spec = importlib.util.find_spec("uxbench")
        assert spec is not None and spec.submodule_search_locations
        package = Path(next(iter(spec.submodule_search_locations)))
    else:
        package = src / "uxbench"
    compileall.compile_dir(str(package), quiet=1)
    return package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, help="your checkout of the reference implementation "
                        "(or its signals.py)")
    parser.add_argument("--log", type=Path, default=Path(DEFAULT_POOL).expanduser(),
                        help="canonical JSON Lines log (default: the real pool, $UXBENCH_SIGNALS_POOL)")
    parser.add_argument("--rounds", type=int, default=3, help="reference and uxbench runs, alternating")
    parser.add_argument("--workers", type=int, help="uxbench mine run --workers (default: all cores)")
    parser.add_argument("--batch-size", type=int, help="uxbench mine run --batch-size (default: its own)")
    parser.add_argument("--baseline", type=Path, help="the src directory of a checkout of earlier uxbench code, "
                        "also run in each round")
    parser.add_argument("--json", type=Path, help="also write every round's figures here")
    parser.add_argument("--no-compile", action="store_true", help="measure without compiling the uxbench packages "
                        "to bytecode first (see byte_compile)")
    parser.add_argument("--child-reference", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_reference:
        reference_child(args.child_reference, args.log)
        return
    if args.reference is None:
        parser.error("--reference PATH (your checkout of the reference implementation) is required")
    if not args.log.is_file():
        sys.exit(f"error: no log at {args.log}: build the pool (../shared/data/signals_dev/build_log.py --pool) "
                 "or pass --log")
    signals_file = reference_signals_file(args.reference.expanduser())
    print(f"log {args.log}; reference {signals_file}; {os.cpu_count()} CPUs; workers {args.workers or 'all'}")
    base = args.baseline.expanduser() if args.baseline else None
    if not args.no_compile:
        print("bytecode compiled (as installed): " + ", ".join(
            str(byte_compile(src)) for src in ([None, base] if base else [None])))
    head = ("| round | load avg (1 min) | reference turns/s | uxbench turns/s (whole process) | ratio (wall) | "
            "ratio (CPU) | reference wall / CPU s | uxbench wall / CPU s |")
    if base:
        head += " baseline wall / CPU s | uxbench / baseline (wall) |"
    print(head + "\n" + "|---:" * (head.count("|") - 1) + "|")
    rounds = []
    for number in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        ref = run_reference(signals_file, args.log)
        ours = run_uxbench(args.log, args.workers, args.batch_size)
        before = run_uxbench(args.log, args.workers, args.batch_size, base) if base else None
        for run in filter(None, (ours, before)):
            if run["turns"] != ref["turns"]:
                sys.exit(f"error: uxbench read {run['turns']} turns, the reference {ref['turns']}")
        ref_rate, our_rate = ref["turns"] / ref["wall_s"], ours["turns"] / ours["wall_s"]
        row = {"round": number, "load_1min": load, "reference": ref, "uxbench": ours,
               "reference_turns_per_s": ref_rate, "uxbench_turns_per_s": our_rate, "ratio": our_rate / ref_rate,
               "cpu_ratio": ref["cpu_s"] / ours["cpu_s"]}
        line = (f"| {number} | {load:.2f} | {ref_rate:,.0f} | {our_rate:,.0f} | {row['ratio']:.2f} | "
                f"{row['cpu_ratio']:.2f} | {ref['wall_s']:.1f} / {ref['cpu_s']:.1f} | "
                f"{ours['wall_s']:.1f} / {ours['cpu_s']:.1f} |")
        if before:
            row["baseline"], row["speedup_over_baseline"] = before, before["wall_s"] / ours["wall_s"]
            line += f" {before['wall_s']:.1f} / {before['cpu_s']:.1f} | {row['speedup_over_baseline']:.2f} |"
        rounds.append(row)
        print(line, flush=True)
    median = statistics.median(r["ratio"] for r in rounds)
    cpu_median = statistics.median(r["cpu_ratio"] for r in rounds)
    print(f"\n{rounds[0]['reference']['turns']:,} turns; median ratio {median:.2f} by wall clock, {cpu_median:.2f} by "
          f"CPU seconds (uxbench's whole process over the reference's enrich_dialogue calls alone); load average "
          f"now {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"log": str(args.log), "rounds": rounds, "median_ratio": median,
                                         "median_cpu_ratio": cpu_median}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
