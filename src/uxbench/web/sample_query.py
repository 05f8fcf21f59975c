"""Queries over a run's sample index (`sample_index.py`): filters, substring search over the conversation and
reply, a separate search over the judge's output, a sort over the whole run (not the page shown), pages,
the neighbours of a sample in that order, and snippets around a match.

Every column name that reaches SQL comes from the `SORTS` and `FACETS` tables here, never from the request.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

FACETS = ("scenario", "dimension", "difficulty")
COUNT_CAP = 10_000
"""A search counts its matches up to this many (a common word would otherwise be counted over every sample)."""
SNIPPET_CHARS = 160
SORTS = ("rid", "case", "gold", "verdict", "correct", "score", "confidence", "scenario", "dimension", "difficulty",
         "turns")
"""The columns the browser sorts by (the key in the URL's `sort`). `confidence`: how far p(good) (the score) is
from 0.5, whichever side: with the incorrect verdicts only, descending, the confident errors come first."""


@dataclass
class Query:
    gold: str | None = None
    verdict: str | None = None
    correct: str | None = None
    """'yes' / 'no' (Task 1)."""
    judge: str | None = None
    """Tasks 2/3: whose verdicts the verdict filter, the score column and the judge-output search use."""
    q: str | None = None
    """A substring of the conversation or the reply (never of a judge's output)."""
    judge_q: str | None = None
    """A substring of the judge's output (Task 1: the model under test's; Tasks 2/3: `judge`'s)."""
    facets: dict[str, str] = field(default_factory=dict)
    only_cases: frozenset[str] | None = None
    """Keep these case ids only (a curation state)."""
    not_cases: frozenset[str] | None = None
    """Leave these case ids out."""
    sort: str = "rid"
    """One of `SORTS`: the order of the whole filtered run."""
    descending: bool = False
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


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _match(column: str, text: str, fts: bool) -> tuple[str, str]:
    """A substring test of `text` in `column`: an indexed trigram phrase (case-insensitive), or a scan below
    three characters (a trigram index cannot answer those)."""
    if fts and len(text) >= 3:
        return f"{column} MATCH ?", '"' + text.replace('"', '""') + '"'
    return f"{column.rsplit('.', 1)[0]}.body LIKE ? ESCAPE '\\'", "%" + _like_escape(text) + "%"


def _sort_column(key: str, judge: str | None) -> str:
    columns = {"rid": "s.rid", "case": "s.case_id", "gold": "s.gold", "correct": "s.correct",
               "verdict": "COALESCE(v.label, 'none')" if judge else "s.prediction",
               "score": "v.score" if judge else "s.score", "turns": "s.turns",
               "confidence": "ABS(v.score - 0.5)" if judge else "ABS(s.score - 0.5)",
               **{f: f"s.{f}" for f in FACETS}}
    return columns.get(key, "s.rid")


@dataclass
class _Select:
    source: str
    where: list[str]
    params: list[Any]
    column: str
    """The sort key (`s.rid` in data order); ties are broken by `s.rid` in the same direction."""
    descending: bool
    driver: str | None = None
    """The search table whose rows (in sample order) drive an unsorted query, so that a page stops early."""

    def order(self, reverse: bool = False) -> str:
        direction = "DESC" if self.descending != reverse else "ASC"
        if self.column == "s.rid" and self.driver:
            return f"{self.driver}.rowid {direction}"
        if self.column == "s.rid":
            return f"s.rid {direction}"
        return f"{self.column} {direction}, s.rid {direction}"

    def clause(self, *extra: str) -> str:
        return f"FROM {self.source} WHERE " + " AND ".join([*self.where, *extra])


def _select(query: Query, fts: bool) -> _Select:
    where: list[str] = ["1=1"]
    args: list[Any] = []
    source, driver = "samples s", None
    if query.q:
        # CROSS JOIN keeps the text table outside: asked per sample instead, FTS5 redoes the match each time
        source, driver = "text t CROSS JOIN samples s ON s.rid = t.rowid", "t"
        clause, arg = _match("t.text", query.q, fts)
        where.append(clause)
        args.append(arg)
    if query.judge_q:
        clause, arg = _match("j.judge_text", query.judge_q, fts)
        if driver is None:  # the judge's texts drive the query (their rows of one judge are in sample order)
            source, driver = "judge_text j CROSS JOIN samples s ON s.rid = j.rid", "j"
            where.extend([clause, "j.judge = ?"])
        else:
            where.append(f"s.rid IN (SELECT j.rid FROM judge_text j WHERE {clause} AND j.judge = ?)")
        args.extend([arg, query.judge or ""])
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
    # SQLite's own order of empty values (first ascending, last descending) lets a sort walk its index.
    return _Select(source, where, [*join_args, *args], _sort_column(query.sort, query.judge), query.descending,
                   driver)


Step = tuple[str, list[Any]]


def _before(column: str, key: Any, rid: int) -> list[Step]:
    """The rows before (key, rid) in ascending (column, s.rid) order (empty values first), as disjoint
    conditions, the nearest first; each is one range of the column's index (a row value compares both)."""
    if column == "s.rid":
        return [("s.rid < ?", [rid])]
    if key is None:
        return [(f"{column} IS NULL AND s.rid < ?", [rid])]
    return [(f"({column}, s.rid) < (?, ?)", [key, rid]), (f"{column} IS NULL", [])]


def _after(column: str, key: Any, rid: int) -> list[Step]:
    """The rows after (key, rid) in ascending (column, s.rid) order, as `_before` gives them."""
    if column == "s.rid":
        return [("s.rid > ?", [rid])]
    if key is None:
        return [(f"{column} IS NULL AND s.rid > ?", [rid]), (f"{column} IS NOT NULL", [])]
    return [(f"({column}, s.rid) > (?, ?)", [key, rid])]


def search(db: sqlite3.Connection, query: Query, fts: bool) -> Page:
    """One page of the samples that pass the filters, in the chosen order over all of them. Unsorted, a search
    lets its text table drive the query (its rows come in sample order, so a page stops early) and the count
    stops at `COUNT_CAP`."""
    sel = _select(query, fts)
    clause = sel.clause()
    columns = "s.*" + (", v.label AS verdict_label, v.score AS verdict_score" if query.judge else "")
    searching = bool(query.q or query.judge_q)
    if searching:
        total = int(db.execute(f"SELECT COUNT(*) FROM (SELECT 1 {clause} LIMIT {COUNT_CAP + 1})",
                               sel.params).fetchone()[0])
    else:
        total = int(db.execute(f"SELECT COUNT(*) {clause}", sel.params).fetchone()[0])
    capped = searching and total > COUNT_CAP
    total = min(total, COUNT_CAP) if capped else total
    per_page = max(1, min(query.per_page, 200))
    page = max(1, min(query.page, max(1, -(-total // per_page))))
    offset = (page - 1) * per_page
    limit = max(0, min(per_page, total - offset))  # a capped search's pages end at the cap
    rows = [dict(r) for r in db.execute(f"SELECT {columns} {clause} ORDER BY {sel.order()} LIMIT ? OFFSET ?",
                                        [*sel.params, limit, offset])]
    if query.q:
        found = snippets(db, [r["rid"] for r in rows], query.q)
        for r in rows:
            r["snippet"] = found.get(r["rid"], r.get("snippet"))
            r["snippet_match"] = r["rid"] in found
    return Page(rows=rows, total=total, page=page, per_page=per_page, capped=capped)


def iterate(db: sqlite3.Connection, query: Query, fts: bool) -> Iterator[dict[str, Any]]:
    """Every sample that passes the filters, in the chosen order (an export of the list: no page, no cap)."""
    sel = _select(query, fts)
    columns = "s.*" + (", v.label AS verdict_label, v.score AS verdict_score" if query.judge else "")
    for row in db.execute(f"SELECT {columns} {sel.clause()} ORDER BY {sel.order()}", sel.params):
        yield dict(row)


def neighbours(db: sqlite3.Connection, query: Query, fts: bool, rid: int) -> dict[str, Any] | None:
    """Where sample `rid` stands among those that pass the filters, in the chosen order: {position, total, prev,
    next} (rids; None at the ends), or None when the filters leave it out. Each is an indexed query from the
    sample's own sort key, not a numbering of every sample."""
    sel = _select(query, fts)
    found = db.execute(f"SELECT {sel.column} {sel.clause('s.rid = ?')}", [*sel.params, rid]).fetchone()
    if found is None:
        return None
    key = found[0]
    earlier = (_after if sel.descending else _before)(sel.column, key, rid)
    later = (_before if sel.descending else _after)(sel.column, key, rid)
    position = 1 + sum(int(db.execute(f"SELECT COUNT(*) {sel.clause(cond)}", [*sel.params, *args]).fetchone()[0])
                       for cond, args in earlier)

    def nearest(steps: list[Step], reverse: bool) -> int | None:
        for cond, args in steps:
            hit = db.execute(f"SELECT s.rid {sel.clause(cond)} ORDER BY {sel.order(reverse=reverse)} LIMIT 1",
                             [*sel.params, *args]).fetchone()
            if hit:
                return int(hit[0])
        return None

    total = int(db.execute(f"SELECT COUNT(*) {sel.clause()}", sel.params).fetchone()[0])
    return {"position": position, "total": total, "prev": nearest(earlier, True), "next": nearest(later, False)}


def around(body: str, needle: str) -> str | None:
    """The text around the first match of `needle` (lower case), on one line; None without a match."""
    at = body.lower().find(needle)
    if at < 0:
        return None
    start = max(0, at - SNIPPET_CHARS // 2)
    piece = " ".join(body[start:start + SNIPPET_CHARS].split())
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(body) else "")


def snippets(db: sqlite3.Connection, rids: list[int], q: str) -> dict[int, str]:
    """rid -> the text around the first match of `q` (case-insensitive), for the rows shown."""
    if not rids:
        return {}
    out: dict[int, str] = {}
    marks = ",".join("?" * len(rids))
    for rid, body in db.execute(f"SELECT rowid, body FROM text WHERE rowid IN ({marks})", rids):
        found = around(str(body), q.lower())
        if found is not None:
            out[int(rid)] = found
    return out


def head(text: str | None) -> str | None:
    """The first characters of a text, on one line: a row's snippet when nothing is searched."""
    if not text:
        return None
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS - 1] + "…"
