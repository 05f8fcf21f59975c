"""Task 1 harness throughput against a bare aiohttp client, on the same loopback server in the same run.

    python bench/throughput.py                            # c=64, 5,000 samples, 3 rounds: harness / bare client
    python bench/throughput.py --baseline-rev HEAD~3      # and the harness of that commit, in the same rounds
    python bench/throughput.py --concurrency 64 256 --samples 2000 --rounds 5
    python bench/throughput.py --memory                   # peak RSS of 10,000- and 100,000-sample runs

The server runs in its own process (100 ms simulated latency). Each round times, one after the other and each in a
fresh child process after a 200-sample warm-up in that process: the bare client (the same request bodies as the
harness sends, from `aiohttp` with a semaphore and nothing else) and the full `uxbench run` path of each checkout
(`openai` provider, Task 1 zero-shot prompts, verdict parsing, the SQLite response cache and run store, the
summary with its bootstrap and the JSONL export: everything `execute()` does). Ideal = concurrency / latency.
Client CPU = user + system time of the child over the timed part, per request, with that of the processes it
started and waited for (a run reads its cases in a second process: `uxbench.data.read_ahead`); the last column
is the run's own process alone, whose one event-loop thread sends the requests. The figure to read is
harness / bare, the median over the rounds (the goal: at least 0.95 at concurrency 64).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_bench import (
    bare_client,
    checkouts,
    conditions,
    median,
    run_child,
    start_server,
    stop,
    timed,
    timed_split,
)

WARM_UP = 200


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


def run_once(url: str, data: Path, workdir: Path, concurrency: int) -> dict[str, float]:
    """One whole Task 1 run through `execute()`: its samples, wall and CPU seconds."""
    from uxbench.orchestrate.runner import RunSpec, execute

    spec = RunSpec(
        task="judge", model="openai:loopback", model_args={"base_url": url}, data=str(data),
        out=workdir / f"run-c{concurrency}", concurrency=concurrency, task_options={"lang": "zh"},
        cache_path=workdir / f"cache-c{concurrency}.sqlite",
    )
    result, wall, cpu, own = timed_split(lambda: asyncio.run(execute(spec)))
    n = result.summary["n_selected"]
    return {"samples": n, "wall_s": wall, "cpu_s": cpu, "loop_cpu_s": own, "errors": result.summary["n_errors"]}


def request_bodies(data: Path) -> list[bytes]:
    """The request bodies the harness sends for these cases (Task 1, zh, zero-shot binary)."""
    from uxbench.data.loaders import load_cases
    from uxbench.models.providers.openai import OpenAIModel
    from uxbench.scoring.prompts import JudgeInput, build_messages
    from uxbench.tasks.judge.options import JudgeOptions
    from uxbench.tasks.judge.task import JudgeTask

    task = JudgeTask(JudgeOptions(lang="zh"))
    config = task.judge.generate_config("zh")
    api = OpenAIModel("loopback", {"base_url": "http://127.0.0.1:1"})
    bodies = []
    for case in load_cases(str(data), task="judge"):
        messages = build_messages(JudgeInput.from_judge_case(case), task.judge.prompt, lang="zh")  # type: ignore[arg-type]
        bodies.append(json.dumps(api.build_body(messages, config)).encode())
    return bodies


def child(args: argparse.Namespace) -> None:
    """One timed step in this process: `harness` (execute) or `bare` (the bare client), after a warm-up."""
    os.environ["UXBENCH_CACHE_DIR"] = tempfile.mkdtemp()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = write_cases(work / "cases.jsonl", args.samples)
        warm = write_cases(work / "warm.jsonl", WARM_UP)
        if args.kind == "bare":
            asyncio.run(bare_client(args.url, request_bodies(warm), 16))
            bodies = request_bodies(data)
            wall, _, cpu = timed(lambda: asyncio.run(bare_client(args.url, bodies, args.concurrency[0])))
            result = {"samples": len(bodies), "wall_s": wall, "cpu_s": cpu, "errors": 0}
        else:
            run_once(args.url, warm, work / "warm", 16)
            result = run_once(args.url, data, work, args.concurrency[0])
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result["worker_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps(result))


def throughput(args: argparse.Namespace) -> None:
    proc, url = start_server(args.latency_ms)
    script = Path(__file__).resolve()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sources = checkouts(args.baseline_rev, args.baseline_src, Path(tmp))
            this = next(iter(sources.values()))
            print(conditions(f"{args.samples} samples, latency {args.latency_ms:g} ms, {args.rounds} rounds"))
            print("| round | concurrency | client | wall s | req/s | / ideal | / bare client | client CPU ms/req "
                  "| of it, the run's own process |")
            print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
            ratios: dict[tuple[int, str], list[float]] = {}
            for c in args.concurrency:
                ideal = c / (args.latency_ms / 1000)
                common = ["--url", url, "--samples", str(args.samples), "--concurrency", str(c)]
                for r in range(1, args.rounds + 1):
                    bare = run_child(script, this, ["--kind", "bare", *common])
                    bare_rate = bare["samples"] / bare["wall_s"]
                    rows = [("bare aiohttp", bare)]
                    for name, src in sources.items():
                        rows.append((f"uxbench {name}", run_child(script, src, ["--kind", "harness", *common])))
                    for name, res in rows:
                        rate = res["samples"] / res["wall_s"]
                        if name != "bare aiohttp":
                            ratios.setdefault((c, name), []).append(rate / bare_rate)
                        own = res.get("loop_cpu_s", res["cpu_s"])
                        print(f"| {r} | {c} | {name} | {res['wall_s']:.2f} | {rate:.0f} | {rate / ideal:.2f} | "
                              f"{rate / bare_rate:.2f} | {1000 * res['cpu_s'] / res['samples']:.2f} | "
                              f"{1000 * own / res['samples']:.2f} |", flush=True)
            print()
            for (c, name), values in ratios.items():
                print(f"concurrency {c}: {name} / bare client = {median(values):.3f} (median of {len(values)} rounds: "
                      f"{', '.join(f'{v:.3f}' for v in values)})")
            print(conditions("at the end"))
    finally:
        stop(proc)


def memory(args: argparse.Namespace) -> None:
    """Peak RSS of whole runs at several sizes, each in a fresh process."""
    proc, url = start_server(args.latency_ms)
    script = Path(__file__).resolve()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src = next(iter(checkouts(None, None, Path(tmp)).values()))
            print(conditions())
            print("| samples | concurrency | wall s | client CPU ms/req | peak RSS MiB | read-ahead worker peak RSS "
                  "MiB |")
            print("|---|---|---|---|---|---|")
            for n in args.memory_sizes:
                r = run_child(script, src, ["--kind", "harness", "--url", url, "--samples", str(n),
                                            "--concurrency", "256"])
                print(f"| {n} | 256 | {r['wall_s']:.1f} | {1000 * r['cpu_s'] / n:.2f} | {r['peak_rss_mib']:.0f} | "
                      f"{r.get('worker_peak_rss_mib', 0):.0f} |", flush=True)
    finally:
        stop(proc)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--concurrency", type=int, nargs="+", default=[64])
    p.add_argument("--samples", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--latency-ms", type=float, default=100.0)
    p.add_argument("--baseline-rev", help="also time the harness of this git revision (git archive)")
    p.add_argument("--baseline-src", type=Path, help="also time the harness of this src directory")
    p.add_argument("--memory", action="store_true", help="measure peak memory at --memory-sizes instead")
    p.add_argument("--memory-sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--kind", choices=("harness", "bare"), default="harness", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args._child:
        child(args)
    elif args.memory:
        memory(args)
    else:
        throughput(args)


if __name__ == "__main__":
    main()
