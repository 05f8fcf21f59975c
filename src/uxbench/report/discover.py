"""Turn command-line arguments into run directories: paths, shell-style globs (quoted, so uxbench expands them)
and parent directories (every run directory directly inside). Used by `uxbench leaderboard` and `uxbench bias`.

A path named explicitly must be what the command reads; what a glob or a parent directory brings in is kept
when it is a finished run (or a pairwise comparison) and otherwise listed as skipped, with the reason.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path

from uxbench.errors import UxbenchError
from uxbench.report.compare import MINING_MARKERS
from uxbench.runs.pairwise_store import MANIFEST as PAIRWISE_MANIFEST
from uxbench.runs.store import MANIFEST, SAMPLES_DB, SUMMARY

_GLOB_CHARS = frozenset("*?[")


@dataclass
class Found:
    runs: list[Path] = field(default_factory=list)
    """Finished run directories (manifest and summary), in argument order, each once."""
    pairwise: list[Path] = field(default_factory=list)
    """`uxbench pairwise` output directories."""
    skipped: list[str] = field(default_factory=list)
    """'PATH: why' for directories a glob or a parent brought in that are neither."""


def _kind(path: Path) -> str | None:
    if (path / PAIRWISE_MANIFEST).is_file():
        return "pairwise"
    if (path / MANIFEST).is_file():
        mining = not (path / SAMPLES_DB).exists() and any((path / m).exists() for m in MINING_MARKERS)
        if not mining:  # `uxbench mine run` output also has a manifest.json
            return "run" if (path / SUMMARY).is_file() else "unfinished"
    return None


def _add(found: Found, path: Path, explicit: bool) -> bool:
    """Add `path` when it is a run or comparison; returns whether it was one of the two (or unfinished)."""
    kind = _kind(path)
    if kind == "run":
        if path not in found.runs:
            found.runs.append(path)
    elif kind == "pairwise":
        if path not in found.pairwise:
            found.pairwise.append(path)
    elif kind == "unfinished":
        if explicit:
            raise UxbenchError(f"{path} has no {SUMMARY}: the run has not finished. Rerun the same `uxbench run` "
                               "command to resume it, then try again.")
        found.skipped.append(f"{path}: not finished (no {SUMMARY})")
    else:
        return False
    return True


def _add_dir(found: Found, path: Path, explicit: bool) -> None:
    if _add(found, path, explicit):
        return
    children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    hits = [c for c in children if _kind(c) is not None]
    if not hits:
        if explicit:
            raise UxbenchError(f"{path} is not a run directory and holds none (no {MANIFEST} in it or in its "
                               "sub-directories). Pass directories printed by `uxbench run`.")
        found.skipped.append(f"{path}: not a run directory")
        return
    for child in children:
        if not _add(found, child, explicit=False):
            found.skipped.append(f"{child}: not a run directory")


def discover(args: list[str] | list[Path]) -> Found:
    """Run and comparison directories named by `args` (paths, globs, parent directories)."""
    found = Found()
    for arg in map(str, args):
        path = Path(arg)
        if path.is_dir():
            _add_dir(found, path, explicit=True)
        elif path.exists():
            raise UxbenchError(f"{path} is a file, not a run directory. Pass directories printed by `uxbench run`.")
        elif _GLOB_CHARS & set(arg):
            matches = sorted(Path(m) for m in glob.glob(arg) if Path(m).is_dir())
            if not matches:
                raise UxbenchError(f"{arg} matches no directory.")
            for match in matches:
                _add_dir(found, match, explicit=False)
        else:
            raise UxbenchError(f"{path}: no such directory. Pass a run directory printed by `uxbench run`.")
    if not found.runs and not found.pairwise:
        raise UxbenchError("No finished run directory was found in " + ", ".join(map(str, args))
                           + (f" (skipped: {'; '.join(found.skipped[:5])})" if found.skipped else "") + ".")
    return found
