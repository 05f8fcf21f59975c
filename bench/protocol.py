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


async def bare_client(url: str, bodies: list[bytes], concurrency: int) -> float:
    """The same requests from a bare aiohttp client (a semaphore, no harness): the ceiling this server allows."""
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def one(body: bytes) -> None:
            async with sem, session.post(url + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"}) as resp:
                await resp.read()

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t0


def baseline_bodies(data: Path) -> tuple[list[bytes], list[bytes]]:
    """Request bodies as uxbench sends them: the generation request, and the GRM request for the echoed reply."""
    from uxbench.data.loaders import load_cases
    from uxbench.models.api import GenerateConfig
    from uxbench.scoring.prompts import JudgeInput, PromptOptions, build_messages
    from uxbench.tasks.eval.task import EvalTask

    task = EvalTask()
    judge_prompt = PromptOptions(formulation="binary", strategy="zero_shot", lang="en", max_chars=16000)
    grm_config = GenerateConfig(temperature=0.0, max_tokens=4, top_logprobs=20, logprob_tokens=4)
    gen, grm = [], []
    for case in load_cases(str(data), task="eval"):
        messages = task.messages(case)  # type: ignore[arg-type]
        gen.append(json.dumps({"model": "gen", "messages": [{"role": m.role, "content": m.content} for m in messages],
                               "temperature": 0.7, "max_tokens": 2048}).encode())
        judged = build_messages(JudgeInput(history=case.history, query=case.query, response=case.query, lang="en"),
                                judge_prompt, lang="en")
        grm.append(json.dumps({"model": "grm", "messages": [{"role": m.role, "content": m.content} for m in judged],
                               "temperature": grm_config.temperature, "max_tokens": 4, "logprobs": True,
                               "top_logprobs": 20}).encode())
    return gen, grm


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
            gen_bodies, grm_bodies = baseline_bodies(data)
            print("| step | concurrency | samples | wall s | achieved/s | ideal/s | achieved/ideal "
                  "| bare aiohttp client/ideal | client CPU ms/sample |")
            print("|---|---|---|---|---|---|---|---|---|")
            for c in args.concurrency:
                r = run_steps(gen_url, judge_url, data, work, c)
                ideal = c / (args.latency_ms / 1000)
                bare = {"gen": asyncio.run(bare_client(gen_url, gen_bodies, c)),
                        "score": asyncio.run(bare_client(judge_url, grm_bodies, c))}
                for step in ("gen", "score"):
                    rate = r["n"] / r[f"{step}_wall"]
                    name = "generation" if step == "gen" else "GRM scoring"
                    bare_rate = len(gen_bodies) / bare[step]
                    print(f"| {name} | {c} | {r['n']} | {r[f'{step}_wall']:.1f} | {rate:.0f} | {ideal:.0f} | "
                          f"{rate / ideal:.2f} | {bare_rate / ideal:.2f} | {1000 * r[f'{step}_cpu'] / r['n']:.2f} |",
                          flush=True)
                assert r["errors"] == 0 and r["scored"] == r["n"], r
    finally:
        for proc in (gen_proc, judge_proc):
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
