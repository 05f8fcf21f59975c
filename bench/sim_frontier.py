"""UFS against cost for three simulator configurations on the bundled demo personas (the cost-fidelity frontier).

    python bench/sim_frontier.py [--out /tmp/frontier] [--trials 1] [--max-turns 6] [--judge PROVIDER:MODEL]

Each configuration is a real `uxbench sim run` (its own process) on the 24 demo personas against the same model
under test (`--model`, default scripted:always-good, so the simulator's cost is what differs), then
`uxbench sim fidelity` (code checks; with --judge, the judge pass too), then `uxbench sim frontier` over the three.
Prints the commands, wall time and CPU of each run, and the frontier as Markdown for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = [
    ("scripted", ["--simulator", "scripted:user", "--mode", "structured"]),
    ("leaky-free", ["--simulator", "scripted:user-leaky", "--mode", "free"]),
    ("embedded", ["--simulator", "hf:embedded", "--mode", "structured", "--sim-max-tokens", "48"]),
]


def _run(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.monotonic() - start, cpu, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("/tmp/uxbench-frontier"))
    parser.add_argument("--model", default="scripted:always-good")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--judge", default=None)
    parser.add_argument("--target", type=float, default=0.9)
    args = parser.parse_args()
    uxbench = [sys.executable, "-m", "uxbench"]
    runs = []
    for name, extra in CONFIGS:
        out = args.out / name
        cmd = [*uxbench, "sim", "run", "--personas", "demo", "--model", args.model, *extra, "--trials",
               str(args.trials), "--max-turns", str(args.max_turns), "--out", str(out), "--quiet", "--n-boot", "500"]
        wall, cpu, done = _run(cmd)
        if done.returncode not in (0, 1):
            print(done.stdout, done.stderr, file=sys.stderr)
            return done.returncode
        sessions = json.loads((out / "summary.json").read_text())["n_sessions"]
        fid = [*uxbench, "sim", "fidelity", str(out), "--format", "json", "--quiet"]
        if args.judge:
            fid += ["--judge", args.judge]
        _, _, fdone = _run(fid)
        if fdone.returncode != 0:
            print(fdone.stdout, fdone.stderr, file=sys.stderr)
            return fdone.returncode
        runs.append(out)
        print(f"{name}: {' '.join(cmd[2:])}\n  {sessions} sessions, wall {wall:.1f} s, CPU {cpu:.1f} s "
              f"({cpu / max(1, sessions):.2f} s per session)")
    cmd = [*uxbench, "sim", "frontier", *map(str, runs), "--target", str(args.target), "--format", "json"]
    if args.judge:
        cmd += ["--judge", args.judge]
    _, _, done = _run(cmd)
    if done.returncode != 0:
        print(done.stdout, done.stderr, file=sys.stderr)
        return done.returncode
    report = json.loads(done.stdout)
    unit = report["cost_unit"]
    print(f"\n| configuration | simulator {unit}/session | simulator tokens, calls/session | UFS [95% CI] | "
          "premature disclosure | Pareto |")
    print("|---|---|---|---|---|---|")
    for e in report["entries"]:
        u, p = e["ufs"], e["premature_disclosure_rate"]
        sim = e["cost"]["simulator"]
        print(f"| {e['label']} | {sim[unit]:,.4g} | {sim['tokens']:,.1f}, {sim['calls']:.1f} | "
              f"{u['value']:.3f} [{u['ci_low']:.3f}, {u['ci_high']:.3f}] | "
              f"{p['value']:.3f} (n={p['n_sessions']}) | {'yes' if e['pareto'] else ''} |")
    print(f"\ncheapest with UFS >= {args.target}: {report.get('cheapest_meeting_target')} (estimate), "
          f"{report.get('cheapest_meeting_target_ci')} (CI lower bound); warnings: {report['warnings']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
