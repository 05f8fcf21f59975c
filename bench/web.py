"""Server time of `uxbench view` on a 100,000-sample run, and the server's memory.

Writes a Task 1 run of N samples directly through `RunStore` (each with its case: history, query, reply;
strata; the summary from the store, as `uxbench run` writes it), starts `uxbench view` on it as its own
process, and times each page over loopback with a plain HTTP client: the first request (answered at once by a
page that shows the index being built in the background) and the time until the sample browser is ready, then
`--repeat` requests of each page (median and p95, wall clock at the client, so loopback and the client's own
time are included), sorted pages and a sample's previous/next under a filter and a sort included. Memory: the
server's resident set at the end and its peak (VmHWM).

    python bench/web.py                 # 100,000 samples
    python bench/web.py --n 20000 --repeat 10

Goal: under 200 ms per page for the sample browser and the run page.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from uxbench.data.schema import CaseLabels, JudgeCase, Message
from uxbench.orchestrate.summary import run_summary
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.registry import create_task

SCENARIOS = ("work_productivity", "information_knowledge", "emotional_support", "creative_content",
             "private_daily_life", "product_service")
DIMENSIONS = ("verbosity", "factual_error", "accurate_answer", "practical_guidance", "intent_misunderstanding")
WORDS = ("network settings static address gateway recipe braise pork minutes budget travel itinerary essay "
         "paragraph summary apology refund invoice contract translation grammar 请假 邮件 红烧肉 预算 行程").split()


def write_run(path: Path, n: int) -> float:
    start = time.perf_counter()
    task = create_task("judge", {})
    store = RunStore(path)
    selected = []
    for i in range(n):
        gold = "good" if i % 2 else "bad"
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(40))
        case = JudgeCase(id=f"case-{i:06d}", query=f"question {i}: {words}", response=f"reply {i}: {words} " * 3,
                         label=gold, history=[Message(role="user", content=f"hello {i}"),  # type: ignore[arg-type]
                                              Message(role="assistant", content="hi, how can I help?")],
                         labels=CaseLabels(scenario_key=SCENARIOS[i % 6], difficulty=("easy", "medium", "hard")[i % 3]))
        pred = gold if i % 5 else ("good" if gold == "bad" else "bad")
        spread = ((i * 7919) % 1000) / 1000  # p(good) of a logprob verdict: on the side of the prediction
        sid = f"s{i:06d}"
        selected.append(sid)
        store.put(SampleRecord(sample_id=sid, case_id=case.id, index=i, status="ok", gold=gold, prediction=pred,
                               raw_output=f"verdict: {pred}", parse_note="top logprobs",
                               score=round(0.5 + 0.5 * spread if pred == "good" else 0.5 * spread, 4),
                               strata={"scenario": SCENARIOS[i % 6], "dimension": DIMENSIONS[i % 5],
                                       "difficulty": case.labels.difficulty, "n_turns": 2}),
                  case.__pydantic_serializer__.to_json(case))
    store.write_selection(selected)
    manifest = {"run_id": path.name, "task": "judge", "task_config": {**task.config(), "verdict_from": "logprobs"},
                "model": {"spec": "openai:bench-model", "args": {}},
                "data": {"description": "bench cases", "fingerprint": "bench", "demo": False}}
    store.write_manifest(manifest)
    store.write_summary(run_summary(store, task, manifest, SummaryOptions(n_boot=200), selected=selected))
    store.close()
    return time.perf_counter() - start


def _memory(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]
    peak = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]
    return rss, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "bench-run"
        wrote = write_run(run, args.n)
        print(f"wrote {args.n} samples through RunStore in {wrote:.1f} s "
              f"({(run / 'samples.sqlite').stat().st_size / 2**20:.0f} MiB)")
        proc = subprocess.Popen([sys.executable, "-m", "uxbench", "view", str(run), "--port", "0", "--index-dir",
                                 str(Path(tmp) / "index")], stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            base = re.search(r"(http://\S+)/", line).group(1)  # type: ignore[union-attr]
            client = httpx.Client(timeout=600)
            for _ in range(100):
                try:
                    client.get(base + "/static/style.css")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            rss0, _ = _memory(proc.pid)
            t = time.perf_counter()
            status = client.get(f"{base}/runs/{run.name}/samples").status_code
            answered = time.perf_counter() - t
            while status == 202:  # the page that shows the build's progress; it reloads every 2 s
                time.sleep(0.5)
                status = client.get(f"{base}/runs/{run.name}/samples").status_code
            assert status == 200, status
            ready = time.perf_counter() - t
            print(f"server RSS before the first page: {rss0:.0f} MiB; first sample page answered in "
                  f"{1000 * answered:.0f} ms (the index being built), the browser ready after {ready:.1f} s")
            pages = {
                "run page": f"/runs/{run.name}",
                "samples, page 1": f"/runs/{run.name}/samples",
                "samples, page 1000": f"/runs/{run.name}/samples?page=1000",
                "samples, gold=bad & incorrect": f"/runs/{run.name}/samples?gold=bad&correct=no",
                "samples, scenario & difficulty":
                    f"/runs/{run.name}/samples?scenario=emotional_support&difficulty=hard",
                "samples, search, 1 match": f"/runs/{run.name}/samples?q=case-{min(54321, args.n - 1):06d}",
                "samples, search, every sample matches": f"/runs/{run.name}/samples?q=itinerary",
                "samples, search 2 chars, common (a scan that stops early)":
                    f"/runs/{run.name}/samples?q=%E9%A2%84%E7%AE%97",
                "samples, search 2 chars, no match (a whole scan)": f"/runs/{run.name}/samples?q=zq",
                "samples, sorted by turns (descending), page 1": f"/runs/{run.name}/samples?sort=turns&dir=desc",
                "samples, sorted by case id, page 1000": f"/runs/{run.name}/samples?sort=case&page=1000",
                "samples, search (every sample) sorted by scenario":
                    f"/runs/{run.name}/samples?q=itinerary&sort=scenario",
                "samples, judge's output search": f"/runs/{run.name}/samples?jq=verdict%3A+bad",
                "one sample": f"/runs/{run.name}/samples/{min(54321, args.n)}",
                "one sample, previous/next under gold=bad, sorted by case":
                    f"/runs/{run.name}/samples/{min(54321, args.n)}?gold=bad&sort=case&dir=desc",
                "start page (leaderboard)": "/",
                "samples, confident errors first (p(good) column)":
                    f"/runs/{run.name}/samples?correct=no&sort=confidence&dir=desc",
                "samples, sorted by p(good), page 1000": f"/runs/{run.name}/samples?sort=score&page=1000",
                "compare form": "/compare",
                "export CSV, gold=bad & incorrect": f"/runs/{run.name}/samples.csv?gold=bad&correct=no",
                "export JSON Lines, gold=bad & incorrect": f"/runs/{run.name}/samples.jsonl?gold=bad&correct=no",
                "export CSV, every sample": f"/runs/{run.name}/samples.csv",
            }
            print("\n| page | median ms | p95 ms | bytes |\n|---|---|---|---|")
            for name, path in pages.items():
                warm = client.get(base + path)  # warm (the leaderboard is computed once per summary)
                if warm.status_code in (400, 404):  # a page this version of the view does not have
                    print(f"| {name} | not served ({warm.status_code}) | | |")
                    continue
                times = []
                for _ in range(min(args.repeat, 5) if "export" in name else args.repeat):
                    t = time.perf_counter()
                    response = client.get(base + path)
                    times.append((time.perf_counter() - t) * 1000)
                    assert response.status_code == 200, (path, response.status_code)
                times.sort()
                p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
                print(f"| {name} | {statistics.median(times):.0f} | {p95:.0f} | {len(warm.content):,} |")
            rss, peak = _memory(proc.pid)
            print(f"\nserver memory: RSS {rss:.0f} MiB at the end, peak {peak:.0f} MiB; index file "
                  f"{sum(p.stat().st_size for p in (Path(tmp) / 'index').iterdir()) / 2**20:.0f} MiB")
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
