"""Every command that needs an extra, run where that extra's modules cannot be imported (`without_extra`): one
`error:` line naming the command and the extra with its install line, exit 2, no traceback, nothing written.

The rows run in both environments of CI (with every extra installed too: the modules are hidden in the child
process), so they never skip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import judge_rows, log_rows, write_jsonl

from uxbench.extras import install_line
from without_extra import python_without, run_without

# (extra, the command as the message names it, the arguments after `uxbench`). `{d}` is the row's directory,
# which holds a Task 1 file `t1.jsonl`, a log `log.jsonl` and labels `labels.jsonl`.
ROWS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "plot": ("plot", "uxbench plot", ("plot", "{d}", "--kind", "scenario", "--out", "{d}/out/a.png")),
    "view": ("web", "uxbench view", ("view", "{d}", "--port", "0", "--index-dir", "{d}/index")),
    "site-build": ("web", "uxbench site build", ("site", "build", "{d}", "--out", "{d}/out")),
    "human-serve": ("web", "uxbench human serve", ("human", "serve", "{d}/study", "--port", "0")),
    "judge-train": ("judge", "uxbench judge train", ("judge", "train", "--data", "{d}/t1.jsonl", "--out", "{d}/out")),
    "judge-train-lora": ("lora", "uxbench judge train --method lora",
                         ("judge", "train", "--method", "lora", "--base-model", "embedded", "--data", "{d}/t1.jsonl",
                          "--out", "{d}/out")),
    "judge-eval-lite": ("judge", "uxbench judge eval", ("judge", "eval", "--judge", "lite:{d}/judge", "--data",
                                                          "{d}/t1.jsonl", "--no-baseline", "--runs-root", "{d}/out")),
    "judge-eval-baseline": ("judge", "uxbench judge eval", ("judge", "eval", "--judge", "scripted:always-good",
                                                              "--data", "{d}/t1.jsonl", "--baseline-train",
                                                              "{d}/t1.jsonl", "--runs-root", "{d}/out")),
    "judge-serve": ("judge", "uxbench judge serve", ("judge", "serve", "lite:{d}/judge", "--port", "0")),
    "train-signals": ("learn", "uxbench mine train-signals",
                      ("mine", "train-signals", "--labels", "{d}/labels.jsonl", "--log", "{d}/log.jsonl", "--out",
                       "{d}/out")),
    "mine-learned": ("learn", "uxbench mine run", ("mine", "run", "{d}/log.jsonl", "--out", "{d}/out", "--no-llm",
                                                   "--signals", "learned:{d}/clf")),
    "eval-signals-png": ("plot", "uxbench mine eval-signals",
                         ("mine", "eval-signals", "--labels", "{d}/labels.jsonl", "--log", "{d}/log.jsonl", "--plot",
                          "{d}/out/pr.png")),
    "mine-ray": ("ray", "uxbench mine run --engine ray", ("mine", "run", "{d}/log.jsonl", "--out", "{d}/out",
                                                           "--no-llm", "--engine", "ray")),
    "run-hub": ("hub", "uxbench run", ("run", "--data", "hf:mengze-hong/UXBench", "--model", "scripted:always-good",
                                        "--out", "{d}/out")),
    "data-validate-hub": ("hub", "uxbench data validate", ("data", "validate", "hf:mengze-hong/UXBench")),
    "data-stats-hub": ("hub", "uxbench data stats", ("data", "stats", "hf:mengze-hong/UXBench")),
    "run-anthropic": ("anthropic", "uxbench run", ("run", "--model", "anthropic:claude-sonnet-4-5", "--data",
                                                    "{d}/t1.jsonl", "--out", "{d}/out")),
    "run-google": ("google", "uxbench run", ("run", "--model", "google:gemini-2.5-flash", "--data", "{d}/t1.jsonl",
                                              "--out", "{d}/out")),
    "run-embedded": ("local", "uxbench run", ("run", "--data", "{d}/t1.jsonl", "--out", "{d}/out")),
    "score-anthropic": ("anthropic", "uxbench score", ("score", "{d}/eval_run", "--judge",
                                                        "anthropic:claude-sonnet-4-5")),
    "sim-run-embedded": ("local", "uxbench sim run", ("sim", "run", "--out", "{d}/out")),
    "mine-run-hf-agents": ("local", "uxbench mine run", ("mine", "run", "{d}/log.jsonl", "--out", "{d}/out",
                                                          "--model", "hf:embedded")),
    "sim-run-tau2": ("tau2", "uxbench sim run --tasks", ("sim", "run", "--tasks", "tau2:mock", "--model",
                                                         "scripted:reference-agent", "--simulator", "scripted:user",
                                                         "--out", "{d}/out")),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cli_support import invoke

    d = tmp_path_factory.mktemp("extras")
    write_jsonl(d / "t1.jsonl", judge_rows())
    write_jsonl(d / "log.jsonl", log_rows())
    write_jsonl(d / "labels.jsonl", [{"conversation_id": "c1", "u2_turn_index": 2, "label": "rephrase"}])
    (d / "judge").mkdir()
    (d / "clf").mkdir()
    eval_rows = [{"id": f"e{i}", "query": f"question {i}"} for i in range(3)]
    write_jsonl(d / "eval.jsonl", eval_rows)
    made = invoke("run", "--task", "eval", "--model", "scripted:echo", "--data", d / "eval.jsonl", "--out",
                  d / "eval_run", "--quiet")
    assert made.exit_code == 0, made.output
    made = invoke("human", "new", "--from", d / "t1.jsonl", "--n", "2", "--out", d / "study")
    assert made.exit_code == 0, made.output
    return d


@pytest.mark.parametrize("name", list(ROWS))
def test_a_command_without_its_extra_says_so_in_one_line(name: str, workdir: Path) -> None:
    extra, command, args = ROWS[name]
    out = workdir / "out"
    done = run_without(extra, *(a.replace("{d}", str(workdir)) for a in args))
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {command}"), done.stderr
    assert f"needs the {extra} extra" in lines[0] and install_line(extra) in lines[0], lines[0]
    assert not out.exists() or not any(out.iterdir()), sorted(p.name for p in out.rglob("*"))


def test_the_rows_name_every_extra_a_command_needs() -> None:
    """Each extra but `dev` (the test tools) has a command that needs it, and a row here."""
    from uxbench.extras import EXTRAS

    assert {extra for extra, _, _ in ROWS.values()} == set(EXTRAS) - {"dev"}


def test_the_blocker_hides_the_extra_and_only_it() -> None:
    """In the child process the extra's modules cannot be imported or found, and the core's still can."""
    code = """
import importlib.util, json
from uxbench.extras import installed
try:
    import matplotlib
    imported = True
except ModuleNotFoundError:
    imported = False
import numpy, pydantic, typer
print(json.dumps({"imported": imported, "found": importlib.util.find_spec("numpy") is not None,
                  "plot": installed("plot"), "core": numpy.__name__}))
"""
    done = python_without("plot", code)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"imported": False, "found": True, "plot": False, "core": "numpy"}
    version = run_without("plot", "--version")
    assert version.returncode == 0 and version.stdout.startswith("uxbench "), version.stdout + version.stderr
