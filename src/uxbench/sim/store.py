"""A simulated-session run directory on disk.

    RUN_DIR/
      manifest.json   kind "sim": what was asked (personas and their hashes, models, mode, turns, trials, seed),
                      simulator template digests, schema version, environment
      sim.sqlite      one row per finished session (WAL, committed as each ends): the crash-safe store;
                      table `personas`: a copy of each persona the run used; table `judgements`: one row per
                      (session, judge key) for judged passes (`satisfaction:PROVIDER:MODEL`, ...)
      sessions.jsonl  the sessions in the canonical log format (one row per turn: conversation_id, turn_index,
                      role, content, created_at, feedback, message_id, metadata), so `uxbench mine run` reads them
      acts.jsonl      the sidecar: one row per session with each turn's act, satisfaction state, patience,
                      assessment and judge estimate, the termination, recovery chains, usage per party, and the
                      corruption gate's flags
      summary.json    the session metrics (`sim.summary`)

Sessions are keyed by `session_id` (INSERT OR REPLACE): a rerun never duplicates one, and resume reads the ids.
Several processes (`--procs`) write one database; SQLite's lock serialises their commits.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson

from uxbench.data import user_files
from uxbench.errors import DataError, UxbenchError
from uxbench.fileio import atomic_write_bytes, atomic_write_lines, atomic_writer, connect_sqlite
from uxbench.redact import scrubbed_json
from uxbench.runtime.batched_writes import BatchedWrites
from uxbench.runtime.cache import enable_wal
from uxbench.runtime.sent_ledger import FOLDED_SCHEMA, SentLedger, remove_ledgers
from uxbench.runtime.wal_checkpoint import BackgroundCheckpoints
from uxbench.sim.persona import Persona
from uxbench.sim.types import SessionRecord

_K = TypeVar("_K")

MANIFEST = "manifest.json"
SIM_DB = "sim.sqlite"
SESSIONS_LOG = "sessions.jsonl"
ACTS = "acts.jsonl"
SUMMARY = "summary.json"
KIND = "sim"
"""`manifest["kind"]` of a simulated-session run (Task 1-3 runs have none)."""
_ID_FIELDS = ("session_id", "persona_id", "persona_hash")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    idx INTEGER NOT NULL,
    persona_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    reason TEXT NOT NULL,
    n_turns INTEGER NOT NULL,
    final INTEGER NOT NULL DEFAULT 1,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_idx ON sessions(idx);
CREATE TABLE IF NOT EXISTS personas (
    persona_id TEXT PRIMARY KEY,
    persona_hash TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sent (
    party TEXT PRIMARY KEY,
    requests INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS judgements (
    session_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    status TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (session_id, judge)
);
""" + FOLDED_SCHEMA


def is_sim_run(path: str | Path) -> bool:
    """Whether `path` is a `uxbench sim run` directory (its manifest says kind "sim")."""
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        data = user_files.parse_json(user_files.read_bytes(manifest), str(manifest))
    except (OSError, DataError):
        return False
    return isinstance(data, dict) and data.get("kind") == KIND


class SimStore:
    """Read and write one simulated-session run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._checkpoints = BackgroundCheckpoints(self.path / SIM_DB)
        self._writes = BatchedWrites(self._open, checkpoints=self._checkpoints)
        self._ledger = SentLedger(self.path, self._conn, "party")

    @classmethod
    def open_existing(cls, path: str | Path) -> SimStore:
        if not is_sim_run(path):
            _read_json(Path(path) / MANIFEST)  # a damaged manifest: say so, with what to do
            raise UxbenchError(f"{path} is not a `uxbench sim run` directory (no {MANIFEST} of kind 'sim'). "
                               "Pass a directory printed by `uxbench sim run`.")
        return cls(path)

    def _conn(self) -> sqlite3.Connection:
        """The connection, with every write made so far committed (what a read should see)."""
        self._writes.flush()
        return self._open()

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.mkdir(parents=True, exist_ok=True)
            db = connect_sqlite(self.path / SIM_DB, timeout=60)
            enable_wal(db, 60.0)
            db.execute("PRAGMA synchronous=NORMAL")
            self._checkpoints.adopt(db)  # not inside a commit on the run's event loop
            db.executescript(_SCHEMA)
            self._db = db
        return self._db

    def close(self) -> None:
        """Commit what is waiting and close (raises a failed commit, after closing)."""
        try:
            self._ledger.fold()
            if self._db is not None or self._writes.pending:
                self._writes.flush()
        finally:
            self._checkpoints.close()
            if self._db is not None:
                self._db.close()
                self._db = None

    def discard(self) -> None:
        """Close, then delete what the run holds (`--fresh`): its database, exports and ledgers of requests sent (a
        killed run's count belongs to the run discarded). The manifest is left for the new run to replace."""
        self.close()
        for name in (SIM_DB, SIM_DB + "-wal", SIM_DB + "-shm", "sessions.jsonl", "acts.jsonl", "summary.json"):
            (self.path / name).unlink(missing_ok=True)
        remove_ledgers(self.path)

    def __enter__(self) -> SimStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- manifest and summary --------------------------------------------------------------
    def read_manifest(self) -> dict[str, Any] | None:
        return _read_json(self.path / MANIFEST)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        _write_json(self.path / MANIFEST, manifest)

    def read_summary(self) -> dict[str, Any] | None:
        return _read_json(self.path / SUMMARY)

    def write_summary(self, summary: dict[str, Any]) -> None:
        _write_json(self.path / SUMMARY, summary)

    # -- sessions --------------------------------------------------------------------------
    def put(self, record: SessionRecord) -> SessionRecord:
        """Store one finished session; committed before returning, or in a running event loop with the other writes
        of this turn of the loop (runtime/batched_writes.py). Returns the record as stored (what a read gives)."""
        record, body = scrubbed_json(record, keep=_ID_FIELDS, urls=False)  # no secret in play reaches the file
        self._writes.write(
            "INSERT OR REPLACE INTO sessions(session_id, idx, persona_id, trial, reason, n_turns, final, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (record.session_id, record.index, record.persona_id, record.trial, record.termination.reason,
             len(record.turns), int(is_final(record)), body),
        )
        return record

    def done_ids(self) -> set[str]:
        """Sessions a rerun does not run again: all but those the model under test's endpoint failed (after its
        retries), which a rerun retries. A simulator or assessor failure is an outcome, kept: retrying until the
        simulator behaves would select the sessions it happened to get right (SIMULATORS.md lesson 18)."""
        return {row[0] for row in self._conn().execute("SELECT session_id FROM sessions WHERE final = 1")}

    def progress(self) -> tuple[int, int]:
        """(sessions stored, their turns): what another process polls for the progress display."""
        row = self._conn().execute("SELECT COUNT(*), COALESCE(SUM(n_turns), 0) FROM sessions").fetchone()
        return int(row[0]), int(row[1])

    def iter_sessions(self, session_ids: Iterable[str] | None = None) -> Iterator[SessionRecord]:
        """Sessions in plan order; restricted to `session_ids` when given."""
        return self.iter_sessions_known({}, session_ids)

    def iter_sessions_known(self, known: Mapping[str, _K], session_ids: Iterable[str] | None = None,
                            ) -> Iterator[SessionRecord | _K]:
        """`iter_sessions`, with the value `known` holds for a session's id in place of its record (not read)."""
        wanted = set(session_ids) if session_ids is not None else None
        for sid, body in self._conn().execute("SELECT session_id, body FROM sessions ORDER BY idx, session_id"):
            if wanted is None or sid in wanted:
                got = known.get(sid)
                yield got if got is not None else SessionRecord.model_validate_json(body)

    # -- the personas the run used (a copy: the run stays readable when the files change) ----------
    def put_personas(self, personas: Iterable[Persona]) -> None:
        db = self._conn()
        db.execute("BEGIN")
        try:
            db.execute("DELETE FROM personas")
            # the persona's hash is of what it was (its identity); its text is stored without any secret in it
            rows = [(p.id, p.content_hash(), scrubbed_json(p, keep=(*_ID_FIELDS, "id"), urls=False)[1])
                    for p in personas]
            db.executemany("INSERT INTO personas(persona_id, persona_hash, body) VALUES (?, ?, ?)", rows)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def personas(self) -> dict[str, Persona]:
        """persona id -> the persona as the run used it."""
        rows = self._conn().execute("SELECT persona_id, body FROM personas ORDER BY rowid")
        return {pid: Persona.model_validate_json(body) for pid, body in rows}

    # -- judgements (a judge's per-turn satisfaction estimates; other judged passes use their own keys) -----
    def put_judgement(self, session_id: str, judge: str, body: dict[str, Any], *, ok: bool = True) -> None:
        self._writes.write(
            "INSERT OR REPLACE INTO judgements(session_id, judge, status, body) VALUES (?, ?, ?, ?)",
            (session_id, judge, "ok" if ok else "error", orjson.dumps(body)),
        )

    def judged_ids(self, judge: str) -> set[str]:
        rows = self._conn().execute("SELECT session_id FROM judgements WHERE judge = ? AND status = 'ok'", (judge,))
        return {row[0] for row in rows}

    def count_sent(self, party: str) -> None:
        """One more request sent by `party`, on disk when this returns (a line appended to this process's ledger,
        `runtime/sent_ledger.py`, folded into the table at close): requests in flight when the run is killed are
        counted too (their answers are lost, their cost may not be)."""
        self._ledger.count(party)

    def sent(self) -> dict[str, int]:
        """Requests sent per party, over every invocation on this directory (empty for older runs)."""
        return self._ledger.counts()

    def judges(self) -> list[str]:
        return [row[0] for row in self._conn().execute("SELECT DISTINCT judge FROM judgements ORDER BY judge")]

    def judgements(self, judge: str) -> dict[str, dict[str, Any]]:
        """session_id -> body, for one judge (successful ones)."""
        rows = self._conn().execute("SELECT session_id, body FROM judgements WHERE judge = ? AND status = 'ok'",
                                    (judge,))
        return {sid: orjson.loads(body) for sid, body in rows}

    def failed_judgements(self, judge: str) -> dict[str, dict[str, Any]]:
        """session_id -> body of the judgements with a failed call (a rerun asks them again)."""
        rows = self._conn().execute("SELECT session_id, body FROM judgements WHERE judge = ? AND status != 'ok'",
                                    (judge,))
        return {sid: orjson.loads(body) for sid, body in rows}

    # -- exports ---------------------------------------------------------------------------
    def export_log(self, session_ids: Iterable[str] | None = None) -> Path:
        """sessions.jsonl: every turn in the canonical log format (atomically)."""
        with self.exporting_log() as write:
            for record in self.iter_sessions(session_ids):
                write(log_lines(record))
        return self.path / SESSIONS_LOG

    @contextmanager
    def exporting_log(self) -> Iterator[Callable[[bytes], None]]:
        """sessions.jsonl written from the lines handed to the function this yields (each session's `log_lines`, in
        plan order, as `export_log` writes them), put in place when the block ends without an error: a run writes
        it in the pass its summary makes over the sessions, instead of reading them all again."""
        with atomic_writer(self.path / SESSIONS_LOG) as fh:
            def write(lines: bytes) -> None:
                fh.write(lines)

            yield write

    def export_acts(self, rows: Iterable[bytes]) -> Path:
        """acts.jsonl from its rows, serialised (`summary.summary_rows`)."""
        out = self.path / ACTS
        atomic_write_lines(out, rows)
        return out


def is_final(record: SessionRecord) -> bool:
    """False for a session ended by the model under test's failure (an endpoint down, a bad key): retried."""
    return not (record.termination.reason == "error" and record.termination.detail.startswith(MUT_ERROR))


MUT_ERROR = "model under test:"
UNUSABLE = "simulator output unusable twice"
"""The detail of a session that ended because both generations of a user message were discarded, followed by
their reasons: `UNUSABLE (reason; reason)`."""


def log_lines(record: SessionRecord) -> bytes:
    """The session's lines of sessions.jsonl (`canonical_rows`), each ending in a newline."""
    return b"".join(orjson.dumps(row) + b"\n" for row in canonical_rows(record))


def canonical_rows(record: SessionRecord) -> Iterator[dict[str, Any]]:
    """The session's turns as canonical log rows (`uxbench.mining.logformat`); timings are synthetic."""
    for turn in record.turns:
        row: dict[str, Any] = {
            "conversation_id": record.session_id, "turn_index": turn.turn_index, "role": turn.role,
            "content": turn.text, "created_at": turn.created_at,
            "message_id": f"{record.session_id}:{turn.turn_index}",
            "metadata": {"simulated": True, "synthetic_timing": True},
        }
        if turn.feedback is not None:
            row["feedback"] = turn.feedback
        yield row


def _read_json(path: Path) -> dict[str, Any] | None:
    if path.name == MANIFEST:
        fix = (f"it holds the run's configuration; the sessions are in {path.parent / SIM_DB}. Move it aside and rerun "
               "the `uxbench sim run` command that made the run with the same --out: it writes a new manifest and "
               "keeps every session made with that configuration")
    else:
        fix = "rerun the `uxbench sim run` command that made the run: it rewrites the file from the stored sessions"
    return user_files.read_json_object(path, fix=fix)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_bytes(path, (json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8"))
