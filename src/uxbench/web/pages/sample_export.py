"""The sample browser's list, exported: every sample that passes its filters and search, in its order (no page,
no cap), as CSV (the table's columns) or JSON Lines (the same fields, plus the output under test, the chosen
judge's output and the case as the run stored it). `/runs/{id}/samples.csv?...` takes the browser's query.

CSV cells that a spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) are written with a leading `'`."""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import orjson
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse

from uxbench.runs.store import SAMPLES_DB
from uxbench.web.pages.samples import listing, score_label

router = APIRouter()
BATCH = 500
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _fields(task: str | None, score: str | None) -> list[str]:
    head = ["rid", "case_id"]
    if task == "judge":
        head += ["gold", "verdict", "correct"] + (["p_good" if score == "p(good)" else "score"] if score else [])
    else:
        head += ["judge", "verdict", "p_good" if score == "p(good)" else "score"]
    return [*head, "scenario", "dimension", "difficulty", "turns", "curation", "text"]


def _row(r: dict[str, Any], task: str | None, score: str | None, judge: str | None,
         states: dict[str, Any]) -> dict[str, Any]:
    state_of = states.get(r["case_id"])
    out: dict[str, Any] = {"rid": r["rid"], "case_id": r["case_id"]}
    if task == "judge":
        out |= {"gold": r["gold"], "verdict": r["prediction"],
                "correct": None if r["correct"] is None else bool(r["correct"])}
        if score:
            out["p_good" if score == "p(good)" else "score"] = r["score"]
    else:
        out |= {"judge": judge, "verdict": r.get("verdict_label") or "none",
                "p_good" if score == "p(good)" else "score": r.get("verdict_score")}
    return out | {"scenario": r["scenario"], "dimension": r["dimension"], "difficulty": r["difficulty"],
                  "turns": r["turns"], "curation": state_of.action if state_of else None, "text": r["snippet"]}


def _details(run_dir: Any, rows: list[dict[str, Any]], judge: str | None) -> dict[str, tuple[Any, ...]]:
    """sample_id -> (record, case, the judge's score) for a batch of rows, read from the run's store."""
    ids = [r["sample_id"] for r in rows]
    marks = ",".join("?" * len(ids))
    db = sqlite3.connect(f"file:{run_dir / SAMPLES_DB}?mode=ro", uri=True, timeout=30, check_same_thread=False)
    try:
        found = {sid: (orjson.loads(body), orjson.loads(case) if case else None, None) for sid, body, case in
                 db.execute(f"SELECT sample_id, body, case_json FROM records WHERE sample_id IN ({marks})", ids)}
        if judge:
            for sid, body in db.execute(f"SELECT sample_id, body FROM scores WHERE judge = ? AND sample_id IN "
                                        f"({marks})", [judge, *ids]):
                if sid in found:
                    found[sid] = (found[sid][0], found[sid][1], orjson.loads(body))
    finally:
        db.close()
    return found


def _safe(value: Any) -> Any:
    text = "" if value is None else ("yes" if value else "no") if isinstance(value, bool) else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def _export(request: Request, run_id: str, kind: str) -> StreamingResponse:
    found = listing(request, run_id)
    entry, summary, query, index, states = found.entry, found.summary, found.query, found.index, found.states
    task = summary.get("task")
    score = score_label(summary, entry.manifest(), query.judge)
    judge_spec = ((summary.get("judges") or {}).get(query.judge or "") or {}).get("spec") or query.judge
    fields = _fields(task, score)

    def batches() -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        for r in index.iterate(query):
            batch.append(r)
            if len(batch) >= BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    def as_csv() -> Iterator[bytes]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(fields)
        yield ("\ufeff" + buffer.getvalue()).encode("utf-8")  # the mark makes spreadsheets read UTF-8 (Chinese)
        for batch in batches():
            buffer.seek(0)
            buffer.truncate()
            for r in batch:
                row = _row(r, task, score, judge_spec, states)
                writer.writerow([_safe(row.get(f)) for f in fields])
            yield buffer.getvalue().encode("utf-8")

    def as_jsonl() -> Iterator[bytes]:
        for batch in batches():
            details = _details(entry.path, batch, query.judge if task != "judge" else None)
            lines = []
            for r in batch:
                record, case, judged = details.get(r["sample_id"], ({}, None, None))
                row = _row(r, task, score, judge_spec, states)
                row |= {"output": record.get("raw_output"), "case": case}
                if task != "judge":
                    row["judge_output"] = (judged or {}).get("raw_output")
                lines.append(orjson.dumps(row) + b"\n")
            yield b"".join(lines)

    name = f"{entry.id}-samples.{kind}"
    ascii_name = name.encode("ascii", "replace").decode().replace("?", "_").replace('"', "_")
    headers = {"Content-Disposition": f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name)}"}
    media = "text/csv; charset=utf-8" if kind == "csv" else "application/x-ndjson; charset=utf-8"
    return StreamingResponse(as_csv() if kind == "csv" else as_jsonl(), media_type=media, headers=headers)


@router.get("/runs/{run_id}/samples.{kind}")
def export(request: Request, run_id: str, kind: str) -> StreamingResponse:
    if kind not in ("csv", "jsonl"):
        raise HTTPException(404, "no such export: samples.csv or samples.jsonl")
    return _export(request, run_id, kind)
