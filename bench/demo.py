"""The quick demo: the embedded model's first load (GGUF -> transformers directory, once) against a later load, and
`uxbench run --task eval` on the bundled demo set, first ever and later.

    python bench/demo.py            # a fresh model cache in a temporary directory: nothing of ~/.cache is changed
    python bench/demo.py --json     # the figures as JSON
    python bench/demo.py --defaults # the two default commands instead: `uxbench run` and `uxbench sim run`

Each step runs in its own process, as a user's commands do (imports count). The GGUF file is copied from the
model cache (or fetched as `uxbench run` fetches it) into the temporary cache, so the first load converts it
there. The response cache is off (`--no-cache`), so the later run generates and judges every case again.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOAD = """
import time
from uxbench.models.providers import _hf_engine as engine
started = time.monotonic()
source = engine.resolve_source("embedded")
engine.load(source, source.default_dtype, "cpu", False)
print(round(time.monotonic() - started, 1))
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):  # 1: the run finished but the tiny model's replies lost samples
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.monotonic() - started, done


def defaults(as_json: bool) -> None:
    """`uxbench run` and `uxbench sim run` as a new user first types them, each in its own process, the converted
    model already in the (temporary) cache and the response cache off: the README's expected times."""
    from uxbench.models import embedded

    embedded.embedded_transformers_dir()  # converted once, in the user's cache: not part of either figure
    with tempfile.TemporaryDirectory(prefix="uxbench-demo-bench-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        run_s, _ = timed([sys.executable, "-m", "uxbench", "run", "--quiet", "--no-cache", "--out",
                          str(Path(tmp) / "run")], env)
        sim_s, _ = timed([sys.executable, "-m", "uxbench", "sim", "run", "--quiet", "--no-cache", "--out",
                          str(Path(tmp) / "sim")], env)
        run = json.loads((Path(tmp) / "run" / "summary.json").read_text(encoding="utf-8"))
        sim = json.loads((Path(tmp) / "sim" / "summary.json").read_text(encoding="utf-8"))
    figures = {"run_s": round(run_s, 1), "run_cases": run.get("n_samples"), "sim_run_s": round(sim_s, 1),
               "sim_sessions": sim.get("n_sessions"), "sim_max_turns": sim.get("max_turns"), "cpus": os.cpu_count(),
               "load_average": os.getloadavg()[0]}
    if as_json:
        print(json.dumps(figures, indent=2))
        return
    print(f"uxbench run (Task 1, {figures['run_cases']} demo cases): {figures['run_s']} s")
    print(f"uxbench sim run ({figures['sim_sessions']} sessions of at most {figures['sim_max_turns']} replies): "
          f"{figures['sim_run_s']} s")
    print(f"{figures['cpus']} CPUs, load average {figures['load_average']:.1f} at the end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--defaults", action="store_true", help="time `uxbench run` and `uxbench sim run` instead")
    args = parser.parse_args()
    if args.defaults:
        defaults(args.json)
        return
    from uxbench.models import embedded

    gguf = embedded.embedded_model()
    with tempfile.TemporaryDirectory(prefix="uxbench-demo-bench-") as tmp:
        cache = Path(tmp) / "cache"
        env = {**os.environ, "UXBENCH_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
        target = cache / "models" / embedded.cached_path().relative_to(embedded.models_dir())
        target.parent.mkdir(parents=True)
        shutil.copyfile(gguf, target)
        python = [sys.executable, "-c", LOAD]
        first_load, _ = timed(python, env)
        later_load, later = timed(python, env)
        shutil.rmtree(cache / "models" / target.parent.name / "transformers")  # the first run converts again
        run = [sys.executable, "-m", "uxbench", "run", "--task", "eval", "--quiet", "--no-cache", "--out"]
        first_run, _ = timed([*run, str(Path(tmp) / "run1")], env)
        later_run, _ = timed([*run, str(Path(tmp) / "run2")], env)
        summary = json.loads((Path(tmp) / "run2" / "summary.json").read_text(encoding="utf-8"))
    figures = {
        "first_load_s": round(first_load, 1), "later_load_s": round(later_load, 1),
        "later_load_in_process_s": float(later.stdout.strip().splitlines()[-1]),
        "first_run_eval_demo_s": round(first_run, 1), "later_run_eval_demo_s": round(later_run, 1),
        "cases": summary.get("n_samples"), "cpus": os.cpu_count(), "load_average": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"first load (converts the GGUF file), own process: {figures['first_load_s']} s")
    print(f"later load, own process: {figures['later_load_s']} s ({figures['later_load_in_process_s']} s of it "
          "loading the weights)")
    print(f"uxbench run --task eval on the demo set ({figures['cases']} cases), first ever: "
          f"{figures['first_run_eval_demo_s']} s; later: {figures['later_run_eval_demo_s']} s")
    print(f"{figures['cpus']} CPUs, load average {figures['load_average']:.1f} at the end")


if __name__ == "__main__":
    main()
