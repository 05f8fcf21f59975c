"""A per-run SQLite index of the samples for the sample browser: one row per selected sample with the fields
the filters and sorts use and a snippet, one row per (sample, judge) verdict, the searchable text (case id,
conversation, reply) in an FTS5 trigram table and the judges' outputs in another, so that filters, substring
search (Chinese included), sorts and pages stay fast on 100,000 samples. The queries are in `sample_query.py`.

The index is derived data: it lives in a cache directory (never in the run directory), is rebuilt when the
run's store changes (record and score counts, latest rowids, selection, summary time) and is written to a
temporary file and renamed into place, so a page never sees half an index. Pages do not wait for a build:
`ensure_nowait` builds in the background (a first visit says so and reloads) and keeps serving the previous
build while a changed run is indexed again.
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
from uxbench.web import sample_query
from uxbench.web.sample_query import FACETS, Page, Query, head

__all__ = ["FACETS", "Page", "Query", "SampleIndex", "case_texts", "load_sample"]

INDEX_VERSION = "3"
_CHECK_EVERY_S = 2.0

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE samples (
    rid INTEGER PRIMARY KEY, sample_id TEXT NOT NULL, idx INTEGER, case_id TEXT, status TEXT, gold TEXT,
    prediction TEXT, correct INTEGER, score REAL, scenario TEXT, dimension TEXT, difficulty TEXT, turns INTEGER,
    snippet TEXT
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
CREATE INDEX samples_turns ON samples(turns);
CREATE INDEX samples_score ON samples(score);
CREATE INDEX verdicts_label ON verdicts(judge, label);
CREATE INDEX verdicts_score ON verdicts(judge, score);
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


def under_test(case: dict[str, Any]) -> str | None:
    """The text of the turn under test: the complaint (Task 3) or the query."""
    return case.get("complaint") if case.get("task") == "recovery" else case.get("query")


class SampleIndex:
    """The index of one run directory; `ensure()` (re)builds it when the run changed, `ensure_nowait()` has it
    built in the background."""

    def __init__(self, run_dir: Path, index_dir: Path, *, check_every_s: float = _CHECK_EVERY_S) -> None:
        self.run_dir = run_dir
        self.check_every_s = check_every_s
        """How often a request looks whether the run changed (a few stat calls)."""
        key = hashlib.sha256(str(run_dir.resolve()).encode("utf-8")).hexdigest()[:20]
        self.path = index_dir / f"{key}.sqlite"
        self._lock = threading.Lock()
        self._checked = 0.0
        self._fts = _fts_available()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self.progress: tuple[int, int] | None = None
        """(samples indexed, samples) while a build runs."""
        self.error: str | None = None
        """Why the last background build failed (None when it did not)."""

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

    def ensure_nowait(self, wait_s: float = 0.0) -> bool:
        """Whether pages can be served now: the index is current, or a previous build of it is kept while the
        changed run is indexed again in the background. Otherwise a background build starts (if none runs), and
        this waits up to `wait_s` for it (a small run is indexed in that time)."""
        if self._lock.acquire(blocking=False):
            try:
                if self.path.exists() and time.monotonic() - self._checked < self.check_every_s:
                    return True
                if self._current(_fingerprint(self.run_dir)):
                    self._checked = time.monotonic()
                    return True
            finally:
                self._lock.release()
        thread = self._background()
        if wait_s > 0 and thread is not None:
            thread.join(wait_s)
        return self._usable()

    def _background(self) -> threading.Thread | None:
        with self._thread_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._build_quietly, daemon=True, name="uxbench-index")
                self._thread.start()
            return self._thread

    def _build_quietly(self) -> None:
        try:
            self.ensure()
            self.error = None
        except (sqlite3.Error, OSError, ValueError) as exc:  # the page shows it
            self.error = f"{type(exc).__name__}: {exc}"

    def _usable(self) -> bool:
        """An index file of this version exists (current or not)."""
        if not self.path.exists():
            return False
        try:
            with closing(self._connect()) as db:
                row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        except sqlite3.DatabaseError:
            return False
        return bool(row) and str(row[0]).startswith(INDEX_VERSION + ":")

    def _ready(self) -> None:
        """Before a read: build now when there is nothing to read (a library caller; pages call
        `ensure_nowait` first)."""
        if not self._usable():
            self.ensure()

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
            if self._fts:
                out.execute("CREATE VIRTUAL TABLE text USING fts5(body, tokenize='trigram')")
                out.execute("CREATE VIRTUAL TABLE judge_text USING fts5(body, rid UNINDEXED, judge UNINDEXED, "
                            "tokenize='trigram')")
            else:
                out.execute("CREATE TABLE text (rowid INTEGER PRIMARY KEY, body TEXT)")
                out.execute("CREATE TABLE judge_text (body TEXT, rid INTEGER, judge TEXT)")
            selected = src.execute("SELECT COUNT(*) FROM selection").fetchone()[0] > 0
            sql = "SELECT body, case_json FROM records"
            if selected:
                sql += " WHERE sample_id IN (SELECT sample_id FROM selection)"
            n_total = int(src.execute(sql.replace("body, case_json", "COUNT(*)", 1)).fetchone()[0])
            self.progress = (0, n_total)
            rids: dict[str, int] = {}
            batch = _Batch()
            for rid, (body, case_json) in enumerate(src.execute(sql + " ORDER BY idx, sample_id"), start=1):
                rec = orjson.loads(body)
                case = orjson.loads(case_json) if case_json else {}
                strata = rec.get("strata") or {}
                gold, pred = rec.get("gold"), rec.get("prediction")
                turns = strata.get("n_turns", strata.get("history_messages"))
                rids[rec["sample_id"]] = rid
                batch.rows.append((rid, rec["sample_id"], rec.get("index"), rec.get("case_id"), rec.get("status"),
                                   gold, pred if pred is not None else ("error" if rec.get("status") == "error"
                                                                       else "none"),
                                   None if gold is None else int(rec.get("status") == "ok" and pred == gold),
                                   rec.get("score"), _text(strata.get("scenario")), _text(strata.get("dimension")),
                                   _text(strata.get("difficulty")), turns if isinstance(turns, int) else None,
                                   head(under_test(case))))
                # The search text is the conversation and the reply; Task 1's output is the judge's (its own).
                judged = case.get("task") == "judge" or (not case and gold is not None)
                reply = [] if judged else [str(rec.get("raw_output") or "")]
                batch.texts.append((rid, "\n".join([str(rec.get("case_id") or ""), *case_texts(case), *reply])))
                if judged and rec.get("raw_output"):
                    batch.judged.append((str(rec["raw_output"]), rid, ""))
                if len(batch.rows) >= 5000:
                    batch.flush(out)
                    self.progress = (rid, n_total)
            batch.flush(out)
            verdicts, judged = [], []
            for judge, body in src.execute("SELECT judge, body FROM scores WHERE status = 'ok'"):
                score = orjson.loads(body)
                found = rids.get(score.get("sample_id"))
                if found is not None:
                    verdicts.append((found, judge, score.get("label") or "none", score.get("score")))
                    if score.get("raw_output"):
                        judged.append((str(score["raw_output"]), found, judge))
            # In sample order per judge: a search of one judge's texts then walks them in the browser's order.
            judged.sort(key=lambda row: (row[2], row[1]))
            out.executemany("INSERT INTO judge_text(body, rid, judge) VALUES (?, ?, ?)", judged)
            out.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)", verdicts)
            out.executescript(_INDEXES)
            out.execute("ANALYZE")  # statistics: without them the planner walks a two-valued index (gold) for a sort
            facets = {f: [r[0] for r in out.execute(f"SELECT DISTINCT {f} FROM samples WHERE {f} IS NOT NULL "
                                                     f"ORDER BY {f}")] for f in FACETS}
            out.execute("INSERT INTO meta VALUES ('facets', ?)", (orjson.dumps(facets).decode(),))
            out.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            out.commit()
        finally:
            src.close()
            out.close()
            self.progress = None
        os.replace(tmp, self.path)

    # -- reading ----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        db.row_factory = sqlite3.Row
        return db

    def facet_values(self) -> dict[str, list[str]]:
        """The values of each facet (for the filter menus), listed when the index was built."""
        self._ready()
        with closing(self._connect()) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'facets'").fetchone()
        found: dict[str, list[str]] = orjson.loads(row[0]) if row else {}
        return found

    def search(self, query: Query) -> Page:
        """One page of the samples that pass the filters, in the chosen order (`sample_query.search`); with a
        search of the judge's output, each row's `judge_snippet` (the output around the match)."""
        self._ready()
        with closing(self._connect()) as db:
            page = sample_query.search(db, query, self._fts)
        if query.judge_q and page.rows:
            found = judge_snippets(self.run_dir, [r["sample_id"] for r in page.rows], query.judge_q, query.judge)
            for r in page.rows:
                r["judge_snippet"] = found.get(r["sample_id"])
        return page

    def iterate(self, query: Query) -> Iterator[dict[str, Any]]:
        """Every sample that passes the filters, in the chosen order (`sample_query.iterate`): an export."""
        self._ready()
        with closing(self._connect()) as db:
            yield from sample_query.iterate(db, query, self._fts)

    def neighbours(self, query: Query, rid: int) -> dict[str, Any] | None:
        """The sample's position and its previous and next samples under `query`'s filters and order."""
        self._ready()
        with closing(self._connect()) as db:
            return sample_query.neighbours(db, query, self._fts, rid)

    def row(self, rid: int) -> dict[str, Any] | None:
        self._ready()
        with closing(self._connect()) as db:
            found = db.execute("SELECT * FROM samples WHERE rid = ?", (rid,)).fetchone()
        return dict(found) if found else None

    def rid_of(self, case_id: str) -> int | None:
        self._ready()
        with closing(self._connect()) as db:
            found = db.execute("SELECT rid FROM samples WHERE case_id = ? ORDER BY rid LIMIT 1", (case_id,)).fetchone()
        return int(found[0]) if found else None

    def outcomes(self, judge: str | None = None) -> dict[str, dict[str, Any]]:
        """case_id -> {rid, sample_id, gold, verdict, correct} of the first sample of each case (for comparing
        runs): the verdict is the prediction (Task 1) or `judge`'s label (Tasks 2/3)."""
        self._ready()
        out: dict[str, dict[str, Any]] = {}
        sql = ("SELECT s.case_id, s.rid, s.sample_id, s.gold, COALESCE(v.label, 'none'), s.correct FROM samples s "
               "LEFT JOIN verdicts v ON v.rid = s.rid AND v.judge = ? ORDER BY s.rid") if judge else \
            "SELECT case_id, rid, sample_id, gold, prediction, correct FROM samples ORDER BY rid"
        with closing(self._connect()) as db:
            for r in db.execute(sql, (judge,) if judge else ()):
                out.setdefault(r[0], {"rid": r[1], "sample_id": r[2], "gold": r[3], "verdict": r[4],
                                      "correct": r[5]})
        return out

    def score_histogram(self, judge: str, bins: int = 10) -> list[dict[str, Any]]:
        """Counts of `judge`'s p(good) scores in `bins` equal bins of [0, 1]."""
        self._ready()
        with closing(self._connect()) as db:
            scores = [r[0] for r in db.execute("SELECT score FROM verdicts WHERE judge = ? AND score BETWEEN 0 "
                                               "AND 1", (judge,))]
        counts = [0] * bins
        for s in scores:
            counts[min(int(s * bins), bins - 1)] += 1
        top = max(counts) or 1
        return [{"lo": round(i / bins, 6), "hi": round((i + 1) / bins, 6), "n": c, "height": 160 * c / top}
                for i, c in enumerate(counts)]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass
class _Batch:
    """Rows waiting to be written: samples, search texts, judge outputs (body, rid, judge)."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    texts: list[tuple[int, str]] = field(default_factory=list)
    judged: list[tuple[str, int, str]] = field(default_factory=list)

    def flush(self, out: sqlite3.Connection) -> None:
        out.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", self.rows)
        out.executemany("INSERT INTO text(rowid, body) VALUES (?, ?)", self.texts)
        out.executemany("INSERT INTO judge_text(body, rid, judge) VALUES (?, ?, ?)", self.judged)
        self.rows.clear()
        self.texts.clear()
        self.judged.clear()


def judge_snippets(run_dir: Path, sample_ids: list[str], needle: str, judge: str | None) -> dict[str, str]:
    """sample_id -> the judge's output around the first match of `needle` (Task 1, `judge` None: the model's
    output), for the rows of one page: read from the run's store by key (the index's text table has no key to
    find them by)."""
    marks = ",".join("?" * len(sample_ids))
    db = sqlite3.connect(f"file:{run_dir / SAMPLES_DB}?mode=ro", uri=True, timeout=30)
    try:
        if judge:
            rows = db.execute(f"SELECT sample_id, body FROM scores WHERE judge = ? AND sample_id IN ({marks})",
                              [judge, *sample_ids]).fetchall()
        else:
            rows = db.execute(f"SELECT sample_id, body FROM records WHERE sample_id IN ({marks})",
                              sample_ids).fetchall()
    finally:
        db.close()
    out: dict[str, str] = {}
    for sample_id, body in rows:
        found = sample_query.around(str(orjson.loads(body).get("raw_output") or ""), needle.lower())
        if found is not None:
            out[sample_id] = found
    return out


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
