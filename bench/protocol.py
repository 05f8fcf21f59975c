"""Tasks 2/3 throughput: generation, then GRM scoring, against loopback OpenAI-compatible servers.

    python bench/protocol.py                        # 3,000 Task-2 cases, concurrency 64, 100 ms latency
    python bench/protocol.py --samples 5000 --concurrency 64 128

Two servers run in their own processes (the model under test and the judge, 100 ms simulated latency each), so
client CPU is measured alone. Each step is timed on its own: generation with `uxbench run --task eval` without a
judge, then scoring of the stored replies with `uxbench score` (GRM protocol: top logprobs, one token). For each
step: achieved / ideal calls per second (ideal = concurrency / latency) and client CPU milliseconds per sample
from getrusage over the whole step (setup, run store and summary included), after a 200-case warm-up.
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
from typing import Any


def write_cases(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            row = {
                "cid": f"bench-{i:07d}", "lang": "en",
                "history": [{"role": "user", "content": "hello"},
                            {"role": "assistant", "content": "Hi, how can I help?"}],
                "query": f"Question {i}: where should I go this weekend? [[SAY:good]] [[P:0.{i % 9 + 1}]]",
                "scenario": ["travel", "coding", "writing"][i % 3],
            }
            fh.write(json.dumps(row) + "\n")
    return path


def start_server(latency_ms: float, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "uxbench.testing.loopback", "--latency-ms", str(latency_ms), *extra],
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


def timed(fn: Any) -> tuple[Any, float, float]:
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, cpu_seconds() - cpu0


def run_steps(gen_url: str, judge_url: str, data: Path, work: Path, concurrency: int) -> dict[str, Any]:
    from uxbench.orchestrate.rescore import score_run
    from uxbench.orchestrate.runner import execute
    from uxbench.orchestrate.spec import JudgeSpec, RunSpec
    from uxbench.scoring.scorer import JudgeSettings

    out = work / f"run-c{concurrency}"
    spec = RunSpec(task="eval", model="openai:gen", model_args={"base_url": gen_url}, data=str(data), out=out,
                   concurrency=concurrency, use_cache=False)
    gen, gen_wall, gen_cpu = timed(lambda: asyncio.run(execute(spec)))
    judge = JudgeSpec(model="openai:grm", args={"base_url": judge_url}, concurrency=concurrency,
                      settings=JudgeSettings(lang="en"))
    scored, score_wall, score_cpu = timed(lambda: asyncio.run(score_run(out, judge, use_cache=False)))
    n = gen.summary["n_selected"]
    judge_summary = scored.summary["judges"][scored.summary["primary_judge"]]
    return {"n": n, "gen_wall": gen_wall, "gen_cpu": gen_cpu, "score_wall": score_wall, "score_cpu": score_cpu,
            "scored": judge_summary["metrics"]["n_scored"], "errors": gen.summary["n_errors"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--concurrency", type=int, nargs="+", default=[64])
    p.add_argument("--samples", type=int, default=3000)
    p.add_argument("--latency-ms", type=float, default=100.0)
    args = p.parse_args()
    os.environ.setdefault("UXBENCH_CACHE_DIR", tempfile.mkdtemp())
    gen_proc, gen_url = start_server(args.latency_ms)
    judge_proc, judge_url = start_server(args.latency_ms)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            run_steps(gen_url, judge_url, write_cases(work / "warm.jsonl", 200), work / "warm", 16)
            data = write_cases(work / "cases.jsonl", args.samples)
            print("| step | concurrency | samples | wall s | achieved/s | ideal/s | achieved/ideal "
                  "| client CPU ms/sample |")
            print("|---|---|---|---|---|---|---|---|")
            for c in args.concurrency:
                r = run_steps(gen_url, judge_url, data, work, c)
                ideal = c / (args.latency_ms / 1000)
                for step in ("gen", "score"):
                    rate = r["n"] / r[f"{step}_wall"]
                    name = "generation" if step == "gen" else "GRM scoring"
                    print(f"| {name} | {c} | {r['n']} | {r[f'{step}_wall']:.1f} | {rate:.0f} | {ideal:.0f} | "
                          f"{rate / ideal:.2f} | {1000 * r[f'{step}_cpu'] / r['n']:.2f} |", flush=True)
                assert r["errors"] == 0 and r["scored"] == r["n"], r
    finally:
        for proc in (gen_proc, judge_proc):
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
