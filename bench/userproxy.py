"""UserProxyBench over tau2: every airline and retail task x 3 trials, the scripted reference agent behind a
loopback OpenAI-compatible server (100 ms per reply) at concurrency 64, once per user proxy; then the proxies
report over those runs.

    python bench/userproxy.py                         # faithful, leaky, uncooperative proxies; airline + retail
    python bench/userproxy.py --tasks tau2:airline --trials 1 --proxies faithful,leaky   # smaller

Needs the tau2 extra. The agent is `python -m uxbench.testing.loopback --agent reference` in its own process (its
latency is `asyncio.sleep`: no CPU); the proxies are this project's scripted users (no model): what is measured is
the harness with tau2 inside it (policy, projection, realiser, the tool-call loop over HTTP, tau2's environment
executing each call, tau2's evaluator scoring each session, the SQLite store, the summary). Each run is a fresh
`python -m uxbench sim run` process with --no-cache; CPU (user + system) and peak RSS come from `os.wait4`.
Ideal sessions/s = concurrency / (mean agent generations per session x latency): the rate with no harness cost.
The CPU of a process includes its start (importing tau2 and litellm, reading the tasks and the databases): a run
of one task per domain measures that fixed cost first, and `client_cpu_ms_per_session_after_start` leaves it out
(the difference over the difference in sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loopback_bench  # the loopback server the other benchmarks start

PROXIES = {
    "faithful": ("scripted:user", "structured"),
    "leaky": ("scripted:user-leaky", "structured"),
    "uncooperative": ("scripted:user-uncooperative", "structured"),
}


def one_run(name: str, tasks: list[str], trials: int, url: str, concurrency: int, latency_ms: float,
            out: Path) -> dict[str, object]:
    simulator, mode = PROXIES[name]
    cmd = [sys.executable, "-m", "uxbench", "sim", "run", *[x for t in tasks for x in ("--tasks", t)],
           "--trials", str(trials), "--agent-prompt", "oracle", "--model", "openai:agent", "-M", f"base_url={url}",
           "-M", "api_key_env=UXBENCH_BENCH_NO_KEY", "--simulator", simulator, "--mode", mode, "--max-turns", "30",
           "--concurrency", str(concurrency), "--out", str(out), "--no-cache", "--quiet", "--format", "json",
           "--n-boot", "1000"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout_b, stderr_b = b"", b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stdout_b = proc.stdout.read() if proc.stdout else b""
    stderr_b = proc.stderr.read() if proc.stderr else b""
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: some sessions ended in error (counted in the summary)
        raise RuntimeError(f"sim run failed ({status}): {stderr_b.decode()[-2000:]}")
    summary = json.loads(stdout_b)
    n = int(summary["n_sessions"])
    generations = int(summary["usage"]["assistant"]["calls"])
    elapsed = float(summary["invocation"]["elapsed_s"])
    ideal = concurrency / (generations / n * latency_ms / 1000.0)
    cpu = usage.ru_utime + usage.ru_stime
    replies = sum(1 for line in _turns(out) if line == "assistant")
    return {"proxy": name, "sessions": n, "agent_generations": generations, "agent_replies": replies,
            "generations_per_session": round(generations / n, 2), "wall_s": round(wall, 2),
            "sessions_elapsed_s": round(elapsed, 2), "sessions_per_s": round(n / elapsed, 2),
            "ideal_sessions_per_s": round(ideal, 2), "efficiency": round(n / elapsed / ideal, 3),
            "client_cpu_s": round(cpu, 2), "client_cpu_ms_per_generation": round(1000 * cpu / generations, 2),
            "client_cpu_ms_per_turn": round(1000 * cpu / replies, 2),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "mean_reward": ((summary.get("reward") or {}).get("mean") or {}).get("value"),
            "success_rate": (summary["metrics"].get("success_rate") or {}).get("value"),
            "n_errors": summary.get("n_errors")}


def _first_tasks(selectors: list[str]) -> list[str]:
    """One task of each selector's domain (the fixed-cost run: the same domains to load, one session each)."""
    from uxbench.sim.task_sources import select_tasks

    out = []
    for selector in selectors:
        first = select_tasks([selector]).tasks[0]
        out.append(f"{first.id.split('/')[0]}:{first.task_id}")
    return out


def _turns(run_dir: Path) -> list[str]:
    """The role of every turn of every session of a finished run."""
    from uxbench.sim.store import SimStore

    store = SimStore.open_existing(run_dir)
    try:
        return [turn.role for record in store.iter_sessions() for turn in record.turns]
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="tau2:airline,tau2:retail", help="comma-separated --tasks selectors")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--proxies", default="faithful,leaky,uncooperative")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directories here")
    parser.add_argument("--out", type=Path, default=Path("bench/out/userproxy.json"))
    ns = parser.parse_args()
    server, url = loopback_bench.start_server(ns.latency_ms, "--agent", "reference")
    results: dict[str, object] = {"command": " ".join(sys.argv), "latency_ms": ns.latency_ms,
                                  "load_before": os.getloadavg()}
    tasks = [t for t in ns.tasks.split(",") if t]
    try:
        with tempfile.TemporaryDirectory(prefix="uxbench-bench-userproxy-") as tmp:
            root = ns.keep or Path(tmp)
            fixed = one_run("faithful", _first_tasks(tasks), 1, url, ns.concurrency, ns.latency_ms, root / "fixed")
            results["fixed_cost_run"] = fixed
            print(json.dumps(fixed), flush=True)
            runs, dirs = [], []
            for name in [p for p in ns.proxies.split(",") if p]:
                dirs.append(root / f"run-{name}")
                row = one_run(name, tasks, ns.trials, url, ns.concurrency, ns.latency_ms, dirs[-1])
                row["client_cpu_ms_per_session_after_start"] = round(
                    1000 * (float(row["client_cpu_s"]) - float(fixed["client_cpu_s"]))
                    / (int(row["sessions"]) - int(fixed["sessions"])), 1)
                runs.append(row)
                print(json.dumps(row), flush=True)
            results["runs"] = runs
            for fmt in ("table", "md") if len(dirs) > 1 else ():  # the report compares two proxies or more
                start = time.perf_counter()
                report = subprocess.run([sys.executable, "-m", "uxbench", "sim", "proxies", *map(str, dirs),
                                         "--target", "0.9", "--n-boot", "1000", "--format", fmt],
                                        capture_output=True, text=True, check=True,
                                        env={**os.environ, "COLUMNS": "200"})
                results[f"proxies_report_{fmt}_s"] = round(time.perf_counter() - start, 2)
                results[f"proxies_report_{fmt}"] = report.stdout
            print(results.get("proxies_report_table", ""), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    results["load_after"] = os.getloadavg()
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
