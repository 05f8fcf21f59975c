"""Tasks 2/3 throughput: generation, then GRM scoring, against loopback OpenAI-compatible servers.

    python bench/protocol.py                        # 3,000 Task-2 cases, concurrency 64, 100 ms latency
    python bench/protocol.py --samples 5000 --concurrency 64 128 --rounds 3
    PYTHONPATH=../old/src python bench/protocol.py  # an older checkout (the bare client is the same code)

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
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_bench import bare_client, conditions, median, start_server, stop, timed


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
    p.add_argument("--rounds", type=int, default=1)
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
            print(conditions(f"{args.samples} samples, latency {args.latency_ms:g} ms"))
            print("| round | step | concurrency | samples | wall s | achieved/s | achieved/ideal "
                  "| bare client/ideal | harness / bare client | client CPU ms/sample |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            ratios: dict[tuple[int, str], list[float]] = {}
            for c in args.concurrency:
                ideal = c / (args.latency_ms / 1000)
                for rnd in range(1, args.rounds + 1):
                    r = run_steps(gen_url, judge_url, data, work / f"r{rnd}", c)
                    bare = {"gen": asyncio.run(bare_client(gen_url, gen_bodies, c)),
                            "score": asyncio.run(bare_client(judge_url, grm_bodies, c))}
                    for step in ("gen", "score"):
                        rate = r["n"] / r[f"{step}_wall"]
                        name = "generation" if step == "gen" else "GRM scoring"
                        bare_rate = len(gen_bodies) / bare[step]
                        ratios.setdefault((c, name), []).append(rate / bare_rate)
                        print(f"| {rnd} | {name} | {c} | {r['n']} | {r[f'{step}_wall']:.1f} | {rate:.0f} | "
                              f"{rate / ideal:.2f} | {bare_rate / ideal:.2f} | {rate / bare_rate:.2f} | "
                              f"{1000 * r[f'{step}_cpu'] / r['n']:.2f} |", flush=True)
                    assert r["errors"] == 0 and r["scored"] == r["n"], r
            print()
            for (c, name), values in ratios.items():
                print(f"concurrency {c}: {name} harness / bare client = {median(values):.3f} "
                      f"(median of {len(values)} rounds)")
            print(conditions("at the end"))
    finally:
        stop(gen_proc, judge_proc)


if __name__ == "__main__":
    main()
