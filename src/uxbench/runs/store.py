"""A run directory on disk.

    RUN_DIR/
      manifest.json    what was asked: full config, dataset fingerprint, versions, git revision, template hashes
      samples.sqlite   one row per sample (with the case it ran on), committed as each completes (WAL; during a
                       run, the samples finished in one turn of the event loop together: runtime/batched_writes.py):
                       the crash-safe store; Tasks 2/3 add one row per (sample, judge) in table `scores`
      samples.jsonl    export of the records, written at the end of a run (convenience copy)
      summary.json     the metrics

Records are keyed by `sample_id` (INSERT OR REPLACE), so a rerun can never duplicate a sample:
resume reads the set of finished ids instead of re-scanning a JSONL file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from uxbench.data import user_files
from uxbench.errors import UxbenchError
from uxbench.fileio import (
    atomic_write_bytes,
    atomic_write_lines,
    atomic_writer,
    connect_sqlite,
    is_damage,
    sqlite_damaged,
)
from uxbench.redact import has_secret, scrub, scrubbed_json
from uxbench.runs.records import SampleRecord, ScoreRecord
from uxbench.runtime.batched_writes import BatchedWrites
from uxbench.runtime.cache import enable_wal
from uxbench.runtime.sent_ledger import FOLDED_SCHEMA, SentLedger, remove_ledgers
from uxbench.runtime.wal_checkpoint import BackgroundCheckpoints

MANIFEST = "manifest.json"
SAMPLES_DB = "samples.sqlite"
SAMPLES_JSONL = "samples.jsonl"
SCORES_JSONL = "scores.jsonl"
SUMMARY = "summary.json"
MINING_MARKERS = ("stage_counts.json", "signals.parquet", "work")
"""Entries of a `uxbench mine run` output directory (which also has a manifest.json)."""
_ID_FIELDS = ("sample_id", "case_id", "judge")  # hashes and ids: never scrubbed (a short secret could match)

READ_CHUNK = 256
"""Records a scoring step reads at a time (`RunStore.iter_with_cases`)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    sample_id TEXT PRIMARY KEY,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS records_idx ON records(idx);
CREATE TABLE IF NOT EXISTS scores (
    sample_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (sample_id, judge)
);
CREATE TABLE IF NOT EXISTS selection (
    pos INTEGER PRIMARY KEY,
    sample_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sent (
    role TEXT PRIMARY KEY,
    requests INTEGER NOT NULL
);
""" + FOLDED_SCHEMA


def recovery_hint(run_dir: Path) -> str:
    """What to do about a damaged samples.sqlite: recover its readable records with the sqlite3 shell (the run
    then resumes from them and redoes the rest), fall back on the samples.jsonl copy, or start over."""
    db = run_dir / SAMPLES_DB
    recovered = run_dir / "samples.recovered.sqlite"
    copy = run_dir / SAMPLES_JSONL
    jsonl = (f"{copy} holds a copy of its records as of the last finished invocation." if copy.is_file()
             else f"No {SAMPLES_JSONL} copy is there.")
    return (f"It is the run's record store, and uxbench cannot read it. {jsonl} "
            f"A sqlite3 shell built with .recover may get more back: `sqlite3 {db} .recover | sqlite3 {recovered}`, "
            f"then `mv {recovered} {db}` (delete any {SAMPLES_DB}-wal / -shm beside it) and rerun the same command: "
            "it redoes only the samples that were lost. Otherwise move the damaged file aside and rerun with "
            "--fresh to start the run over.")


class RunStore:
    """Read and write one run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self.rebuilt: tuple[int, int, int] | None = None
        """(records, scores, unreadable lines) read back from the JSON Lines copies when samples.sqlite was
        missing (`_rebuild`); None when it was there."""
        self.cases_missing: set[str] = set()
        """Sample ids rebuilt without their case (the copies hold none): the runner stores it when it meets it."""
        self._checkpoints = BackgroundCheckpoints(self.path / SAMPLES_DB)
        self._writes = BatchedWrites(self._open, checkpoints=self._checkpoints)
        self._ledger = SentLedger(self.path, self._conn, "role")

    # -- lifecycle -------------------------------------------------------------------------
    @classmethod
    def open_existing(cls, path: str | Path) -> RunStore:
        """A run directory to read (or score): refused, before any file is created in it, when it is none, or is
        a mining output or a sim run (which have a manifest.json too)."""
        store = cls(path)
        if not (store.path / MANIFEST).is_file():
            raise UxbenchError(
                f"{store.path} is not a uxbench run directory (no {MANIFEST}). "
                "Pass a directory printed by `uxbench run`."
            )
        if not (store.path / SAMPLES_DB).exists() and not (store.path / SAMPLES_JSONL).exists():
            if any((store.path / m).exists() for m in MINING_MARKERS):
                raise UxbenchError(f"{store.path} is the output of `uxbench mine run`, not a run directory: use "
                                   f"`uxbench mine report {store.path}`, or run its cases with `uxbench run --data "
                                   f"{store.path / 'cases'}`.")
            if (store.path / "sim.sqlite").exists():
                raise UxbenchError(f"{store.path} is a `uxbench sim run` directory (simulated sessions), not a run "
                                   "of Tasks 1-3: `uxbench report` and the `uxbench sim` commands read it.")
        return store

    def _conn(self) -> sqlite3.Connection:
        """The connection, with every write made so far committed (what a read should see)."""
        self._writes.flush()
        return self._open()

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.mkdir(parents=True, exist_ok=True)
            path = self.path / SAMPLES_DB
            lost = not path.exists() and (self.path / MANIFEST).is_file() and (self.path / SAMPLES_JSONL).is_file()
            fix = recovery_hint(self.path)
            db = connect_sqlite(path, timeout=30, fix=fix)  # private, like every run file
            try:
                enable_wal(db, 30.0)
                db.execute("PRAGMA synchronous=NORMAL")
                self._checkpoints.adopt(db)  # not inside a commit on the run's event loop
                db.executescript(_SCHEMA)
                columns = {row[1] for row in db.execute("PRAGMA table_info(records)")}
                if "case_json" not in columns:  # run directories written before cases were stored
                    db.execute("ALTER TABLE records ADD COLUMN case_json BLOB")
            except sqlite3.DatabaseError as exc:
                db.close()
                if is_damage(exc):
                    raise sqlite_damaged(path, str(exc), fix) from None
                raise
            self._db = db
            if lost:
                self.rebuilt = self._rebuild(db)
        return self._db

    def _rebuild(self, db: sqlite3.Connection) -> tuple[int, int, int]:
        """samples.sqlite was deleted but its copies are there: read the records (samples.jsonl) and the scores
        (scores.jsonl) back, so a rerun redoes nothing they hold. Lines that cannot be read are counted."""
        counts = [0, 0, 0]
        db.execute("BEGIN")
        try:
            for name, kind in ((SAMPLES_JSONL, SampleRecord), (SCORES_JSONL, ScoreRecord)):
                path = self.path / name
                if not path.is_file():
                    continue
                with path.open("rb") as handle:
                    for line in handle:
                        if not line.strip():
                            continue
                        try:
                            rec = kind.model_validate_json(line)
                        except ValueError:
                            counts[2] += 1
                            continue
                        if isinstance(rec, SampleRecord):
                            db.execute("INSERT OR REPLACE INTO records(sample_id, idx, status, body) "
                                       "VALUES (?, ?, ?, ?)", (rec.sample_id, rec.index, rec.status, line.strip()))
                            self.cases_missing.add(rec.sample_id)
                            counts[0] += 1
                        else:
                            db.execute("INSERT OR REPLACE INTO scores(sample_id, judge, idx, status, body) "
                                       "VALUES (?, ?, ?, ?, ?)", (rec.sample_id, rec.judge, rec.index, rec.status,
                                                                  line.strip()))
                            counts[1] += 1
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return counts[0], counts[1], counts[2]

    def put_case(self, sample_id: str, case_json: bytes) -> None:
        """The case of a record rebuilt without it (`cases_missing`)."""
        self._conn().execute("UPDATE records SET case_json = ? WHERE sample_id = ?", (case_json, sample_id))
        self.cases_missing.discard(sample_id)

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
        for name in (SAMPLES_DB, SAMPLES_DB + "-wal", SAMPLES_DB + "-shm", "summary.json", "samples.jsonl",
                     "scores.jsonl"):
            (self.path / name).unlink(missing_ok=True)
        remove_ledgers(self.path)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- manifest and summary --------------------------------------------------------------
    def read_manifest(self) -> dict[str, Any] | None:
        return _read_json(self.path / MANIFEST)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        _write_json_atomic(self.path / MANIFEST, manifest)

    def read_summary(self) -> dict[str, Any] | None:
        return _read_json(self.path / SUMMARY)

    def write_summary(self, summary: dict[str, Any]) -> None:
        _write_json_atomic(self.path / SUMMARY, summary)

    # -- records ---------------------------------------------------------------------------
    def put(self, record: SampleRecord, case_json: bytes | None = None) -> None:
        """Store one finished sample and the case it ran on; committed before returning, or in a running event loop
        with the other writes of this turn of the loop (runtime/batched_writes.py).

        The case makes the run self-contained: re-scoring and viewers read it from here, not from the input."""
        record, body = scrubbed_json(record, keep=_ID_FIELDS, urls=False)  # no secret in play reaches the file
        if case_json is not None and has_secret(case_json, urls=False):  # a key pasted into the data, too
            case_json = scrub(case_json.decode("utf-8"), urls=False).encode("utf-8")
        self._writes.write(
            "INSERT OR REPLACE INTO records(sample_id, idx, status, body, case_json) VALUES (?, ?, ?, ?, ?)",
            (record.sample_id, record.index, record.status, body, case_json),
        )

    def count_sent(self, role: str) -> None:
        """One more request sent by `role` (model, judge:KEY, strategy:KEY), on disk when this returns (a line
        appended to this process's ledger, `runtime/sent_ledger.py`, folded into the table at close): the caller
        sends the request after this returns, so requests in flight when the run is killed are counted too."""
        self._ledger.count(role)

    def sent(self) -> dict[str, int]:
        """Requests sent per role, over every invocation on this directory (empty for older runs)."""
        return self._ledger.counts()

    def iter_with_cases(self, sample_ids: Iterable[str] | None = None) -> Iterator[tuple[SampleRecord, bytes | None]]:
        """(record, case JSON) in data order; the case is None for records written before cases were stored.

        Read in chunks of `READ_CHUNK`, each query done before the first of its rows is handed on: a scoring step
        writes through this connection while it reads, and one cursor held open over the whole step kept a read
        transaction open as long, which let no checkpoint copy the log past it; the one after it copied the whole
        step's log at once and held the next commit for 80-160 ms (bench/RESULTS.md, issue 29's fourth round)."""
        wanted = set(sample_ids) if sample_ids is not None else None
        ids = [sid for (sid,) in self._conn().execute("SELECT sample_id FROM records ORDER BY idx, sample_id")
               if wanted is None or sid in wanted]
        for start in range(0, len(ids), READ_CHUNK):
            chunk = ids[start : start + READ_CHUNK]
            rows = {sid: (body, case_json) for sid, body, case_json in self._conn().execute(
                f"SELECT sample_id, body, case_json FROM records WHERE sample_id IN ({','.join('?' * len(chunk))})",
                chunk).fetchall()}
            for sid in chunk:
                body, case_json = rows[sid]
                yield SampleRecord.model_validate_json(body), case_json

    def write_selection(self, sample_ids: list[str]) -> None:
        """The sample ids of the latest run's selection (its --limit subset), for later re-scoring and summaries."""
        db = self._conn()
        db.execute("BEGIN")
        try:
            db.execute("DELETE FROM selection")
            db.executemany("INSERT INTO selection(pos, sample_id) VALUES (?, ?)", enumerate(sample_ids))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def read_selection(self) -> list[str] | None:
        """The latest selection, or None when no run has finished its generation step yet."""
        rows = [row[0] for row in self._conn().execute("SELECT sample_id FROM selection ORDER BY pos")]
        return rows or None

    # -- scores (Tasks 2/3) ----------------------------------------------------------------
    def put_score(self, score: ScoreRecord) -> None:
        """Store one judge's score of one sample; committed as `put` commits."""
        score, body = scrubbed_json(score, keep=_ID_FIELDS, urls=False)
        self._writes.write(
            "INSERT OR REPLACE INTO scores(sample_id, judge, idx, status, body) VALUES (?, ?, ?, ?, ?)",
            (score.sample_id, score.judge, score.index, score.status, body),
        )

    def scored_ids(self, judge: str) -> set[str]:
        """Sample ids this judge scored successfully (failed scores are retried)."""
        rows = self._conn().execute("SELECT sample_id FROM scores WHERE judge = ? AND status = 'ok'", (judge,))
        return {row[0] for row in rows}

    def judges(self) -> list[str]:
        """Keys of the judges with at least one stored score."""
        return [row[0] for row in self._conn().execute("SELECT DISTINCT judge FROM scores ORDER BY judge")]

    def iter_scores(self, judge: str, sample_ids: Iterable[str] | None = None) -> Iterator[ScoreRecord]:
        """One judge's scores in data order; restricted to `sample_ids` when given."""
        wanted = set(sample_ids) if sample_ids is not None else None
        rows = self._conn().execute(
            "SELECT sample_id, body FROM scores WHERE judge = ? ORDER BY idx, sample_id", (judge,)
        )
        for sid, body in rows:
            if wanted is None or sid in wanted:
                yield ScoreRecord.model_validate_json(body)

    def done_ids(self, *, include_errors: bool = False) -> set[str]:
        """Ids of finished samples (`ok`, and `too_long`: a permanent outcome). Errored samples are not 'done'
        unless asked: they are retried."""
        sql = "SELECT sample_id FROM records" + ("" if include_errors else " WHERE status IN ('ok', 'too_long')")
        return {row[0] for row in self._conn().execute(sql)}

    def ok_ids(self, sample_ids: Iterable[str] | None = None) -> set[str]:
        """Ids of the successful records, restricted to `sample_ids` when given: from the status column, no
        record parsed."""
        ids = {row[0] for row in self._conn().execute("SELECT sample_id FROM records WHERE status = 'ok'")}
        return ids if sample_ids is None else ids.intersection(sample_ids)

    def iter_records(self, sample_ids: Iterable[str] | None = None) -> Iterator[SampleRecord]:
        """Records in data order; restricted to `sample_ids` when given."""
        wanted = set(sample_ids) if sample_ids is not None else None
        for sid, body in self._conn().execute("SELECT sample_id, body FROM records ORDER BY idx, sample_id"):
            if wanted is None or sid in wanted:  # parse only what is asked for
                yield SampleRecord.model_validate_json(body)

    def count(self) -> int:
        row = self._conn().execute("SELECT COUNT(*) FROM records").fetchone()
        return int(row[0])

    def export_jsonl(self, sample_ids: Iterable[str] | None = None) -> Path:
        """Write samples.jsonl (atomically) from the store."""
        out = self.path / SAMPLES_JSONL
        atomic_write_lines(out, (rec.__pydantic_serializer__.to_json(rec) for rec in self.iter_records(sample_ids)))
        return out

    @contextmanager
    def exporting_jsonl(self) -> Iterator[Callable[[SampleRecord], None]]:
        """samples.jsonl written from the records handed to the function this yields (in data order, as
        `export_jsonl` writes them), put in place when the block ends without an error: a run writes it in the
        pass its summary makes over the records, instead of reading them all again."""
        with atomic_writer(self.path / SAMPLES_JSONL) as fh:
            def write(rec: SampleRecord) -> None:
                fh.write(rec.__pydantic_serializer__.to_json(rec))
                fh.write(b"\n")

            yield write

    @contextmanager
    def exporting_scores_jsonl(self, sample_ids: Iterable[str] | None = None) -> Iterator[ScoresSink]:
        """scores.jsonl written from the lines handed to the sink's `write` during the block (each judge's scores as
        the summary reads them), put in place when the block ends with `sink.whole` set (they were every judge's,
        in `export_scores_jsonl`'s order); else discarded and written by `export_scores_jsonl`, as before."""
        wanted = list(sample_ids) if sample_ids is not None else None
        if not self.judges():
            yield ScoresSink(None)
            return
        sink: ScoresSink | None = None
        try:
            with atomic_writer(self.path / SCORES_JSONL) as fh:
                sink = ScoresSink(fh)
                yield sink
                if not sink.whole:
                    raise _NotWhole
        except _NotWhole:
            self.export_scores_jsonl(wanted)

    def export_scores_jsonl(self, sample_ids: Iterable[str] | None = None) -> Path | None:
        """Write scores.jsonl (every judge, atomically); None when the run has no scores."""
        judges = self.judges()
        if not judges:
            return None
        wanted = set(sample_ids) if sample_ids is not None else None
        out = self.path / SCORES_JSONL
        atomic_write_lines(out, (
            rec.__pydantic_serializer__.to_json(rec)
            for judge in judges for rec in self.iter_scores(judge, wanted)
        ))
        return out


class ScoresSink:
    """Lines of scores.jsonl handed over during a summary's pass (`RunStore.exporting_scores_jsonl`)."""

    def __init__(self, fh: BinaryIO | None) -> None:
        self.write: Callable[[bytes], object] | None = fh.write if fh is not None else None
        """None when there is nothing to write (no judge has scores)."""
        self.whole = False
        """Set by the writer once it wrote every judge's scores, in the export's order."""


class _NotWhole(Exception):
    """The lines written were not the whole export: the file is written from the store instead."""


def manifest_fix(run_dir: Path) -> str:
    """What to do about a damaged manifest.json: the samples are in samples.sqlite, keyed by ids derived from the
    run's configuration, so the command that made the run can write a new manifest and keep them."""
    return (f"it holds the run's configuration; the finished samples are in {run_dir / SAMPLES_DB}. Move it aside "
            f"(`mv {run_dir / MANIFEST} {run_dir / MANIFEST}.damaged`) and rerun the `uxbench run` command that made "
            "this run with the same --out: it writes a new manifest and keeps every sample made with that "
            "configuration")


def _read_json(path: Path) -> dict[str, Any] | None:
    if path.name == MANIFEST:
        fix = manifest_fix(path.parent)
    else:
        fix = (f"`uxbench report {path.parent} --n-boot 2000` recomputes the figures from {SAMPLES_DB}, and rerunning "
               "the command that made the run rewrites the file")
    return user_files.read_json_object(path, fix=fix)


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    atomic_write_bytes(path, (json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8"))
