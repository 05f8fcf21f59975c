"""Harness throughput and client cost against the loopback OpenAI-compatible server.

    python bench/throughput.py                      # concurrency 64 and 256, 5,000 samples each
    python bench/throughput.py --memory             # peak RSS of 10,000- and 100,000-sample runs
    python bench/throughput.py --concurrency 64 --samples 2000

The server runs in its own process (100 ms simulated latency), so client CPU is measured alone:
`achieved / ideal` with ideal = concurrency / latency, and client CPU milliseconds per request from
getrusage (user + system) over the whole `execute()` call, run setup and summary included, after a
200-sample warm-up run in the same process (imports and the connection pool are not counted).
The full `uxbench run` path is used: Task 1 prompts, verdict parsing, response cache and run store.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_cases(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            gold = "good" if i % 2 else "bad"
            say = "好" if i % 3 else "差"
            row = {
                "cid": f"bench-{i:07d}", "ground_truth": 1 if gold == "good" else -1,
                "history": [
                    {"role": "user", "content": "你好"},
                    {"role": "assistant", "content": "你好，有什么可以帮你？"},
                ],
                "query": f"第 {i} 个问题：周末去哪里玩比较好？",
                "response": f"可以去公园散步，或者去博物馆看看。[[SAY:{say}]]",
                "scenario": "信息与知识查询",
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def start_server(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uxbench.testing.loopback", "--latency-ms", str(latency_ms)],
        stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"loopback server did not start: {url!r}")
    return proc, url


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_once(url: str, data: Path, workdir: Path, concurrency: int, *, quiet: bool = True) -> dict[str, float]:
    from uxbench.orchestrate.runner import RunSpec, execute

    spec = RunSpec(
        task="judge", model="openai:loopback", model_args={"base_url": url}, data=str(data),
        out=workdir / f"run-c{concurrency}", concurrency=concurrency, task_options={"lang": "zh"},
        cache_path=workdir / f"cache-c{concurrency}.sqlite",
    )
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    result = asyncio.run(execute(spec))
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    n = result.summary["n_selected"]
    return {"samples": n, "wall_s": wall, "cpu_s": cpu, "throughput": n / wall, "cpu_ms_per_request": 1000 * cpu / n,
            "errors": result.summary["n_errors"]}


def throughput(args: argparse.Namespace) -> None:
    proc, url = start_server(args.latency_ms)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            data = write_cases(work / "cases.jsonl", args.samples)
            # Warm-up run (imports, connection pool) so the figures are the per-request cost, not startup.
            run_once(url, write_cases(work / "warm.jsonl", 200), work / "warm", 16)
            print("| concurrency | samples | wall s | achieved req/s | ideal req/s | achieved/ideal "
                  "| client CPU ms/req |")
            print("|---|---|---|---|---|---|---|")
            for c in args.concurrency:
                r = run_once(url, data, work, c)
                ideal = c / (args.latency_ms / 1000)
                print(f"| {c} | {r['samples']} | {r['wall_s']:.1f} | {r['throughput']:.0f} | {ideal:.0f} | "
                      f"{r['throughput'] / ideal:.2f} | {r['cpu_ms_per_request']:.2f} |", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def memory(args: argparse.Namespace) -> None:
    """Peak RSS of whole runs at two sizes, each in a fresh process."""
    proc, url = start_server(args.latency_ms)
    try:
        print("| samples | concurrency | wall s | peak RSS MiB |")
        print("|---|---|---|---|")
        for n in args.memory_sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--_child", url, "--samples", str(n), "--concurrency", "256",
                 "--latency-ms", str(args.latency_ms)],
                capture_output=True, text=True, check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {n} | 256 | {r['wall_s']:.1f} | {r['peak_rss_mib']:.0f} |", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def child(url: str, samples: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = write_cases(work / "cases.jsonl", samples)
        r = run_once(url, data, work, concurrency)
        r["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(r))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    p.add_argument("--samples", type=int, default=5000)
    p.add_argument("--latency-ms", type=float, default=100.0)
    p.add_argument("--memory", action="store_true", help="measure peak memory at --memory-sizes instead")
    p.add_argument("--memory-sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    os.environ.setdefault("UXBENCH_CACHE_DIR", tempfile.mkdtemp())
    if args._child:
        child(args._child, args.samples, args.concurrency[0])
    elif args.memory:
        memory(args)
    else:
        throughput(args)


if __name__ == "__main__":
    main()
