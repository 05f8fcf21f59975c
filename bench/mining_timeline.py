"""Where a `mine run --no-llm` process tree spends its wall time: each process's CPU, sampled from /proc, in bins.

    python bench/mining_timeline.py --log POOL                          # this checkout, one run
    python bench/mining_timeline.py --log POOL --baseline-src A/src --runs 2   # alternating with another checkout

Linux only (reads /proc). Every 0.1 s the sampler reads the utime + stime of every process whose parent is in the
run's tree (the driver, the fork server, its workers), so the table shows when the workers start, how busy each
process is in each bin (percent of one core), and when each one ends. The summary line per run: wall, total CPU,
`wall - CPU / cores` (the time the cores were not all busy: what a better schedule could still win; what is left
is CPU work), and when the first worker appeared. The sampler itself costs ~1-2% of a core.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _name(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    if "forkserver" in raw:
        return "fork server / worker"
    if "resource_tracker" in raw:
        return "resource tracker"
    return "driver" if " mine run " in raw else raw[:30]


Samples = dict[int, list[tuple[float, float]]]
"""Per process of the run's tree: [(seconds since the start, its CPU seconds so far)]."""


def sample_run(command: list[str], env: dict[str, str], step: float = 0.1) -> tuple[float, Samples, dict[int, str]]:
    """Run ``command``; returns its wall time, the samples and each process's name."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree = {process.pid}
    seen: Samples = defaultdict(list)
    names: dict[int, str] = {}
    while process.poll() is None:
        now = time.perf_counter() - start
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            found = _stat(pid)
            if found is None:
                continue
            parent, cpu = found
            if int(pid) in tree or parent in tree:
                tree.add(int(pid))
                seen[int(pid)].append((now, cpu))
                if int(pid) not in names:
                    names[int(pid)] = _name(int(pid))
        time.sleep(step)
    wall = time.perf_counter() - start
    if process.returncode:
        tail = process.stderr.read().decode(errors="replace")[-1500:] if process.stderr else ""
        sys.exit(f"error: the run failed ({process.returncode}): {tail}")
    return wall, seen, names


def report(label: str, wall: float, seen: Samples, names: dict[int, str], bin_s: float, cores: int) -> None:
    bins = int(wall / bin_s) + 1
    total = sum(samples[-1][1] for samples in seen.values())
    forked = sorted(samples[0][0] for pid, samples in seen.items() if samples[-1][1] > 1.0 and names[pid] != "driver")
    first_worker = f"{forked[0]:.2f} s" if forked else "none (in-line)"
    print(f"\n{label}: wall {wall:.2f} s, CPU {total:.2f} s, wall - CPU/{cores} = {wall - total / cores:.2f} s, "
          f"first worker seen at {first_worker}")
    print(f"{'pid':>7} {'process':<22} {'from':>5} {'to':>6} {'CPU s':>6}  % of a core per {bin_s} s")
    for pid, samples in sorted(seen.items(), key=lambda item: item[1][0][0]):
        if samples[-1][1] < 0.02:
            continue
        busy = [0.0] * bins
        previous = samples[0][1]
        for at, cpu in samples:
            busy[min(bins - 1, int(at / bin_s))] += cpu - previous
            previous = cpu
        row = " ".join(f"{min(999, round(100 * b / bin_s)):3d}" for b in busy)
        print(f"{pid:>7} {names[pid]:<22} {samples[0][0]:5.2f} {samples[-1][0]:6.2f} {samples[-1][1]:6.2f}  {row}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", required=True, type=Path, help="the chat log to mine (e.g. the pool)")
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src, run alternately")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--bin", type=float, default=0.5, help="seconds per column")
    args = parser.parse_args()
    if not Path("/proc/self/stat").exists():
        sys.exit("error: this benchmark reads /proc (Linux)")
    checkouts: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.baseline_src:
        checkouts.append((f"baseline ({args.baseline_src})", args.baseline_src))
    cores = len(os.sched_getaffinity(0))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; load average {load}; {cores} CPUs; {args.log}")
    for run in range(args.runs):
        for label, src in checkouts:
            env = dict(os.environ)
            if src is not None:
                env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
            out = Path(tempfile.mkdtemp(prefix="uxbench-timeline-"))
            try:
                command = [sys.executable, "-m", "uxbench", "mine", "run", str(args.log), "--out", str(out / "out"),
                           "--no-llm", "--quiet"]
                wall, seen, names = sample_run(command, env)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            report(f"run {run + 1}, {label}", wall, seen, names, args.bin, cores)


if __name__ == "__main__":
    main()
