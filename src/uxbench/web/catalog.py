"""The directories `uxbench view` serves, each under a short id: requests name a run by that id and never by a
path, so a request can reach nothing but what was named on the command line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.report.compare import MINING_MARKERS
from uxbench.report.discover import discover
from uxbench.runs.store import MANIFEST, SAMPLES_DB, RunStore
from uxbench.sim.store import SimStore, is_sim_run

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class RunEntry:
    id: str
    path: Path

    def manifest(self) -> dict[str, Any]:
        with RunStore(self.path) as store:
            return store.read_manifest() or {}

    def summary(self) -> dict[str, Any]:
        """Read on every use, so a page shows the summary as it is now (a re-scored run, a resumed one)."""
        with RunStore(self.path) as store:
            return store.read_summary() or {}


@dataclass
class MineEntry:
    id: str
    path: Path


@dataclass
class SimEntry:
    """A simulated-session run (`uxbench sim run`)."""

    id: str
    path: Path

    def summary(self) -> dict[str, Any]:
        from uxbench.sim.store import SimStore

        return SimStore(self.path).read_summary() or {}

    def store(self) -> Any:
        from uxbench.sim.store import SimStore

        return SimStore(self.path)


@dataclass
class Catalog:
    runs: dict[str, RunEntry] = field(default_factory=dict)
    mines: dict[str, MineEntry] = field(default_factory=dict)
    sims: dict[str, SimEntry] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def run(self, run_id: str) -> RunEntry | None:
        return self.runs.get(run_id)

    def mine(self, mine_id: str) -> MineEntry | None:
        return self.mines.get(mine_id)


def is_mining_dir(path: Path) -> bool:
    return ((path / MANIFEST).is_file() and not (path / SAMPLES_DB).exists()
            and any((path / m).exists() for m in MINING_MARKERS))


def _unique(base: str, taken: set[str]) -> str:
    slug = _UNSAFE.sub("-", base).strip("-.") or "run"
    name, i = slug, 2
    while name in taken:
        name, i = f"{slug}-{i}", i + 1
    taken.add(name)
    return name


def build_catalog(paths: list[str]) -> Catalog:
    """Runs (finished run directories, parents of them, globs) and mining outputs among `paths`."""
    catalog = Catalog()
    taken: set[str] = set()
    run_args: list[str] = []
    for arg in paths:
        path = Path(arg)
        if path.is_dir() and is_mining_dir(path):
            mid = _unique("mine-" + path.resolve().name, taken)
            catalog.mines[mid] = MineEntry(mid, path)
            continue
        if path.is_dir() and not (path / MANIFEST).exists():
            mining = [c for c in sorted(path.iterdir()) if c.is_dir() and is_mining_dir(c)]
            for child in mining:
                mid = _unique("mine-" + child.name, taken)
                catalog.mines[mid] = MineEntry(mid, child)
            if mining and not any(c.is_dir() and (c / SAMPLES_DB).exists() for c in path.iterdir()):
                continue
        run_args.append(arg)
    if run_args:
        found = discover(run_args)
        catalog.skipped.extend(s for s in found.skipped if not any(str(m.path) in s for m in catalog.mines.values()))
        for path in found.runs:
            if is_sim_run(path):
                manifest = SimStore(path).read_manifest() or {}
                sid = _unique(str(manifest.get("run_id") or path.resolve().name), taken)
                catalog.sims[sid] = SimEntry(sid, path)
                continue
            with RunStore(path) as store:
                manifest = store.read_manifest() or {}
            rid = _unique(str(manifest.get("run_id") or path.resolve().name), taken)
            catalog.runs[rid] = RunEntry(rid, path)
    if not catalog.runs and not catalog.mines and not catalog.sims:
        raise UxbenchError("Nothing to show in " + ", ".join(paths) + ": pass run directories printed by "
                           "`uxbench run` or output directories of `uxbench mine run`.")
    return catalog
