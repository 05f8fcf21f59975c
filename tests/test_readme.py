"""The README cannot drift from the code.

- Every block marked `<!-- runnable offline -->` runs as written, command by command, in a temporary directory,
  with `uxbench` on the path, a private cache and nothing else set (no model server, no key, no network).
- The block marked `<!-- runnable with servers at $OPENAI_BASE_URL and $GRM_URL -->` (the rehearsal) runs the same
  way with those two pointing at loopback OpenAI-compatible servers.
- The install line and the test command are the ones CI's first stage runs (.ci/run); the core dependencies it
  lists and the extras in its table are pyproject.toml's.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from extra_skip import require_extra
from uxbench.testing import LoopbackConfig, LoopbackServer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARK = "<!-- runnable offline -->"
SERVERS_MARK = "<!-- runnable with servers at $OPENAI_BASE_URL and $GRM_URL -->"


def runnable_blocks(text: str, mark: str = MARK) -> list[tuple[int, list[str]]]:
    """(README line of the block's first command, its commands with `\\` continuations joined)."""
    lines = text.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != mark:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        where = f"README.md:{i + 1}"
        assert j < len(lines) and lines[j].strip() == "```bash", f"{where}: {mark} must precede a ```bash block"
        body: list[str] = []
        k = j + 1
        while not lines[k].startswith("```"):
            body.append(lines[k])
            k += 1
        blocks.append((j + 2, join_commands(body)))
    return blocks


def join_commands(body: list[str]) -> list[str]:
    commands: list[str] = []
    pending = ""
    for line in body:
        if line.rstrip().endswith("\\"):
            pending += line.strip()[:-1].rstrip() + " "
            continue
        command = (pending + line.strip()).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    assert not pending, f"a command ends with a continuation: {pending}"
    return commands


def test_the_block_reader_joins_continuations_and_skips_comments() -> None:
    text = f"x\n{MARK}\n\n```bash\n# a comment\nuxbench run \\\n    --task eval   # why\n\nuxbench report\n```\n"
    assert runnable_blocks(text) == [(5, ["uxbench run --task eval   # why", "uxbench report"])]


def test_the_readme_marks_the_quick_starts_and_the_rehearsal_as_runnable() -> None:
    text = README.read_text(encoding="utf-8")
    offline, rehearsal = runnable_blocks(text), runnable_blocks(text, SERVERS_MARK)
    commands = [c for _, block in offline + rehearsal for c in block]
    assert len(offline) >= 2 and any(c.startswith("uxbench mine run demo") for _, b in offline for c in b)
    assert len(rehearsal) == 1 and any("--judge openai:UXBench-GRM" in c for c in rehearsal[0][1])
    assert all(c.startswith("uxbench ") for c in commands), commands  # nothing else is run: no pip, no curl
    assert not any("$" in c for _, block in offline for c in block), "an offline block must need no variable"


def _shim(folder: Path) -> Path:
    """`uxbench` as the console script would run it: this interpreter, these sources."""
    script = folder / "uxbench"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m uxbench "$@"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def _run_blocks(blocks: list[tuple[int, list[str]]], tmp_path: Path, **settings: str) -> None:
    """Each command in one temporary directory, with nothing set but `settings` (no key, no server address)."""
    import uxbench

    work = tmp_path / "work"
    work.mkdir()
    bin_dir = _shim(tmp_path)
    src = str(Path(uxbench.__file__).resolve().parents[1])
    unset = ("OPENAI_", "GRM_", "ANTHROPIC_", "GOOGLE_", "GEMINI_", "UXBENCH_", "HF_")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(unset)},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p),
        "UXBENCH_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "COLUMNS": "120", **settings,
    }
    for line, commands in blocks:
        for command in commands:
            done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                                  text=True, timeout=600, check=False)
            assert done.returncode == 0, (
                f"README.md block at line {line}: `{command}` exited {done.returncode}\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )


@pytest.mark.slow
def test_every_offline_block_runs_as_written_with_nothing_set(tmp_path: Path) -> None:
    _run_blocks(runnable_blocks(README.read_text(encoding="utf-8")), tmp_path)


@pytest.mark.slow
def test_the_rehearsal_runs_against_two_servers(tmp_path: Path) -> None:
    require_extra("web")  # `uxbench site build`
    blocks = runnable_blocks(README.read_text(encoding="utf-8"), SERVERS_MARK)
    with LoopbackServer(LoopbackConfig(default_answer="好")) as model, \
            LoopbackServer(LoopbackConfig(default_answer="好")) as grm:
        _run_blocks(blocks, tmp_path, OPENAI_BASE_URL=model.base_url, GRM_URL=grm.base_url)
        assert model.stats.requests > 0 and grm.stats.requests > 0  # the rehearsal really called both


def _bash_block_after(text: str, heading: str) -> list[str]:
    start = text.index(heading)
    block = text[text.index("```bash\n", start) + len("```bash\n"):]
    return [line.split("  #")[0].strip() for line in block[:block.index("```")].splitlines() if line.strip()]


def test_ci_installs_and_tests_as_the_readme_says() -> None:
    """.ci/run's first stage is a new user: the README's install lines and its test command, exactly."""
    install = _bash_block_after(README.read_text(encoding="utf-8"), "## Install")
    two = _bash_block_after(README.read_text(encoding="utf-8"), "## The two commands")
    assert install == ['python3 -m venv .venv && . .venv/bin/activate', 'pip install -e ".[local,dev]"'], install
    assert "pytest" in two
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    first_stage = ci[:next(i for i, line in enumerate(ci) if line.startswith('stage "stage 2'))]
    assert "python3 -m venv .venv-ci && . .venv-ci/bin/activate" in first_stage  # the README's, in CI's own folder
    assert install[1] in first_stage and any(line.startswith("pytest ") for line in first_stage), first_stage
    assert not any(line.startswith(("pip ", "python -m pip")) and line != install[1] for line in first_stage)


def _pyproject() -> dict[str, object]:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11+")
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as handle:
        return dict(tomllib.load(handle)["project"])


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0].lower()


def test_the_readme_lists_the_core_dependencies_and_every_extra_of_pyproject() -> None:
    text = README.read_text(encoding="utf-8")
    listed = re.search(r"The core install runs every API model: ([^.]+)\.", text.replace("\n", " "))
    assert listed, "the README's sentence listing the core dependencies is gone"
    named = {name.strip().lower() for name in listed.group(1).split(",")}
    project = _pyproject()
    assert named == {_name(r) for r in project["dependencies"]}  # type: ignore[attr-defined]
    rows = set(re.findall(r"^\| `(\w+)` \|", text, flags=re.M))
    assert rows == set(project["optional-dependencies"]), rows  # type: ignore[call-overload]
