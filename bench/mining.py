"""Throughput and peak memory of the deterministic mining stages, in-process versus Ray local.

    python bench/mining.py                    # 1,000,000 generated turns, both engines
    python bench/mining.py --turns 50000      # a quick run
    python bench/mining.py --engines local --workers 4 --batch-size 1000
    python bench/mining.py --log /tmp/signals_dev/pool.jsonl --engines local      # real text (see below)
    python bench/mining.py --log /tmp/signals_dev/pool.jsonl --engines local --workers 1 --profile /tmp/m.prof

Real text: `--log PATH` measures on an existing canonical log instead of a generated one, e.g. the 92,000-turn
ShareGPT development pool (`python ../shared/data/signals_dev/build_log.py /tmp/signals_dev/pool.jsonl --pool`,
about 810 characters a turn), where short synthetic turns would hide where the time goes. `--profile FILE`
runs the child under cProfile (with `--workers 1` every stage runs in that one process, so the profile
covers them all) and prints the top functions by cumulative and by own time.

A synthetic canonical log (Chinese and English conversations of 2-10 turns with timestamps, feedback,
regenerations, complaints, repeats, give-ups, personal data and ~3% near-duplicate conversations) is
streamed to a temporary file; then each engine runs `uxbench mine run --no-llm` over it in a fresh child
process (for Ray, a local instance started by the run). Reported: wall time and turns per second of the
whole run (Ray start-up included), seconds per stage, and the peak memory of the child's whole process
tree (workers, Ray's raylet, GCS and workers included), sampled every 0.25 s: the sum of RSS (counts
pages shared between processes once per process, so it overstates) and the sum of PSS (shared pages split
between the processes that map them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psutil

EN_OPEN = ["How do I", "Can you explain how to", "What is the best way to", "Help me", "Is it possible to",
           "Write a short guide to", "Tell me how to", "I need to"]
EN_TASK = ["set a static IP on", "back up the photos from", "speed up", "reset the password of", "clean the fan of",
           "update the drivers of", "share a printer from", "encrypt the disk of", "install Python on",
           "connect a second screen to", "recover deleted files from", "free up space on"]
EN_THING = ["my Windows laptop", "a Mac mini", "an old Android phone", "the office router", "a Linux server",
            "my gaming PC", "a Chromebook", "the family iPad", "a Raspberry Pi", "my work desktop"]
ZH_OPEN = ["请问怎么", "帮我看看如何", "我想知道怎样", "能不能教我", "有什么办法", "详细说说怎么"]
ZH_TASK = ["把IP改成静态的", "备份手机里的照片", "给电脑提速", "重置路由器密码", "清理笔记本风扇", "更新显卡驱动",
           "共享打印机", "给硬盘加密", "安装Python环境", "连接第二块显示器", "恢复误删的文件", "清理C盘空间"]
ZH_THING = ["用Windows笔记本", "在Mac上", "用旧的安卓手机", "在公司路由器上", "在Linux服务器上", "用游戏电脑",
            "在平板上", "用树莓派"]
ZH_REPLY = "首先打开系统设置，进入对应的页面，找到相关选项，按照提示一步一步操作，完成后重启设备再检查一次结果。"
EN_REPLY = ("Open the settings, go to the relevant page, find the option, follow the prompts step by step, and "
            "restart the device afterwards to check that everything works. ")
FOLLOW = {
    "zh": ["不对，我问的不是这个", "算了", "谢谢，很有帮助", "继续", "那如果是苹果电脑呢？", "答非所问", "好的",
           "能再详细一点吗？", "这个方法试过了，没用"],
    "en": ["That's wrong, not what I asked", "forget it", "thanks, that helped", "continue",
           "what about on a Mac?", "that doesn't answer my question", "ok", "can you give more detail?",
           "I tried that already and it didn't work"],
}


def _query(rnd: random.Random, lang: str) -> str:
    n = rnd.randint(2, 9999)
    if lang == "zh":
        text = f"{rnd.choice(ZH_OPEN)}{rnd.choice(ZH_THING)}{rnd.choice(ZH_TASK)}？型号{n}"
        if rnd.random() < 0.03:
            text += f"，我的手机号是1{rnd.choice('3578')}{rnd.randint(10**8, 10**9 - 1)}"
    else:
        text = f"{rnd.choice(EN_OPEN)} {rnd.choice(EN_TASK)} {rnd.choice(EN_THING)} (model {n})?"
        if rnd.random() < 0.03:
            text += f" My email is user{n}@example.com."
    return text


def generate(path: Path, n_turns: int, seed: int = 7) -> int:
    """Stream about ``n_turns`` canonical rows to ``path``; returns the number written."""
    rnd = random.Random(seed)
    start = datetime(2024, 5, 1, tzinfo=timezone.utc)
    written = conv = 0
    previous: list[str] = []
    with path.open("w", encoding="utf-8") as out:
        while written < n_turns:
            lang = "zh" if rnd.random() < 0.5 else "en"
            cid = f"conv-{conv:08d}"
            conv += 1
            t = start + timedelta(seconds=rnd.randrange(0, 30 * 86400))
            n_turns_here = rnd.choice([2, 2, 4, 4, 6, 6, 8, 10])
            query = rnd.choice(previous) if previous and rnd.random() < 0.03 else _query(rnd, lang)
            previous = [*previous, query][-50:]
            for i in range(n_turns_here):
                row: dict[str, object] = {"conversation_id": cid, "turn_index": i, "created_at": t.isoformat()}
                if i % 2 == 0:
                    row.update(role="user", content=query if i == 0 else rnd.choice(FOLLOW[lang]))
                else:
                    row.update(role="assistant", content=(ZH_REPLY if lang == "zh" else EN_REPLY) * rnd.randint(1, 5))
                    r = rnd.random()
                    if r < 0.05:
                        row["feedback"] = "dislike"
                    elif r < 0.10:
                        row["feedback"] = "like"
                    if rnd.random() < 0.02:  # a regenerated reply: the replaced one first, same turn_index
                        old = dict(row, content="(first attempt) " + str(row["content"])[:80], feedback=None)
                        out.write(json.dumps(old, ensure_ascii=False) + "\n")
                        written += 1
                        row["regeneration_index"] = 1
                t += timedelta(seconds=rnd.choice([2, 4, 15, 40, 90, 300]))
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                written += 1
    return written


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler(threading.Thread):
    """Peak RSS sum and PSS sum of a process and all its descendants."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.interval = interval
        self.peak_rss = self.peak_pss = 0
        self.peak_procs = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            rss = pss = 0
            for proc in procs:
                try:
                    rss += proc.memory_info().rss
                except psutil.Error:
                    continue
                pss += _pss_kb(proc.pid) * 1024
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.peak_procs = max(self.peak_procs, len(procs))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def _cpu_s() -> float:
    """CPU seconds of this process, of its finished children, and of every live process under it with the
    children it reaped (the workers forked by the fork server are not this process's children: they count
    while alive, then in the fork server's reaped children)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    live = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        live += times.user + times.system + times.children_user + times.children_system  # the server's workers
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + live


def child(args: argparse.Namespace) -> None:
    """One engine's run (in a fresh process); prints a JSON line with the timings."""
    from uxbench.mining.pipeline import MineConfig, run_pipeline

    marks: list[tuple[str, float, float]] = []
    t0 = time.perf_counter()

    def progress(line: str) -> None:
        marks.append((line.split(":", 1)[0], time.perf_counter() - t0, _cpu_s()))

    config = MineConfig(inputs=(args.log,), out=args.out, engine=args.engine, llm=False,
                        workers=args.workers, batch_size=args.batch_size)
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        result = profiler.runcall(run_pipeline, config, progress=progress)
        profiler.dump_stats(args.profile)
        for key in ("cumulative", "tottime"):
            pstats.Stats(profiler, stream=sys.stderr).sort_stats(key).print_stats(35)
        print(stage_cpu(pstats.Stats(profiler)), file=sys.stderr)
    else:
        result = run_pipeline(config, progress=progress)
    wall = time.perf_counter() - t0
    stages, last = {}, 0.0
    cpu: dict[str, float] = {}
    last_cpu = 0.0
    for name, at, used in marks:
        stages[name] = round(at - last, 1)
        cpu[name] = round(used - last_cpu, 1)
        last, last_cpu = at, used
    stages["outputs"] = round(wall - last, 1)
    cpu["outputs"] = round(_cpu_s() - last_cpu, 1)
    print(json.dumps({"wall_s": wall, "turns": result.stage_counts["ingest"]["turns"], "stages": stages, "cpu": cpu,
                      "sessions": result.stage_counts["sessions"]["sessions"]}))


STAGE_FUNCTIONS = {  # where each stage's work happens (with the local engine the map stages ride along in 01's job)
    "read + parse rows": ("driver_stages.py", "spill_inputs"),
    "group into sessions": ("driver_stages.py", "_grouped_batches"),
    "build sessions": ("engine.py", "_build_sessions"),
    "de-identification": ("stages.py", "deid_batch_table"),
    "gate": ("stages.py", "gate_map"),
    "prefilter": ("stages.py", "prefilter_map"),
    "signals (with MinHash signatures)": ("stages.py", "signals_map"),
    "dedup index (driver)": ("driver_stages.py", "run_dedup_stage"),
    "write shards": ("store.py", "write_table"),
    "output tables": ("outputs.py", "write_signal_tables"),
}


def stage_cpu(stats: Any) -> str:
    """Profiled seconds (cumulative) of each stage's function: with --workers 1 all of them run in the one
    process, so this is where the CPU goes (cProfile's own overhead included, most on many small calls)."""
    found: dict[str, float] = dict.fromkeys(STAGE_FUNCTIONS, 0.0)
    for (path, _, func), (_, _, _, cumulative, _) in stats.stats.items():
        for label, (file, name) in STAGE_FUNCTIONS.items():
            if func == name and path.endswith(file):
                found[label] += cumulative
    parts = ", ".join(f"{label} {seconds:.1f}" for label, seconds in found.items())
    return f"profiled seconds by stage (cumulative; total {stats.total_tt:.1f}): {parts}"


def measure(engine: str, log: Path, work: Path, args: argparse.Namespace) -> dict[str, object]:
    out = work / f"out-{engine}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, __file__, "--child", "--engine", engine, "--log", str(log), "--out", str(out),
           "--workers", str(args.workers), "--batch-size", str(args.batch_size)]
    if args.profile:
        cmd += ["--profile", args.profile]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "RAY_DEDUP_LOGS": "0"})
    sampler = TreeSampler(proc.pid)
    sampler.start()
    stdout, stderr = proc.communicate()
    sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"{engine} run failed:\n{stderr[-3000:]}")
    if args.profile:
        print(stderr, file=sys.stderr)
    info: dict[str, object] = json.loads(stdout.strip().splitlines()[-1])
    info.update(engine=engine, peak_rss_mb=sampler.peak_rss / 2**20, peak_pss_mb=sampler.peak_pss / 2**20,
                processes=sampler.peak_procs)
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--engines", default="local,ray")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="Keep the generated log and outputs.")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    parser.add_argument("--log", help="Measure on this canonical log (real text) instead of a generated one.")
    parser.add_argument("--profile", help="Run the child under cProfile and write the stats to this file.")
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    work = Path(tempfile.mkdtemp(prefix="uxbench-mining-bench-"))
    try:
        if args.log:
            log = Path(args.log)
            print(f"real log {log} ({log.stat().st_size / 2**20:.0f} MiB)", file=sys.stderr)
        else:
            log = work / "log.jsonl"
            t0 = time.perf_counter()
            rows = generate(log, args.turns)
            gen_s = time.perf_counter() - t0
            print(f"generated {rows:,} rows ({log.stat().st_size / 2**20:.0f} MiB) in {gen_s:.0f} s",
                  file=sys.stderr)
        results = [measure(engine, log, work, args) for engine in args.engines.split(",")]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    source = f"--log {args.log}" if args.log else f"--turns {args.turns}"
    print(f"\n`python bench/mining.py {source} --engines {args.engines} --workers {args.workers} "
          f"--batch-size {args.batch_size}` ({os.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB "
          f"RAM)\n")
    print("| engine | turns | conversations | wall s | turns/s | peak RSS sum (MiB) | peak PSS sum (MiB) | "
          "processes | seconds per stage (wall / CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        stages = ", ".join(f"{k} {v} / {r['cpu'].get(k, '-')}" for k, v in r["stages"].items())  # type: ignore[attr-defined]
        print(f"| {r['engine']} | {r['turns']:,} | {r['sessions']:,} | {r['wall_s']:.0f} | "
              f"{r['turns'] / r['wall_s']:,.0f} | {r['peak_rss_mb']:,.0f} | {r['peak_pss_mb']:,.0f} | "  # type: ignore[operator]
              f"{r['processes']} | {stages} |")
    print("\nCPU seconds count the driver and the worker processes that finished (a stage's pool ends with it); "
          "the load average during the run shows how quiet the machine was:", os.getloadavg())


if __name__ == "__main__":
    main()
