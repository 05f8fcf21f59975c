"""Every README.md block marked `<!-- runnable offline -->` runs as written, command by command, in a temporary
directory: `uxbench` on the path, `$OPENAI_BASE_URL` (the model under test) and `$GRM_URL` (the judge) pointing
at loopback OpenAI-compatible servers, a private cache, no network. So the README cannot drift from the code."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from extra_skip import require_extra
from uxbench.testing import LoopbackConfig, LoopbackServer

README = Path(__file__).resolve().parents[1] / "README.md"
MARK = "<!-- runnable offline -->"


def runnable_blocks(text: str) -> list[tuple[int, list[str]]]:
    """(README line of the block's first command, its commands with `\\` continuations joined)."""
    lines = text.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        where = f"README.md:{i + 1}"
        assert j < len(lines) and lines[j].strip() == "```bash", f"{where}: {MARK} must precede a ```bash block"
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


def test_the_readme_marks_the_quick_start_and_the_rehearsal_as_runnable() -> None:
    blocks = runnable_blocks(README.read_text(encoding="utf-8"))
    commands = [c for _, block in blocks for c in block]
    assert len(blocks) >= 2 and any("--judge openai:UXBench-GRM" in c for c in commands)
    assert all(c.startswith("uxbench ") for c in commands), commands  # nothing else is run: no pip, no curl


def _shim(folder: Path) -> Path:
    """`uxbench` as the console script would run it: this interpreter, these sources."""
    script = folder / "uxbench"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m uxbench "$@"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


@pytest.mark.slow
def test_every_runnable_readme_block_runs_as_written(tmp_path: Path) -> None:
    require_extra("web")  # `uxbench site build`
    import uxbench

    blocks = runnable_blocks(README.read_text(encoding="utf-8"))
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = _shim(tmp_path)
    src = str(Path(uxbench.__file__).resolve().parents[1])
    with LoopbackServer(LoopbackConfig(default_answer="好")) as model, \
            LoopbackServer(LoopbackConfig(default_answer="好")) as grm:
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p),
            "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-readme-test", "GRM_URL": grm.base_url,
            "UXBENCH_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "COLUMNS": "120",
        }
        for line, commands in blocks:
            for command in commands:
                done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                                      text=True, timeout=600, check=False)
                assert done.returncode == 0, (
                    f"README.md block at line {line}: `{command}` exited {done.returncode}\n"
                    f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
                )
        assert model.stats.requests > 0 and grm.stats.requests > 0  # the rehearsal really called both
