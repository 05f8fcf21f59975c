"""A blind study in `STUDY_DIR/study.sqlite`: the items (what annotators see, and apart from it the hidden labels
and judges' verdicts), one unguessable token per annotator, and their judgments, saved as each is made so that a
reload resumes where the annotator stopped.

Pointwise: an item is a conversation whose last reply the annotator calls good or bad. Items of a Task 1 source are
drawn stratified by gold class; items of a Task 2/3 run are a uniform random draw of its replies (seeded, with the
population size recorded), so that the human labels anchor an estimate of the run's Good% (`human.anchored`).
`draw` chooses otherwise. Pairwise: two
conversations of opposite gold labels (of one scenario when the data allows), shown as A and B in a random
order; the annotator picks the better reply, and the label is the side of the good one.

Besides the decisive choices (good / bad; A / B) an annotator may answer `skip` (unsure: no judgment, left out of
every figure and counted) and, pairwise, `tie` (both replies equally good) or `both_bad` (neither would satisfy
the user). The study's language (`lang`: zh or en, chosen at creation from the items' text unless given) is the
language of the annotator pages.
"""

from __future__ import annotations

import random
import re
import secrets
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import orjson

from uxbench.errors import UxbenchError
from uxbench.fileio import connect_sqlite, is_damage, sqlite_damaged
from uxbench.human.sources import Candidate, from_run, load_candidates

STUDY_DB = "study.sqlite"
Mode = Literal["pointwise", "pairwise"]
CHOICES = {"pointwise": ("good", "bad", "skip"), "pairwise": ("A", "B", "tie", "both_bad", "skip")}
"""What an annotator may answer, per mode."""
DECISIVE = {"pointwise": ("good", "bad"), "pairwise": ("A", "B")}
"""The choices that take a side (the others are `tie`, `both_bad` and `skip`)."""
SKIP = "skip"
"""Unsure: the annotator gives no judgment (left out of every figure, counted)."""
DRAWS = ("random", "stratified")
LANGS = ("auto", "zh", "en")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    pos INTEGER PRIMARY KEY, item_id TEXT NOT NULL UNIQUE, shown TEXT NOT NULL, label TEXT, stratum TEXT,
    hidden TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS annotators (token TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, seed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS judgments (
    token TEXT NOT NULL, item_id TEXT NOT NULL, choice TEXT NOT NULL, at TEXT NOT NULL,
    PRIMARY KEY (token, item_id)
);
"""


@dataclass(frozen=True)
class Annotator:
    token: str
    name: str
    seed: int


def _stratified(candidates: list[Candidate], n: int, rng: random.Random) -> list[Candidate]:
    """n items spread evenly over the strata (classes), the remainder filled from the larger ones."""
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        groups[c.stratum].append(c)
    for members in groups.values():
        rng.shuffle(members)
    picked: list[Candidate] = []
    keys = sorted(groups)
    while len(picked) < n and any(groups[k] for k in keys):
        for k in keys:
            if groups[k] and len(picked) < n:
                picked.append(groups[k].pop())
    rng.shuffle(picked)
    return picked


def _pairs(candidates: list[Candidate], n: int, rng: random.Random) -> list[tuple[Candidate, Candidate]]:
    good = [c for c in candidates if c.label == "good"]
    bad = [c for c in candidates if c.label == "bad"]
    if not good or not bad:
        raise UxbenchError("pairwise studies need cases of both gold labels (good and bad) to pair.")
    rng.shuffle(good)
    rng.shuffle(bad)
    pairs: list[tuple[Candidate, Candidate]] = []
    while good and bad and len(pairs) < n:
        g = good.pop()
        same = [b for b in bad if b.scenario == g.scenario]
        b = same[0] if same else bad[0]
        bad.remove(b)
        pairs.append((g, b))
    return pairs


def items_lang(shown: list[dict[str, Any]]) -> str:
    """zh when most items' text is Chinese (Han characters in their turns), else en."""
    def chinese(item: dict[str, Any]) -> bool:
        turns = [t for key in ("turns", "a", "b") for t in item.get(key) or []]
        return any(_HAN.search(str(t.get("text") or "")) for t in turns)

    return "zh" if shown and 2 * sum(map(chinese, shown)) > len(shown) else "en"


def _judge_pick(good: Candidate, bad: Candidate, good_side: str) -> dict[str, str | None]:
    """A judge prefers the side it called good when it called exactly one of the two good."""
    out: dict[str, str | None] = {}
    other = "B" if good_side == "A" else "A"
    for name in set(good.judges) | set(bad.judges):
        g, b = good.judges.get(name), bad.judges.get(name)
        out[name] = good_side if (g, b) == ("good", "bad") else other if (g, b) == ("bad", "good") else None
    return out


def _two_runs(first: str, second: str, n: int, rng: random.Random) -> tuple[list[tuple[str, None, str, dict[str, Any]]],
                                                                       dict[str, Any]]:
    """Pairwise items from two Task 2/3 runs: the same case's two replies as A and B (random order), no label;
    a judge prefers the reply it called good when it called the other bad."""
    if Path(first).resolve() == Path(second).resolve():
        raise UxbenchError(f"--from names {first} twice: a pairwise study compares two different runs on the same "
                           "data (--from A --from B).")
    (cands_a, info_a), (cands_b, info_b) = from_run(Path(first)), from_run(Path(second))
    if info_a.get("identity_hash") and info_a.get("identity_hash") == info_b.get("identity_hash"):
        raise UxbenchError(f"{first} and {second} hold the same run (one configuration, copied): every pair would be "
                           "a reply against itself. Compare two different runs on the same data.")
    if info_a["task"] == "judge" or info_b["task"] == "judge" or info_a["task"] != info_b["task"]:
        raise UxbenchError("a pairwise study of two runs needs two Task 2 (or two Task 3) runs; for Task 1 pass one "
                           "run or data set.")
    by_case = {c.case_id: c for c in cands_b}
    shared = [c for c in cands_a if c.case_id in by_case]
    if not shared:
        raise UxbenchError(f"{first} and {second} share no case with a reply.")
    rng.shuffle(shared)
    rows: list[tuple[str, None, str, dict[str, Any]]] = []
    for one in shared[:n]:
        other = by_case[one.case_id]
        swap = rng.random() < 0.5
        a, b = (other, one) if swap else (one, other)
        models = {"A": info_b["model"] if swap else info_a["model"], "B": info_a["model"] if swap else info_b["model"]}
        judges: dict[str, str | None] = {}
        for name in set(a.judges) & set(b.judges):
            pair = (a.judges[name], b.judges[name])
            judges[name] = "A" if pair == ("good", "bad") else "B" if pair == ("bad", "good") else None
        rows.append((orjson.dumps({"a": a.turns, "b": b.turns}).decode(), None, one.scenario or "",
                     {"case_id": one.case_id, "models": models, "judges": judges}))
    return rows, {"source": f"{first} vs {second}", "task": info_a["task"]}


class Study:
    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.path = self.dir / STUDY_DB

    @classmethod
    def open(cls, directory: str | Path) -> Study:
        study = cls(directory)
        if not study.path.is_file():
            raise UxbenchError(f"{study.dir} is not a study directory (no {STUDY_DB}); create one with "
                               "`uxbench human new --from RUN_DIR --out DIR`.")
        return study

    def _db(self) -> sqlite3.Connection:
        fix = ("It holds the study's items, links and judgments: restore it from a backup, or create a new study "
               "with `uxbench human new` (its links will be new).")
        db = connect_sqlite(self.path, timeout=30, fix=fix)
        try:
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            db.close()
            if is_damage(exc):
                raise sqlite_damaged(self.path, str(exc), fix) from None
            raise
        return db

    # -- creating ---------------------------------------------------------------------------
    @classmethod
    def create(cls, directory: str | Path, source: str | list[str], *, n: int, annotators: int,
               mode: str = "pointwise", seed: int = 0, draw: str | None = None, lang: str = "auto") -> Study:
        """A study drawn from one run or data set, or (pairwise) from two Task 2/3 runs on the same cases.

        `draw` (pointwise): random (every reply equally likely; the default for a Task 2/3 run) or stratified (by
        gold class, or by the primary judge's verdict; the default otherwise). `lang`: the language of the
        annotator pages (auto: zh when most items are Chinese)."""
        if lang not in LANGS:
            raise UxbenchError(f"--lang must be one of {', '.join(LANGS)}, not {lang!r}.")
        if draw is not None and draw not in DRAWS:
            raise UxbenchError(f"--draw must be random or stratified, not {draw!r}.")
        if draw is not None and mode != "pointwise":
            raise UxbenchError("--draw applies to pointwise studies; pairwise items are paired by class or case.")
        sources = [source] if isinstance(source, str) else list(source)
        if not 1 <= len(sources) <= 2 or (len(sources) == 2 and mode != "pairwise"):
            raise UxbenchError("pass one --from, or two Task 2/3 runs with --mode pairwise.")
        if mode not in CHOICES:
            raise UxbenchError(f"--mode must be pointwise or pairwise, not {mode!r}.")
        if n < 1 or annotators < 1:
            raise UxbenchError("--n and --annotators must be at least 1.")
        study = cls(directory)
        if study.path.exists():
            raise UxbenchError(f"{study.path} exists already: choose another --out, or serve that study.")
        rng = random.Random(seed)
        rows: list[tuple[str, str | None, str, dict[str, Any]]] = []  # shown, label, stratum, hidden
        if len(sources) == 2:
            pairs, info = _two_runs(sources[0], sources[1], n, rng)
            rows.extend(pairs)
        elif mode == "pointwise":
            candidates, info = load_candidates(sources[0])
            how = draw or ("random" if info.get("kind") == "run" and info.get("task") != "judge" else "stratified")
            picked = rng.sample(candidates, min(n, len(candidates))) if how == "random" else \
                _stratified(candidates, n, rng)
            info = {**info, "draw": how, "population": str(len(candidates))}
            for c in picked:
                rows.append((orjson.dumps({"turns": c.turns}).decode(), c.label, c.stratum,
                             {"case_id": c.case_id, "judges": c.judges, "scenario": c.scenario}))
        else:
            candidates, info = load_candidates(sources[0])
            if info.get("kind") == "run" and info.get("task") != "judge":
                raise UxbenchError(
                    f"--mode pairwise from one source pairs a good and a bad reply by their gold labels, which Task 1 "
                    f"cases have; {sources[0]} is a Task {2 if info.get('task') == 'eval' else 3} run, whose replies "
                    "have none. Pass two Task 2/3 runs on the same data (--from A --from B), or --mode pointwise.")
            for good, bad in _pairs(candidates, n, rng):
                side = rng.choice("AB")
                a, b = (good, bad) if side == "A" else (bad, good)
                rows.append((orjson.dumps({"a": a.turns, "b": b.turns}).decode(), side, good.scenario or "",
                             {"case_a": a.case_id, "case_b": b.case_id, "judges": _judge_pick(good, bad, side)}))
        study.dir.mkdir(parents=True, exist_ok=True)
        db = study._db()
        try:
            db.execute("BEGIN")
            shown_lang = items_lang([orjson.loads(r[0]) for r in rows]) if lang == "auto" else lang
            meta: dict[str, str] = {"mode": mode, "source": info["source"], "task": info["task"], "n": str(len(rows)),
                                    "seed": str(seed), "lang": shown_lang,
                                    "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                    **{k: str(info[k]) for k in ("draw", "population", "kind") if k in info}}
            db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            db.executemany("INSERT INTO items(pos, item_id, shown, label, stratum, hidden) VALUES (?, ?, ?, ?, ?, ?)",
                           [(i, f"i{i + 1:04d}", shown, label, stratum, orjson.dumps(hidden).decode())
                            for i, (shown, label, stratum, hidden) in enumerate(rows)])
            db.executemany("INSERT INTO annotators VALUES (?, ?, ?)",
                           [(secrets.token_urlsafe(24), f"annotator-{k + 1}", rng.randrange(2**31))
                            for k in range(annotators)])
            db.execute("COMMIT")
        finally:
            db.close()
        return study

    # -- reading ----------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        db = self._db()
        try:
            return dict(db.execute("SELECT key, value FROM meta").fetchall())
        finally:
            db.close()

    @property
    def mode(self) -> str:
        return self.meta().get("mode", "pointwise")

    @property
    def lang(self) -> str:
        """The language of the annotator pages: the one recorded at creation (a study made before it was
        recorded: read from its items)."""
        return self.meta().get("lang") or items_lang([i["shown"] for i in self.items()])

    def annotators(self) -> list[Annotator]:
        db = self._db()
        try:
            return [Annotator(*r) for r in db.execute("SELECT token, name, seed FROM annotators ORDER BY name")]
        finally:
            db.close()

    def annotator(self, token: str) -> Annotator | None:
        """The annotator holding `token`, compared in constant time against every token."""
        found = None
        for a in self.annotators():
            if secrets.compare_digest(a.token.encode(), token.encode()):
                found = a
        return found

    def items(self) -> list[dict[str, Any]]:
        """Every item with its label and hidden fields (for results; never sent to an annotator)."""
        db = self._db()
        try:
            return [{"item_id": r[0], "shown": orjson.loads(r[1]), "label": r[2], "stratum": r[3],
                     "hidden": orjson.loads(r[4])}
                    for r in db.execute("SELECT item_id, shown, label, stratum, hidden FROM items ORDER BY pos")]
        finally:
            db.close()

    def order(self, annotator: Annotator) -> list[str]:
        """The annotator's own order of the items (seeded per annotator, against order effects)."""
        ids = [i["item_id"] for i in self.items()]
        random.Random(annotator.seed).shuffle(ids)
        return ids

    def shown(self, item_id: str) -> dict[str, Any] | None:
        """What an annotator may see of an item: the turns only."""
        db = self._db()
        try:
            row = db.execute("SELECT shown FROM items WHERE item_id = ?", (item_id,)).fetchone()
        finally:
            db.close()
        return orjson.loads(row[0]) if row else None

    def judgments(self, token: str | None = None) -> dict[tuple[str, str], str]:
        """(token, item_id) -> choice."""
        db = self._db()
        try:
            sql = "SELECT token, item_id, choice FROM judgments" + (" WHERE token = ?" if token else "")
            return {(t, i): c for t, i, c in db.execute(sql, (token,) if token else ())}
        finally:
            db.close()

    def judge(self, annotator: Annotator, item_id: str, choice: str) -> None:
        """Save (or change) one judgment; committed before returning."""
        if choice not in CHOICES[self.mode]:
            raise UxbenchError(f"choice must be one of {', '.join(CHOICES[self.mode])}, not {choice!r}.")
        db = self._db()
        try:
            if db.execute("SELECT 1 FROM items WHERE item_id = ?", (item_id,)).fetchone() is None:
                raise UxbenchError("no such item in this study.")
            db.execute("INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?)",
                       (annotator.token, item_id, choice, datetime.now(timezone.utc).isoformat(timespec="seconds")))
        finally:
            db.close()
