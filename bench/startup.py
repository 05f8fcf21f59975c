"""Start-up time of `uxbench --help` and `uxbench run --help`: the whole process, median of N, against the goal
(0.3 s) and side by side with another checkout in the same run.

    python bench/startup.py                          # this checkout, 5 runs each
    python bench/startup.py --baseline-rev HEAD~3    # and that commit (git archive into a temporary directory)
    python bench/startup.py --baseline-src ../old/src --runs 9 --instructions

Runs alternate between the checkouts (A, B, A, B, ...) so that a change of load hits both. Each run is the
`uxbench` console script of this Python (or `python -m uxbench` without one) with PYTHONPATH set to the checkout's
`src`, its output thrown away, after one untimed run of each that writes the .pyc files an installed package has
(PYTHONDONTWRITEBYTECODE is taken out of the children's environment). `--instructions` also counts the
instructions of one run of each under valgrind (callgrind), a figure the machine's load does not change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loopback_bench  # the checkouts helper the other benchmarks use

GOAL_S = 0.3
COMMANDS = (("--help",), ("run", "--help"))
HERE = Path(__file__).resolve().parents[1]


def _entry() -> list[str]:
    script = Path(sys.executable).with_name("uxbench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "uxbench"]


def _env(src: Path) -> dict[str, str]:
    """The checkout first on the path, and bytecode written: an installed package has its .pyc files, and a
    PYTHONDONTWRITEBYTECODE left in the environment (this project's sandboxes set it) would compile uxbench's own
    modules from source on every run (about 60 M instructions of `run --help`), which no user's start-up pays."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _once(src: Path, args: tuple[str, ...]) -> float:
    start = time.perf_counter()
    subprocess.run([*_entry(), *args], env=_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def _instructions(src: Path, args: tuple[str, ...]) -> float | None:
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *_entry(), *args],
                          env=_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command per checkout (median)")
    parser.add_argument("--baseline-rev", help="a git revision of this repository to compare with")
    parser.add_argument("--baseline-src", type=Path, help="the src directory of another checkout to compare with")
    parser.add_argument("--instructions", action="store_true", help="also count instructions under valgrind")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="uxbench-startup-") as tmp:
        checkouts = loopback_bench.checkouts(args.baseline_rev, args.baseline_src, Path(tmp))
        for src in checkouts.values():  # compile the .pyc files once, outside the timing
            for command in COMMANDS:
                _once(src, command)
        times: dict[tuple[str, tuple[str, ...]], list[float]] = {}
        floor = [_python_floor() for _ in range(args.runs)]
        for _ in range(args.runs):
            for name, src in checkouts.items():
                for command in COMMANDS:
                    times.setdefault((name, command), []).append(_once(src, command))
        counts = {(name, command): _instructions(src, command) for name, src in checkouts.items()
                  for command in COMMANDS} if args.instructions else {}

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs; {sys.version.split()[0]}; "
          f"median of {args.runs} runs; `python -c pass` {statistics.median(floor):.3f} s")
    print("| checkout | command | median s | min s | / goal 0.3 s | / baseline | M instructions |")
    print("|---|---|---:|---:|---:|---:|---:|")
    names = list(checkouts)
    for command in COMMANDS:
        base = statistics.median(times[(names[-1], command)])
        for name in names:
            runs = times[(name, command)]
            median = statistics.median(runs)
            ratio = f"{median / base:.2f}" if len(names) > 1 else ""
            count = counts.get((name, command))
            shown = f"{count:,.0f}" if count is not None else ""
            print(f"| {name} | uxbench {' '.join(command)} | {median:.3f} | {min(runs):.3f} | "
                  f"{median / GOAL_S:.2f} | {ratio} | {shown} |")


def _python_floor() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
