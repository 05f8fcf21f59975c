"""`uxbench sim run` throughput and client cost against the loopback OpenAI-compatible server.

    python bench/sim.py                       # 1,000 sessions x 6 replies, concurrency 64, --procs 1 and 4
    python bench/sim.py --sizes 250,500,1000  # peak memory by the number of sessions (flat in N?)

The model under test is the loopback server in its own process (100 ms latency per reply, `asyncio.sleep`, so it
costs no CPU), the simulated users are the scripted realiser and the rules assessor: what is measured is the
harness (policy, projection, realiser, checks, the model layer's HTTP client, limiter and retries, the SQLite run
store, the summary with its bootstrap). Personas: the 24 demo personas with patience raised so that a never-helping
assistant keeps every session to exactly 6 replies. Each run is a fresh `python -m uxbench sim run` process with
--no-cache; its CPU (user + system, its worker processes included) and peak RSS come from `os.wait4`.
Ideal throughput = concurrency / (6 x latency): no harness cost at all.
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

import yaml

REPLIES = 6


def write_personas(path: Path) -> Path:
    from uxbench.sim.persona_io import load_personas, personas_jsonl

    personas = [item.persona.model_copy(update={"patience": item.persona.patience.model_copy(
        update={"session": 1000.0, "per_item": None})}) for item in load_personas(["demo"])]
    path.write_bytes(b"\n".join(personas_jsonl(personas)) + b"\n")
    return path


def start_server(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uxbench.testing.loopback", "--latency-ms", str(latency_ms),
         "--default-answer", "Sorry, I am not sure what you mean."], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"loopback server did not start: {url!r}")
    return proc, url


def one_run(personas: Path, url: str, sessions: int, concurrency: int, procs: int, out: Path) -> dict[str, object]:
    trials = -(-sessions // 24)
    cmd = [sys.executable, "-m", "uxbench", "sim", "run", "--personas", str(personas), "--trials", str(trials),
           "--max-turns", str(REPLIES), "--model", "openai:loopback", "-M", f"base_url={url}",
           "-M", "api_key_env=UXBENCH_BENCH_NO_KEY", "--simulator", "scripted:user", "--concurrency", str(concurrency),
           "--procs", str(procs), "--out", str(out), "--no-cache", "--quiet", "--format", "json", "--n-boot", "1000"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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
    ideal = concurrency / (REPLIES * 0.1)
    cpu = usage.ru_utime + usage.ru_stime
    return {"sessions": n, "procs": procs, "concurrency": concurrency, "assistant_turns": turns,
            "wall_s": round(wall, 2), "sessions_elapsed_s": round(elapsed, 2),
            "sessions_per_s": round(n / elapsed, 2), "ideal_sessions_per_s": round(ideal, 2),
            "efficiency": round(n / elapsed / ideal, 3), "client_cpu_s": round(cpu, 2),
            "client_cpu_ms_per_turn": round(1000 * cpu / turns, 3), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--procs", default="1,4", help="comma-separated --procs values")
    parser.add_argument("--sizes", default="", help="comma-separated session counts for the memory curve")
    parser.add_argument("--out", type=Path, default=Path("bench/out/sim.json"))
    ns = parser.parse_args()
    server, url = start_server(ns.latency_ms)
    results: dict[str, object] = {"command": " ".join(sys.argv), "latency_ms": ns.latency_ms}
    try:
        with tempfile.TemporaryDirectory(prefix="uxbench-bench-sim-") as tmp:
            root = Path(tmp)
            personas = write_personas(root / "personas.jsonl")
            runs = []
            for procs in [int(p) for p in ns.procs.split(",") if p]:
                runs.append(one_run(personas, url, ns.sessions, ns.concurrency, procs, root / f"run-p{procs}"))
                print(json.dumps(runs[-1]), flush=True)
            results["runs"] = runs
            if len(runs) >= 2:
                results["procs_speedup"] = round(runs[-1]["sessions_per_s"] / runs[0]["sessions_per_s"], 2)  # type: ignore[operator]
            memory = []
            for size in [int(s) for s in ns.sizes.split(",") if s]:
                memory.append(one_run(personas, url, size, ns.concurrency, 1, root / f"mem-{size}"))
                print(json.dumps(memory[-1]), flush=True)
            if memory:
                results["memory"] = memory
    finally:
        server.terminate()
        server.wait(timeout=10)
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(yaml.safe_dump(results, sort_keys=False))


if __name__ == "__main__":
    main()
