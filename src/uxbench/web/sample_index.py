"""A per-run SQLite index of the samples for the sample browser: one row per selected sample with the fields
the filters use, one row per (sample, judge) verdict, and the searchable text (case, reply, case id) in an FTS5
trigram table, so that filters, substring search (Chinese included) and pages stay fast on 100,000 samples.

The index is derived data: it lives in a cache directory (never in the run directory), is rebuilt when the
run's store changes (record and score counts, latest rowids, selection, summary time) and is written to a
temporary file and renamed into place, so a page never sees half an index.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from uxbench.runs.store import SAMPLES_DB, SUMMARY

INDEX_VERSION = "2"
FACETS = ("scenario", "dimension", "difficulty")
_CHECK_EVERY_S = 2.0
COUNT_CAP = 10_000
"""A search counts its matches up to this many (a common word would otherwise be counted over every sample)."""

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE samples (
    rid INTEGER PRIMARY KEY, sample_id TEXT NOT NULL, idx INTEGER, case_id TEXT, status TEXT, gold TEXT,
    prediction TEXT, correct INTEGER, score REAL, scenario TEXT, dimension TEXT, difficulty TEXT, turns INTEGER
);
CREATE TABLE verdicts (rid INTEGER NOT NULL, judge TEXT NOT NULL, label TEXT, score REAL,
                       PRIMARY KEY (judge, rid)) WITHOUT ROWID;
"""
_INDEXES = """
CREATE INDEX samples_gold ON samples(gold, correct, prediction);
CREATE INDEX samples_prediction ON samples(prediction);
CREATE INDEX samples_correct ON samples(correct);
CREATE INDEX samples_scenario ON samples(scenario, difficulty, dimension);
CREATE INDEX samples_dimension ON samples(dimension);
CREATE INDEX samples_difficulty ON samples(difficulty);
CREATE INDEX samples_case ON samples(case_id);
CREATE INDEX verdicts_label ON verdicts(judge, label);
"""


def case_texts(case: dict[str, Any]) -> Iterator[str]:
    """Every text of a case: the history, then the turn under test and the replies the task stores."""
    for message in case.get("history") or []:
        if isinstance(message, dict) and message.get("content"):
            yield str(message["content"])
    for key in ("query", "response", "failed_response", "complaint", "reference_response"):
        if case.get(key):
            yield str(case[key])


def _fts_available() -> bool:
    try:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='trigram')")
        db.close()
        return True
    except sqlite3.OperationalError:
        return False


def _fingerprint(run_dir: Path) -> str:
    """Size and modification time of the store (and its write-ahead log) and of the summary: any write to the
    run changes one of them, and reading them costs a few stat calls, not a query."""
    parts = []
    for name in (SAMPLES_DB, SAMPLES_DB + "-wal", SUMMARY):
        path = run_dir / name
        found = path.stat() if path.exists() else None
        # An empty log holds no write (a reader, this index's included, may create one): the same as none.
        parts.append(f"{found.st_size}:{found.st_mtime_ns}" if found and found.st_size else "-")
    return INDEX_VERSION + ":" + "|".join(parts)


@dataclass
class Query:
    gold: str | None = None
    verdict: str | None = None
    correct: str | None = None
    """'yes' / 'no' (Task 1)."""
    judge: str | None = None
    """Tasks 2/3: whose verdicts the verdict filter and column use."""
    q: str | None = None
    facets: dict[str, str] = field(default_factory=dict)
    only_cases: frozenset[str] | None = None
    """Keep these case ids only (a curation state)."""
    not_cases: frozenset[str] | None = None
    """Leave these case ids out."""
    page: int = 1
    per_page: int = 50


@dataclass
class Page:
    rows: list[dict[str, Any]]
    total: int
    page: int
    per_page: int
    capped: bool = False
    """A search matched more than `COUNT_CAP` samples: `total` is the cap, the pages cover the first ones."""

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


class SampleIndex:
    """The index of one run directory; `ensure()` (re)builds it when the run changed."""

    def __init__(self, run_dir: Path, index_dir: Path, *, check_every_s: float = _CHECK_EVERY_S) -> None:
        self.run_dir = run_dir
        self.check_every_s = check_every_s
        """How often a request looks whether the run changed (a few stat calls)."""
        key = hashlib.sha256(str(run_dir.resolve()).encode("utf-8")).hexdigest()[:20]
        self.path = index_dir / f"{key}.sqlite"
        self._lock = threading.Lock()
        self._checked = 0.0
        self._fts = _fts_available()

    # -- building ---------------------------------------------------------------------------
    def ensure(self) -> None:
        with self._lock:
            now = time.monotonic()
            if self.path.exists() and now - self._checked < self.check_every_s:
                return
            fingerprint = _fingerprint(self.run_dir)
            if not self._current(fingerprint):
                self._build(fingerprint)
            self._checked = time.monotonic()

    def _current(self, fingerprint: str) -> bool:
        if not self.path.exists():
            return False
        try:
            with closing(self._connect()) as db:
                row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        except sqlite3.DatabaseError:
            return False
        return bool(row) and row[0] == fingerprint

    def _build(self, fingerprint: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp")  # another server may build too
        tmp.unlink(missing_ok=True)
        out = sqlite3.connect(tmp)
        os.chmod(tmp, 0o600)  # it holds conversation text, like the run directory
        src = sqlite3.connect(f"file:{self.run_dir / SAMPLES_DB}?mode=ro", uri=True, timeout=30)
        try:
            out.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _SCHEMA)
            text_table = ("CREATE VIRTUAL TABLE text USING fts5(body, tokenize='trigram')" if self._fts
                          else "CREATE TABLE text (rowid INTEGER PRIMARY KEY, body TEXT)")
            out.execute(text_table)
            selected = src.execute("SELECT COUNT(*) FROM selection").fetchone()[0] > 0
            sql = "SELECT body, case_json FROM records"
            if selected:
                sql += " WHERE sample_id IN (SELECT sample_id FROM selection)"
            rids: dict[str, int] = {}
            rows, texts = [], []
            for rid, (body, case_json) in enumerate(src.execute(sql + " ORDER BY idx, sample_id"), start=1):
                rec = orjson.loads(body)
                case = orjson.loads(case_json) if case_json else {}
                strata = rec.get("strata") or {}
                gold, pred = rec.get("gold"), rec.get("prediction")
                turns = strata.get("n_turns", strata.get("history_messages"))
                rids[rec["sample_id"]] = rid
                rows.append((rid, rec["sample_id"], rec.get("index"), rec.get("case_id"), rec.get("status"), gold,
                             pred if pred is not None else ("error" if rec.get("status") == "error" else "none"),
                             None if gold is None else int(rec.get("status") == "ok" and pred == gold),
                             rec.get("score"), _text(strata.get("scenario")), _text(strata.get("dimension")),
                             _text(strata.get("difficulty")), turns if isinstance(turns, int) else None))
                texts.append((rid, "\n".join([str(rec.get("case_id") or ""), *case_texts(case),
                                              str(rec.get("raw_output") or "")])))
                if len(rows) >= 5000:
                    _flush(out, rows, texts)
            _flush(out, rows, texts)
            verdicts = []
            for judge, body in src.execute("SELECT judge, body FROM scores WHERE status = 'ok'"):
                score = orjson.loads(body)
                found = rids.get(score.get("sample_id"))
                if found is not None:
                    verdicts.append((found, judge, score.get("label") or "none", score.get("score")))
            out.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)", verdicts)
            out.executescript(_INDEXES)
            facets = {f: [r[0] for r in out.execute(f"SELECT DISTINCT {f} FROM samples WHERE {f} IS NOT NULL "
                                                     f"ORDER BY {f}")] for f in FACETS}
            out.execute("INSERT INTO meta VALUES ('facets', ?)", (orjson.dumps(facets).decode(),))
            out.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            out.commit()
        finally:
            src.close()
            out.close()
        os.replace(tmp, self.path)

    # -- reading ----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        db.row_factory = sqlite3.Row
        return db

    def facet_values(self) -> dict[str, list[str]]:
        """The values of each facet (for the filter menus), listed when the index was built."""
        self.ensure()
        with closing(self._connect()) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'facets'").fetchone()
        found: dict[str, list[str]] = orjson.loads(row[0]) if row else {}
        return found

    def search(self, query: Query) -> Page:
        """One page of the samples that pass the filters, in data order. With a search, the text table drives
        the query (its rows come in sample order, so a page stops early) and the count stops at `COUNT_CAP`."""
        self.ensure()
        where: list[str] = ["1=1"]
        args: list[Any] = []
        source, order = "samples s", "s.rid"
        if query.q:
            # CROSS JOIN keeps the text table outside: asked per sample instead, FTS5 redoes the match each time
            source, order = "text t CROSS JOIN samples s ON s.rid = t.rowid", "t.rowid"
            if self._fts and len(query.q) >= 3:  # a trigram phrase: a substring, case-insensitive, indexed
                where.append("t.text MATCH ?")
                args.append('"' + query.q.replace('"', '""') + '"')
            else:  # shorter than a trigram: a scan of the text
                where.append("t.body LIKE ? ESCAPE '\\'")
                args.append("%" + _like_escape(query.q) + "%")
        join_args: list[Any] = []
        if query.judge:
            source += " LEFT JOIN verdicts v ON v.rid = s.rid AND v.judge = ?"
            join_args.append(query.judge)
        if query.gold:
            where.append("s.gold = ?")
            args.append(query.gold)
        if query.verdict:
            where.append("COALESCE(v.label, 'none') = ?" if query.judge else "s.prediction = ?")
            args.append(query.verdict)
        if query.correct in ("yes", "no"):
            where.append("s.correct = ?")
            args.append(1 if query.correct == "yes" else 0)
        for name, value in query.facets.items():
            if name in FACETS and value:
                where.append(f"s.{name} = ?")
                args.append(value)
        if query.only_cases is not None:
            where.append("s.case_id IN (SELECT value FROM json_each(?))")
            args.append(orjson.dumps(sorted(query.only_cases)).decode())
        if query.not_cases:
            where.append("s.case_id NOT IN (SELECT value FROM json_each(?))")
            args.append(orjson.dumps(sorted(query.not_cases)).decode())
        clause = f"FROM {source} WHERE " + " AND ".join(where)
        params = [*join_args, *args]
        columns = "s.*" + (", v.label AS verdict_label, v.score AS verdict_score" if query.judge else "")
        with closing(self._connect()) as db:
            if query.q:
                total = int(db.execute(f"SELECT COUNT(*) FROM (SELECT 1 {clause} LIMIT {COUNT_CAP + 1})",
                                       params).fetchone()[0])
            else:
                total = int(db.execute(f"SELECT COUNT(*) {clause}", params).fetchone()[0])
            capped = bool(query.q) and total > COUNT_CAP
            total = min(total, COUNT_CAP) if capped else total
            per_page = max(1, min(query.per_page, 200))
            page = max(1, min(query.page, max(1, -(-total // per_page))))
            offset = (page - 1) * per_page
            limit = max(0, min(per_page, total - offset))  # a capped search's pages end at the cap
            rows = [dict(r) for r in db.execute(f"SELECT {columns} {clause} ORDER BY {order} LIMIT ? OFFSET ?",
                                                [*params, limit, offset])]
        return Page(rows=rows, total=total, page=page, per_page=per_page, capped=capped)

    def row(self, rid: int) -> dict[str, Any] | None:
        self.ensure()
        with closing(self._connect()) as db:
            found = db.execute("SELECT * FROM samples WHERE rid = ?", (rid,)).fetchone()
        return dict(found) if found else None

    def rid_of(self, case_id: str) -> int | None:
        self.ensure()
        with closing(self._connect()) as db:
            found = db.execute("SELECT rid FROM samples WHERE case_id = ? ORDER BY rid LIMIT 1", (case_id,)).fetchone()
        return int(found[0]) if found else None

    def outcomes(self, judge: str | None = None) -> dict[str, dict[str, Any]]:
        """case_id -> {rid, sample_id, gold, verdict, correct} of the first sample of each case (for comparing
        runs): the verdict is the prediction (Task 1) or `judge`'s label (Tasks 2/3)."""
        self.ensure()
        out: dict[str, dict[str, Any]] = {}
        sql = ("SELECT s.case_id, s.rid, s.sample_id, s.gold, COALESCE(v.label, 'none'), s.correct FROM samples s "
               "LEFT JOIN verdicts v ON v.rid = s.rid AND v.judge = ? ORDER BY s.rid") if judge else \
            "SELECT case_id, rid, sample_id, gold, prediction, correct FROM samples ORDER BY rid"
        with closing(self._connect()) as db:
            for r in db.execute(sql, (judge,) if judge else ()):
                out.setdefault(r[0], {"rid": r[1], "sample_id": r[2], "gold": r[3], "verdict": r[4],
                                      "correct": r[5]})
        return out


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _flush(out: sqlite3.Connection, rows: list[tuple[Any, ...]], texts: list[tuple[int, str]]) -> None:
    out.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    out.executemany("INSERT INTO text(rowid, body) VALUES (?, ?)", texts)
    rows.clear()
    texts.clear()


def load_sample(run_dir: Path, sample_id: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """(record, case, scores) of one sample, read from the run's store by its key."""
    db = sqlite3.connect(f"file:{run_dir / SAMPLES_DB}?mode=ro", uri=True, timeout=30)
    try:
        found = db.execute("SELECT body, case_json FROM records WHERE sample_id = ?", (sample_id,)).fetchone()
        scores = [orjson.loads(b) for (b,) in db.execute(
            "SELECT body FROM scores WHERE sample_id = ? ORDER BY judge", (sample_id,))]
    finally:
        db.close()
    if found is None:
        return {}, {}, []
    return orjson.loads(found[0]), (orjson.loads(found[1]) if found[1] else {}), scores
