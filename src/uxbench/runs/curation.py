"""Curation of cases: mark a case excluded or flagged, with a reason, in `curation.sqlite` beside the data (a run
directory, a mining output, a data directory). Every change is an appended event (who, when, why), never an
update, so the file is its own audit trail; a case's state is its latest event.

`uxbench run` skips the cases whose state is `exclude` when a curation file lies in the data's directory (or its
parent, for a mining output's `cases/`), or is passed with `--curation FILE`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from uxbench.errors import UxbenchError
from uxbench.fileio import connect_sqlite, is_damage, sqlite_damaged

if TYPE_CHECKING:
    from uxbench.data.loaders import CaseSource

CURATION_DB = "curation.sqlite"
Action = Literal["exclude", "flag", "clear"]
ACTIONS: tuple[Action, ...] = ("exclude", "flag", "clear")
MAX_REASON = 2000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('exclude', 'flag', 'clear')),
    reason TEXT NOT NULL,
    who TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_case ON events(case_id, id);
"""


@dataclass(frozen=True)
class Event:
    id: int
    case_id: str
    action: str
    reason: str
    who: str
    at: str


class Curation:
    """One curation file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if not self.path.exists() and not create:
            return None
        fix = ("A curation file is written by `uxbench view` (its exclusions, with who and why): restore it from a "
               "backup, or pass another --curation")
        db = connect_sqlite(self.path, timeout=30, fix=fix + ".")
        try:
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            db.close()
            if is_damage(exc):
                raise sqlite_damaged(self.path, str(exc), fix + ".") from None
            raise
        return db

    def record(self, case_id: str, action: str, reason: str, who: str) -> Event:
        """Append one event; the reason and who are required (an audit trail without them says nothing)."""
        if action not in ACTIONS:
            raise UxbenchError(f"curation action must be one of {', '.join(ACTIONS)}, not {action!r}.")
        reason, who = reason.strip(), who.strip()
        if not case_id or not reason or not who:
            raise UxbenchError("curation needs a case id, a reason and who made the change.")
        if len(reason) > MAX_REASON:
            raise UxbenchError(f"the reason is longer than {MAX_REASON} characters.")
        at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        db = self._connect(create=True)
        assert db is not None
        try:
            with db:
                cur = db.execute("INSERT INTO events(case_id, action, reason, who, at) VALUES (?, ?, ?, ?, ?)",
                                 (case_id, action, reason, who[:200], at))
            return Event(int(cur.lastrowid or 0), case_id, action, reason, who[:200], at)
        finally:
            db.close()

    def events(self, case_id: str | None = None) -> list[Event]:
        """The audit trail, oldest first (of one case when given)."""
        db = self._connect(create=False)
        if db is None:
            return []
        try:
            sql = "SELECT id, case_id, action, reason, who, at FROM events"
            rows = db.execute(sql + " WHERE case_id = ? ORDER BY id", (case_id,)) if case_id else \
                db.execute(sql + " ORDER BY id")
            return [Event(*row) for row in rows]
        finally:
            db.close()

    def states(self) -> dict[str, Event]:
        """case_id -> its latest event, for cases whose latest event is not `clear`."""
        latest: dict[str, Event] = {}
        for event in self.events():
            latest[event.case_id] = event
        return {cid: e for cid, e in latest.items() if e.action != "clear"}

    def excluded(self) -> set[str]:
        return {cid for cid, e in self.states().items() if e.action == "exclude"}


def curation_for_data(data: str | Path) -> Path | None:
    """The curation file that applies to a data path: in its directory (the path itself when a directory), or in
    the parent of a mining output's `cases/` directory."""
    path = Path(data)
    folder = path if path.is_dir() else path.parent
    for candidate in (folder / CURATION_DB, folder.parent / CURATION_DB if folder.name == "cases" else None):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def curation_file(data: str | None, explicit: str | Path | None) -> Path | None:
    """The curation file a run honours: `--curation FILE` (which must exist), else one beside the data."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise UxbenchError(f"--curation {path}: no such file. Pass the {CURATION_DB} that `uxbench view` wrote "
                               "beside the data.")
        return path
    if data is None or str(data).startswith("hf:") or not Path(data).exists():
        return None
    return curation_for_data(data)


def curated(source: CaseSource, data: str | None, explicit: str | Path | None) -> CaseSource:
    """`source` without the cases the applicable curation file excludes (unchanged without one)."""
    path = curation_file(data, explicit)
    if path is None:
        return source
    excluded = Curation(path).excluded()
    return source.excluding(excluded) if excluded else source
