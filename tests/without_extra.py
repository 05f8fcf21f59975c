"""Run `uxbench` in a child process where an extra's modules cannot be imported, installed or not.

A finder placed first on `sys.meta_path` refuses the extra's own modules (`uxbench.extras.EXTRAS`) and their
submodules, as a machine without the extra would: `import matplotlib` raises ModuleNotFoundError and
`importlib.util.find_spec("matplotlib")` does too, so the command meets exactly what a user without the extra
meets. Nothing else of the process changes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from uxbench.extras import EXTRAS

_BLOCKER = """
import importlib.abc, sys
blocked = tuple(m for m in sys.argv[1].split(",") if m)

def _hidden(name):
    return any(name == m or name.startswith(m + ".") for m in blocked)

class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if _hidden(name):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

for name in [n for n in sys.modules if _hidden(n)]:
    del sys.modules[name]
sys.meta_path.insert(0, _Absent())
"""
_UXBENCH = """
sys.argv = ["uxbench", *sys.argv[2:]]
from uxbench.cli.main import main
main()
"""


def python_without(extra: str, code: str, *args: str, cwd: Path | None = None,
                   timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Python `code` (its `sys.argv[2:]` are `args`) with every module of `extra` hidden; output as text."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[1] / "src"),
                                                                    os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-c", _BLOCKER + code, ",".join(EXTRAS[extra].modules), *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def run_without(extra: str, *args: str, cwd: Path | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`uxbench ARGS` with every module of `extra` hidden."""
    return python_without(extra, _UXBENCH, *args, cwd=cwd, timeout=timeout)
