"""`uxbench sim run` throughput and client cost against the loopback OpenAI-compatible server.

    python bench/sim.py                       # 1,000 sessions x 6 replies, concurrency 64, --procs 1, 2 and 4
    python bench/sim.py --procs 1 --baseline-rev HEAD~3   # and the same runs of that commit, one after the other
    python bench/sim.py --sizes 250,500,1000  # peak memory by the number of sessions (flat in N?)

The model under test is the loopback server in its own process (100 ms latency per reply, `asyncio.sleep`, so it
costs no CPU), the simulated users are the scripted realiser and the rules assessor: what is measured is the
harness (policy, projection, realiser, checks, the model layer's HTTP client, limiter and retries, the SQLite run
store, the summary with its bootstrap). Personas: the 24 demo personas with patience raised so that a never-helping
assistant keeps every session to exactly 6 replies. Each run is a fresh `python -m uxbench sim run` process with
--no-cache; its CPU (user + system, its worker processes included) and peak RSS come from `os.wait4`.
Ideal throughput = concurrency / (6 x latency): no harness cost at all. Beside it, in each round, the ceiling this
server and machine allow: a bare aiohttp client running the same sessions (6 requests one after the other, 64
sessions at a time, `resp.read()` and nothing else). Sessions/s are over the run's own
`elapsed_s` (from the first session to the written summary); `/ ideal (process)` divides by the whole process's
wall time instead (imports, setup and the exports included: what a user waits for).
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
from loopback_bench import checkouts, conditions, cpu_seconds

REPLIES = 6


def write_personas(path: Path) -> Path:
    from uxbench.sim.persona_io import load_personas, personas_jsonl

    personas = [item.persona.model_copy(update={"patience": item.persona.patience.model_copy(
        update={"session": 1000.0, "per_item": None})}) for item in load_personas(["demo"])]
    path.write_bytes(b"\n".join(personas_jsonl(personas)) + b"\n")
    return path


def start_server(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    from loopback_bench import start_server as start

    return start(latency_ms, "--default-answer", "Sorry, I am not sure what you mean.")


def one_run(personas: Path, url: str, sessions: int, concurrency: int, procs: int, out: Path,
            src: Path | None = None, latency_s: float = 0.1) -> dict[str, object]:
    trials = -(-sessions // 24)
    cmd = [sys.executable, "-m", "uxbench", "sim", "run", "--personas", str(personas), "--trials", str(trials),
           "--max-turns", str(REPLIES), "--model", "openai:loopback", "-M", f"base_url={url}",
           "-M", "api_key_env=UXBENCH_BENCH_NO_KEY", "--simulator", "scripted:user", "--concurrency", str(concurrency),
           "--procs", str(procs), "--out", str(out), "--no-cache", "--quiet", "--format", "json", "--n-boot", "1000"]
    env = {**os.environ, "PYTHONPATH": str(src)} if src is not None else None
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stdout = proc.stdout.read() if proc.stdout else b""
    stderr = proc.stderr.read() if proc.stderr else b""
    if status != 0:
        raise RuntimeError(f"sim run failed ({status}): {stderr.decode()[-2000:]}")
    summary = json.loads(stdout)
    n = int(summary["n_sessions"])
    turns = int(summary["usage"]["assistant"]["calls"])
    elapsed = float(summary["invocation"]["elapsed_s"])
    ideal = concurrency / (REPLIES * latency_s)
    cpu = usage.ru_utime + usage.ru_stime
    return {"sessions": n, "procs": procs, "concurrency": concurrency, "assistant_turns": turns,
            "wall_s": round(wall, 2), "sessions_elapsed_s": round(elapsed, 2),
            "sessions_per_s": round(n / elapsed, 2), "ideal_sessions_per_s": round(ideal, 2),
            "efficiency": round(n / elapsed / ideal, 3), "efficiency_process": round(n / wall / ideal, 3),
            "client_cpu_s": round(cpu, 2),
            "client_cpu_ms_per_turn": round(1000 * cpu / turns, 3), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def bare_sessions(url: str, sessions: int, concurrency: int, latency_s: float) -> dict[str, object]:
    """The sessions' requests from a bare aiohttp client: each session's 6 one after the other, `concurrency`
    sessions at a time (the same request body every time)."""
    import asyncio

    import aiohttp

    body = json.dumps({"model": "loopback", "messages": [{"role": "user", "content": "I need a refund."}]}).encode()

    async def run() -> float:
        sem = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            async def one() -> None:
                async with sem:
                    for _ in range(REPLIES):
                        async with session.post(url + "/chat/completions", data=body,
                                                headers={"Content-Type": "application/json"}) as resp:
                            await resp.read()

            t0 = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(sessions)))
            return time.perf_counter() - t0

    cpu0 = cpu_seconds()
    elapsed = asyncio.run(run())
    cpu = cpu_seconds() - cpu0
    ideal = concurrency / (REPLIES * latency_s)
    return {"checkout": "bare aiohttp client", "sessions": sessions, "procs": 1, "concurrency": concurrency,
            "sessions_elapsed_s": round(elapsed, 2), "sessions_per_s": round(sessions / elapsed, 2),
            "ideal_sessions_per_s": round(ideal, 2), "efficiency": round(sessions / elapsed / ideal, 3),
            "client_cpu_ms_per_turn": round(1000 * cpu / (sessions * REPLIES), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--procs", default="1,2,4", help="comma-separated --procs values")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every run this many times")
    parser.add_argument("--baseline-rev", help="also run the same commands from this git revision")
    parser.add_argument("--baseline-src", type=Path, help="also run them from this src directory")
    parser.add_argument("--sizes", default="", help="comma-separated session counts for the memory curve")
    parser.add_argument("--out", type=Path, default=Path("bench/out/sim.json"))
    ns = parser.parse_args()
    server, url = start_server(ns.latency_ms)
    results: dict[str, object] = {"command": " ".join(sys.argv), "latency_ms": ns.latency_ms,
                                  "conditions": conditions()}
    print(results["conditions"])
    print("| checkout | --procs | sessions | sessions/s | / ideal | / bare client (same round) | / ideal (process) | "
          "client CPU per reply | peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        with tempfile.TemporaryDirectory(prefix="uxbench-bench-sim-") as tmp:
            root = Path(tmp)
            sources = checkouts(ns.baseline_rev, ns.baseline_src, root / "baseline")
            personas = write_personas(root / "personas.jsonl")
            runs = []
            for r in range(ns.rounds):
                bare = bare_sessions(url, -(-ns.sessions // 24) * 24, ns.concurrency, ns.latency_ms / 1000)
                runs.append(bare)
                print(f"| {bare['checkout']} | 1 | {bare['sessions']} | {bare['sessions_per_s']} | "
                      f"{bare['efficiency']:.2f} | 1 | | {bare['client_cpu_ms_per_turn']:.2f} ms | |", flush=True)
                for procs in [int(p) for p in ns.procs.split(",") if p]:
                    for name, src in sources.items():
                        run = one_run(personas, url, ns.sessions, ns.concurrency, procs, root / f"run-{r}-{procs}-"
                                      f"{len(runs)}", src, ns.latency_ms / 1000)
                        run["checkout"] = name
                        run["of_bare_client"] = round(float(run["sessions_per_s"]) / float(bare["sessions_per_s"]), 3)
                        runs.append(run)
                        print(f"| {name} | {procs} | {run['sessions']} | {run['sessions_per_s']} | "
                              f"{run['efficiency']:.2f} | {run['of_bare_client']:.2f} | "
                              f"{run['efficiency_process']:.2f} | "
                              f"{run['client_cpu_ms_per_turn']:.2f} ms | {run['peak_rss_mib']} MiB |", flush=True)
            results["runs"] = runs
            memory = []
            for size in [int(s) for s in ns.sizes.split(",") if s]:
                memory.append(one_run(personas, url, size, ns.concurrency, 1, root / f"mem-{size}"))
                print(json.dumps(memory[-1]), flush=True)
            if memory:
                results["memory"] = memory
    finally:
        server.terminate()
        server.wait(timeout=10)
    results["conditions_at_end"] = conditions()
    print(results["conditions_at_end"])
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
