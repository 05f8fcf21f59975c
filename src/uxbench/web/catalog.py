"""The directories `uxbench view` serves, each under a short id: requests name a run by that id and never by a
path, so a request can reach nothing but what was named on the command line.

The paths are looked at again while the server runs (`Catalog.refresh`, at most every few seconds, from the
start page and when an id is not known): a run written into a served directory after the server started
appears without a restart, and a run still being written (a manifest and records, no summary yet) is listed
as in progress (`PendingEntry`) until it finishes. An id, once given, keeps naming the same directory."""

from __future__ import annotations

import glob
import re
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.report.compare import MINING_MARKERS
from uxbench.report.discover import discover
from uxbench.runs.store import MANIFEST, SAMPLES_DB, SUMMARY, RunStore
from uxbench.sim.store import SimStore, is_sim_run

_UNSAFE = re.compile(r"[^\w.-]+")
"""Anything but letters (Chinese ones too), digits, `_`, `.` and `-` becomes `-` in an id."""
_GLOB_CHARS = frozenset("*?[")
REFRESH_S = 2.0
"""How often the served paths are looked at again, at most."""


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
class PendingEntry:
    """A run directory being written (or stopped before it finished): a manifest and records, no summary."""

    id: str
    path: Path

    def manifest(self) -> dict[str, Any]:
        with RunStore(self.path) as store:
            return store.read_manifest() or {}

    def progress(self) -> dict[str, Any]:
        """{records, errors, scores: {judge: n}, selected, holder, updated}: what the run has written so far, who
        writes it (the lock's holder: None when no process does, i.e. it stopped) and when it last wrote."""
        from uxbench.dirlock import read_lock_holder

        out: dict[str, Any] = {"records": 0, "errors": 0, "scores": {}, "selected": None,
                               "holder": read_lock_holder(self.path), "updated": None}
        db_path = self.path / SAMPLES_DB
        stamps = [p.stat().st_mtime for p in (db_path, self.path / (SAMPLES_DB + "-wal")) if p.exists()]
        out["updated"] = max(stamps) if stamps else None
        if not db_path.exists():
            return out
        try:
            with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)) as db:
                out["records"] = int(db.execute("SELECT COUNT(*) FROM records").fetchone()[0])
                out["errors"] = int(db.execute("SELECT COUNT(*) FROM records WHERE status = 'error'").fetchone()[0])
                out["scores"] = dict(db.execute("SELECT judge, COUNT(*) FROM scores GROUP BY judge").fetchall())
                selected = int(db.execute("SELECT COUNT(*) FROM selection").fetchone()[0])
                out["selected"] = selected or None
        except sqlite3.Error:  # being created right now: nothing to count yet
            pass
        return out


def _is_pending(path: Path) -> bool:
    """A run directory without its summary yet (not a mining output, not a simulated-user run)."""
    return ((path / MANIFEST).is_file() and (path / SAMPLES_DB).exists() and not (path / SUMMARY).exists()
            and not is_mining_dir(path) and not is_sim_run(path))


@dataclass
class Catalog:
    runs: dict[str, RunEntry] = field(default_factory=dict)
    mines: dict[str, MineEntry] = field(default_factory=dict)
    sims: dict[str, SimEntry] = field(default_factory=dict)
    pending: dict[str, PendingEntry] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    """The paths given on the command line, looked at again by `refresh`."""
    taken: set[str] = field(default_factory=set)
    checked: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run(self, run_id: str) -> RunEntry | None:
        found = self.runs.get(run_id)
        if found is None and self.refresh():
            found = self.runs.get(run_id)
        return found

    def mine(self, mine_id: str) -> MineEntry | None:
        found = self.mines.get(mine_id)
        if found is None and self.refresh():
            found = self.mines.get(mine_id)
        return found

    def refresh(self, every_s: float = REFRESH_S) -> bool:
        """Look at the served paths again (at most every `every_s` seconds): runs, outputs and simulated-user
        runs written since are added, runs in progress that finished move to the runs. Whether it looked."""
        if not self.args or time.monotonic() - self.checked < every_s or not self.lock.acquire(blocking=False):
            return False
        try:
            _scan(self, self.args)
        except (UxbenchError, OSError):  # a path removed or unreadable since the start: keep what is known
            pass
        finally:
            self.checked = time.monotonic()
            self.lock.release()
        return True


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


def _expand(arg: str) -> list[Path]:
    path = Path(arg)
    if not path.exists() and _GLOB_CHARS & set(arg):
        return sorted(Path(m) for m in glob.glob(arg) if Path(m).is_dir())
    return [path]


def _pending_among(paths: list[str]) -> list[Path]:
    """The runs in progress named by `paths` or directly inside a named parent."""
    found: list[Path] = []
    for arg in paths:
        for path in _expand(arg):
            if not path.is_dir():
                continue
            if _is_pending(path):
                found.append(path)
            elif not (path / MANIFEST).exists():
                found.extend(c for c in sorted(path.iterdir()) if c.is_dir() and _is_pending(c))
    return found


def _scan(catalog: Catalog, paths: list[str]) -> None:
    """Add to `catalog` what `paths` hold that it does not have yet (each directory keeps the id it was given)."""
    known = {e.path.resolve(): e.id for group in (catalog.runs, catalog.mines, catalog.sims, catalog.pending)
             for e in group.values()}
    runs, mines, sims = dict(catalog.runs), dict(catalog.mines), dict(catalog.sims)
    pending: dict[str, PendingEntry] = {}
    run_args: list[str] = []

    def add_mine(path: Path, base: str) -> None:
        if path.resolve() not in known:
            mid = _unique("mine-" + base, catalog.taken)
            mines[mid] = MineEntry(mid, path)
            known[path.resolve()] = mid

    for arg in paths:
        path = Path(arg)
        if path.is_dir() and is_mining_dir(path):
            add_mine(path, path.resolve().name)
            continue
        if path.is_dir() and _is_pending(path):
            continue  # listed below; `discover` refuses a run that has not finished
        if path.is_dir() and not (path / MANIFEST).exists():
            mining = [c for c in sorted(path.iterdir()) if c.is_dir() and is_mining_dir(c)]
            for child in mining:
                add_mine(child, child.name)
            if mining and not any(c.is_dir() and (c / SAMPLES_DB).exists() for c in path.iterdir()):
                continue
        run_args.append(arg)
    skipped: list[str] = []
    if run_args:
        try:
            found = discover(run_args)
        except UxbenchError:
            if not _pending_among(run_args):
                raise
            found = None  # a parent holding only runs in progress
        if found is not None:
            skipped = [s for s in found.skipped if not any(str(m.path) in s for m in mines.values())
                       and "not finished" not in s]
            for path in found.runs:
                if path.resolve() in known and known[path.resolve()] not in catalog.pending:
                    continue
                if is_sim_run(path):
                    manifest = SimStore(path).read_manifest() or {}
                    sid = _unique(str(manifest.get("run_id") or path.resolve().name), catalog.taken)
                    sims[sid] = SimEntry(sid, path)
                    continue
                rid = known.get(path.resolve())  # a run that was in progress keeps its id
                if rid is None:
                    with RunStore(path) as store:
                        manifest = store.read_manifest() or {}
                    rid = _unique(str(manifest.get("run_id") or path.resolve().name), catalog.taken)
                runs[rid] = RunEntry(rid, path)
    for path in _pending_among(paths):
        pid = known.get(path.resolve())
        if pid is None:
            with RunStore(path) as store:
                manifest = store.read_manifest() or {}
            pid = _unique(str(manifest.get("run_id") or path.resolve().name), catalog.taken)
        if pid not in runs:
            pending[pid] = PendingEntry(pid, path)
    catalog.runs, catalog.mines, catalog.sims, catalog.pending = runs, mines, sims, pending
    catalog.skipped = skipped


def build_catalog(paths: list[str]) -> Catalog:
    """Runs (finished run directories, parents of them, globs), runs in progress and mining outputs among
    `paths`."""
    catalog = Catalog(args=list(paths))
    _scan(catalog, paths)
    catalog.checked = time.monotonic()
    if not catalog.runs and not catalog.mines and not catalog.sims and not catalog.pending:
        raise UxbenchError("Nothing to show in " + ", ".join(paths) + ": pass run directories printed by "
                           "`uxbench run` or output directories of `uxbench mine run`.")
    return catalog
