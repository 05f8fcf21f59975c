"""The output directory of `uxbench pairwise`: a comparison of two Task 2/3 runs by one or more pairwise judges.

    OUT/
      pairwise.json     which runs are compared (A and B: path, run id, model, task) and every judge's identity
      pairwise.sqlite   one row per (case, judge, order), committed as each call finishes (WAL): the resumable
                        store; a rerun asks only for the rows that are missing, failed, or whose prompt changed
      summary.json      the figures of the latest invocation, per judge

Rows are keyed by (case_id, judge, order) with INSERT OR REPLACE, so a rerun never duplicates a verdict.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import orjson

from uxbench.fileio import connect_sqlite, is_damage, sqlite_damaged
from uxbench.redact import scrub_model
from uxbench.runs.records import CallTotals
from uxbench.runtime.cache import enable_wal

MANIFEST = "pairwise.json"
DB = "pairwise.sqlite"
SUMMARY = "summary.json"
_ID_FIELDS = ("case_id", "judge", "order", "input_hash", "sample_a", "sample_b")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    case_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    ord TEXT NOT NULL,
    status TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (case_id, judge, ord)
);
"""


class PairVerdictRecord(CallTotals):
    """One pairwise judge's answer on one case in one order."""

    case_id: str
    judge: str
    """The judge's key (see pairwise.json `judges`)."""
    order: Literal["ab", "ba"]
    """ab: run A's reply shown first (as Reply A); ba: run B's reply shown first."""
    status: Literal["ok", "error"]
    """error: the call failed for good after retries (retried on the next invocation)."""
    input_hash: str
    """Hash of the messages sent: a row whose prompt would now differ (other replies, other templates) is
    asked again."""
    sample_a: str
    sample_b: str
    """The generation records compared (sample ids in runs A and B)."""
    pick: Literal["A", "B", "tie"] | None = None
    """The judge's choice by position; None when unreadable."""
    winner: Literal["a", "b", "tie"] | None = None
    """The run that choice means (a = run A, b = run B)."""
    parse_note: str | None = None
    raw_output: str | None = None
    reasoning: str | None = None
    error: str | None = None


class PairwiseStore:
    """Read and write the verdicts of one comparison directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            fix = ("It holds this comparison's verdicts: move it aside and rerun the same command to judge the pairs "
                   "again, or choose another --out.")
            db = connect_sqlite(self.path / DB, timeout=30, fix=fix)
            try:
                enable_wal(db, 30.0)
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
            except sqlite3.DatabaseError as exc:
                db.close()
                if is_damage(exc):
                    raise sqlite_damaged(self.path / DB, str(exc), fix) from None
                raise
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> PairwiseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, record: PairVerdictRecord) -> None:
        """Store one verdict; committed before returning."""
        record = scrub_model(record, keep=_ID_FIELDS)  # an error text never carries a secret to the file
        self._conn().execute(
            "INSERT OR REPLACE INTO verdicts(case_id, judge, ord, status, input_hash, body) VALUES (?, ?, ?, ?, ?, ?)",
            (record.case_id, record.judge, record.order, record.status, record.input_hash,
             record.__pydantic_serializer__.to_json(record)),
        )

    def done(self, judge: str) -> dict[tuple[str, str], str]:
        """(case_id, order) -> input hash of this judge's successful verdicts."""
        rows = self._conn().execute(
            "SELECT case_id, ord, input_hash FROM verdicts WHERE judge = ? AND status = 'ok'", (judge,))
        return {(case_id, order): digest for case_id, order, digest in rows}

    def judges(self) -> list[str]:
        return [row[0] for row in self._conn().execute("SELECT DISTINCT judge FROM verdicts ORDER BY judge")]

    def iter_verdicts(self, judge: str) -> Iterator[PairVerdictRecord]:
        rows = self._conn().execute("SELECT body FROM verdicts WHERE judge = ? ORDER BY case_id, ord", (judge,))
        for (body,) in rows:
            yield PairVerdictRecord.model_validate(orjson.loads(body))
