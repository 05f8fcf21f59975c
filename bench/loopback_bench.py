"""What the loopback benchmarks share (`throughput.py`, `protocol.py`, `sim.py`): the server in its own process, a
bare aiohttp client to compare with, another checkout to compare with (`--baseline-rev`), and the line that says
under which conditions the figures were taken.

Each measured step runs in a child process (`run_child`) with PYTHONPATH set to the checkout it measures, so that
this checkout, an older one and the bare client are timed alike, one after the other, round after round.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def start_server(latency_ms: float, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """The loopback OpenAI-compatible server in its own process; returns it and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "uxbench.testing.loopback", "--latency-ms", str(latency_ms), *extra],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(HERE / "src")},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"loopback server did not start: {url!r}")
    return proc, url


def stop(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def cpu_seconds() -> float:
    """User + system CPU of this process and of its child processes that have ended (a run's read-ahead worker,
    `uxbench.data.read_ahead`, is joined before the run returns): what the client costs, wherever it ran."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def own_cpu_seconds() -> float:
    """User + system CPU of this process alone (its event loop's thread and any others)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """fn's result, its wall seconds and the CPU seconds (user + system) of this process and the child processes
    it waited for while it ran (`cpu_seconds`)."""
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, cpu_seconds() - cpu0


def timed_split(fn: Callable[[], Any]) -> tuple[Any, float, float, float]:
    """`timed`, with the CPU seconds of this process alone as a fourth value."""
    own0 = own_cpu_seconds()
    out, wall, cpu = timed(fn)
    return out, wall, cpu, own_cpu_seconds() - own0


async def bare_client(url: str, bodies: Sequence[bytes], concurrency: int) -> float:
    """The same request bodies from a bare aiohttp client (a semaphore, `resp.read()`, nothing else): the
    ceiling this server and machine allow. Returns the wall seconds."""
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


def checkouts(baseline_rev: str | None, baseline_src: Path | None, tmp: Path) -> dict[str, Path]:
    """{"this (COMMIT)": src, and "baseline (REV)": its src when one is asked}."""
    found = {f"this ({commit(HERE)})": HERE / "src"}
    if baseline_rev:
        tar = subprocess.run(["git", "-C", str(HERE), "archive", baseline_rev, "src"], capture_output=True,
                             check=True).stdout
        tmp.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=tar, check=True)
        found[f"baseline ({baseline_rev})"] = tmp / "src"
    elif baseline_src is not None:
        found[f"baseline ({baseline_src})"] = baseline_src.resolve()
    return found


def commit(root: Path) -> str:
    """The checkout's short commit, with "+changes" when its src differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "src"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+changes" if dirty else "")


def conditions(extra: str = "") -> str:
    load = os.getloadavg()
    return (f"{time.strftime('%Y-%m-%d %H:%M')}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
            f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}" + (f"; {extra}" if extra else ""))


def run_child(script: Path, src: Path, args: Sequence[str]) -> dict[str, Any]:
    """Run `script --_child ARGS` with `src` first on PYTHONPATH; its last stdout line, as JSON."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(script.parent)])}
    done = subprocess.run([sys.executable, str(script), "--_child", *args], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")
