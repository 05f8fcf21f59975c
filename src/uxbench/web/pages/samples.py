"""The sample browser (filters, full-text search, server-side pages) and one sample turn by turn."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from uxbench.runs.curation import CURATION_DB, Curation
from uxbench.web.context import state
from uxbench.web.sample_index import FACETS, Query, load_sample

router = APIRouter()
_PARAMS = ("gold", "verdict", "correct", "judge", "q", "curation", *FACETS)
CURATION_FILTERS = {"excluded": "excluded", "flagged": "flagged", "marked": "excluded or flagged",
                    "unmarked": "neither"}


def _curation_filter(query: Query, wanted: str | None, states: dict[str, Any]) -> None:
    """Restrict `query` to the cases in a curation state (`CURATION_FILTERS`)."""
    if not wanted:
        return
    if wanted not in CURATION_FILTERS:
        raise HTTPException(400, "unknown curation filter")
    marked = {cid: e.action for cid, e in states.items()}
    if wanted == "unmarked":
        query.not_cases = frozenset(marked)
    else:
        actions = {"excluded": {"exclude"}, "flagged": {"flag"}, "marked": {"exclude", "flag"}}[wanted]
        query.only_cases = frozenset(c for c, a in marked.items() if a in actions)


def _query(request: Request, summary: dict[str, Any]) -> Query:
    p = request.query_params
    judge = p.get("judge") or None
    if summary.get("task") != "judge":
        judges = summary.get("judges") or {}
        judge = judge if judge in judges else summary.get("primary_judge")
    try:
        page = int(p.get("page") or 1)
        per_page = int(p.get("per_page") or 50)
    except ValueError as exc:
        raise HTTPException(400, "page and per_page are numbers") from exc
    return Query(gold=p.get("gold") or None, verdict=p.get("verdict") or None, correct=p.get("correct") or None,
                 judge=judge, q=(p.get("q") or "").strip()[:500] or None,
                 facets={f: p[f] for f in FACETS if p.get(f)}, page=page, per_page=per_page)


def conversation(case: dict[str, Any], record: dict[str, Any]) -> list[dict[str, Any]]:
    """The turns to show, oldest first: the history, the turn under test, and what the task produced."""
    turns: list[dict[str, Any]] = [{"role": m.get("role"), "text": m.get("content"), "note": None}
                                   for m in case.get("history") or [] if isinstance(m, dict)]
    task = case.get("task")
    if task == "recovery":
        turns.append({"role": "assistant", "text": case.get("failed_response"), "note": "failed reply"})
        turns.append({"role": "user", "text": case.get("complaint"), "note": "complaint"})
    elif case.get("query") is not None:
        turns.append({"role": "user", "text": case.get("query"), "note": "turn under test"})
    if task == "judge":
        turns.append({"role": "assistant", "text": case.get("response"), "note": "reply under judgement"})
    elif task in ("eval", "recovery"):
        turns.append({"role": "assistant", "text": record.get("raw_output"), "note": "generated reply"})
    return turns


@router.get("/runs/{run_id}/samples", response_class=HTMLResponse)
def browser(request: Request, run_id: str) -> HTMLResponse:
    view = state(request)
    entry = view.run(run_id)
    summary = entry.summary()
    index = view.index(entry)
    query = _query(request, summary)
    states = Curation(entry.path / CURATION_DB).states()
    _curation_filter(query, request.query_params.get("curation") or None, states)
    result = index.search(query)
    kept = {k: request.query_params[k] for k in _PARAMS if request.query_params.get(k)}
    if query.per_page != 50:
        kept["per_page"] = str(result.per_page)
    links = {n: "?" + urlencode({**kept, "page": n}) for n in (1, result.page - 1, result.page + 1, result.pages)}
    return view.page("samples.html", title=f"Samples of {entry.id}", run=entry, summary=summary, query=query,
                     result=result, facets=index.facet_values(), links=links, params=kept, curation=states,
                     judges=summary.get("judges") or {}, curation_filters=CURATION_FILTERS,
                     curation_filter=request.query_params.get("curation") or "")


@router.get("/runs/{run_id}/samples/{rid}", response_class=HTMLResponse)
def sample(request: Request, run_id: str, rid: int) -> HTMLResponse:
    view = state(request)
    entry = view.run(run_id)
    row = view.index(entry).row(rid)
    if row is None:
        raise HTTPException(404, "no such sample in this run")
    record, case, scores = load_sample(entry.path, row["sample_id"])
    summary = entry.summary()
    curation = Curation(entry.path / CURATION_DB)
    return view.page("sample.html", title=f"Sample {row['case_id']}", run=entry, row=row, record=record, case=case,
                     scores=scores, turns=conversation(case, record), judges=summary.get("judges") or {},
                     task=summary.get("task"), events=curation.events(str(row["case_id"])), who=view.who,
                     target="run", target_id=entry.id)
