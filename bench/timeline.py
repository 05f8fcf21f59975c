"""Where a run's wall time goes against a 100 ms loopback server: before the first request, the requests' own time
and how many are in flight, the time between a request's turn coming and its send, and after the last answer.

    python bench/timeline.py                      # Task 1, 5,000 samples, concurrency 64
    python bench/timeline.py --step grm           # GRM scoring of 3,000 Task 2 replies (`score_run`)
    python bench/timeline.py --step generation --samples 3000

One run after a 200-sample warm-up, in this process, with timestamps taken around three calls (monkeypatched, so a
little slower than a plain run): `Model.generate` (a request's turn: cache, limiter, the count of requests sent),
the provider's `generate` (the request itself: body, HTTP, parsing) and, for the steps with a store, each commit
of the run store. Printed: wall; start -> first send; the send span and the mean requests in flight over it (the
concurrency is the most); the mean request; the turn -> send gap (mean, median, p90); last answer -> end; the
commits (count, total, the longest, those over 1 ms). A slot idle between two requests, a long commit or a pause of
the event loop shows here before it shows as a lower throughput ratio (`bench/throughput.py`, `bench/protocol.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_bench import start_server, stop

EVENTS: dict[int, list[tuple[str, float]]] = defaultdict(list)
COMMITS: list[float] = []


def mark(name: str) -> None:
    EVENTS[id(asyncio.current_task())].append((name, time.perf_counter()))


def instrument() -> None:
    from uxbench.models.model import Model
    from uxbench.models.providers.openai import OpenAIModel
    from uxbench.runtime.batched_writes import BatchedWrites

    turn, send, commit = Model.generate, OpenAIModel.generate, BatchedWrites._commit

    async def timed_turn(self: Any, *args: Any, **kwargs: Any) -> Any:
        mark("turn")
        return await turn(self, *args, **kwargs)

    async def timed_send(self: Any, *args: Any, **kwargs: Any) -> Any:
        mark("send")
        out = await send(self, *args, **kwargs)
        mark("answer")
        return out

    def timed_commit(self: Any) -> None:
        t0 = time.perf_counter()
        commit(self)
        COMMITS.append(time.perf_counter() - t0)

    Model.generate = timed_turn  # type: ignore[method-assign]
    OpenAIModel.generate = timed_send  # type: ignore[method-assign]
    BatchedWrites._commit = timed_commit  # type: ignore[method-assign]


def run_step(step: str, url: str, work: Path, n: int, concurrency: int) -> tuple[float, float]:
    """One run of `step` on `n` fresh cases; returns when it started and its wall seconds (the GRM step: the
    scoring alone, after the generation)."""
    from uxbench.orchestrate.rescore import score_run
    from uxbench.orchestrate.runner import RunSpec, execute
    from uxbench.orchestrate.spec import JudgeSpec
    from uxbench.scoring.scorer import JudgeSettings

    work.mkdir(parents=True, exist_ok=True)
    if step == "task1":
        from throughput import write_cases as task1_cases

        spec = RunSpec(task="judge", model="openai:loopback", model_args={"base_url": url},
                       data=str(task1_cases(work / "cases.jsonl", n)), out=work / "run", concurrency=concurrency,
                       task_options={"lang": "zh"}, cache_path=work / "cache.sqlite")
    else:
        from protocol import write_cases as eval_cases

        spec = RunSpec(task="eval", model="openai:gen", model_args={"base_url": url},
                       data=str(eval_cases(work / "cases.jsonl", n)), out=work / "run", concurrency=concurrency,
                       use_cache=False)
    if step != "grm":
        EVENTS.clear()
        COMMITS.clear()
        t0 = time.perf_counter()
        asyncio.run(execute(spec))
        return t0, time.perf_counter() - t0
    asyncio.run(execute(spec))
    EVENTS.clear()
    COMMITS.clear()
    judge = JudgeSpec(model="openai:grm", args={"base_url": url}, concurrency=concurrency,
                      settings=JudgeSettings(lang="en"))
    t0 = time.perf_counter()
    asyncio.run(score_run(work / "run", judge, use_cache=False))
    return t0, time.perf_counter() - t0


def report(wall: float, started: float) -> None:
    sends = [(t0, t1) for seq in EVENTS.values() for (a, t0), (b, t1) in itertools.pairwise(seq)
             if a == "send" and b == "answer"]
    gaps = [1000 * (t1 - t0) for seq in EVENTS.values() for (a, t0), (b, t1) in itertools.pairwise(seq)
            if a == "turn" and b == "send"]
    first, last = min(s for s, _ in sends), max(e for _, e in sends)
    busy = sum(e - s for s, e in sends)
    gaps.sort()
    slow = [c for c in COMMITS if c > 0.001]
    print(f"wall {wall:.3f} s; start -> first send {first - started:.3f} s; send span {last - first:.3f} s with "
          f"{busy / (last - first):.1f} requests in flight on average; mean request {1000 * busy / len(sends):.1f} "
          f"ms; turn -> send {statistics.mean(gaps):.3f} ms (median {gaps[len(gaps) // 2]:.3f}, p90 "
          f"{gaps[int(0.9 * len(gaps))]:.3f}); last answer -> end {started + wall - last:.3f} s")
    if COMMITS:
        print(f"commits: {len(COMMITS)}, {sum(COMMITS):.3f} s in all, longest {1000 * max(COMMITS):.1f} ms; "
              f"{len(slow)} over 1 ms ({sum(slow):.3f} s)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--step", choices=("task1", "generation", "grm"), default="task1")
    p.add_argument("--samples", type=int)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--latency-ms", type=float, default=100.0)
    args = p.parse_args()
    n = args.samples or (5000 if args.step == "task1" else 3000)
    os.environ["UXBENCH_CACHE_DIR"] = tempfile.mkdtemp()
    proc, url = start_server(args.latency_ms)
    try:
        instrument()
        with tempfile.TemporaryDirectory() as tmp:
            run_step(args.step, url, Path(tmp) / "warm", 200, 16)
            started, wall = run_step(args.step, url, Path(tmp) / "main", n, args.concurrency)
            print(f"{args.step}: {n} samples, concurrency {args.concurrency}, latency {args.latency_ms:g} ms")
            report(wall, started)
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
