"""The sample browser (filters, a search of the conversation and reply, a search of the judge's output, a sort
over the whole run kept in the URL, server-side pages, a snippet per row with the matches marked, p(good) where
the verdicts are probabilities, the filtered list exported as CSV or JSON Lines) and one sample turn by turn,
with its previous and next sample under the same filters and order and a jump to the turn under test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from uxbench.runs.curation import CURATION_DB, Curation
from uxbench.web.catalog import RunEntry
from uxbench.web.context import ViewState, state
from uxbench.web.sample_index import SampleIndex, load_sample
from uxbench.web.sample_query import FACETS, SORTS, Query

router = APIRouter()
_PARAMS = ("gold", "verdict", "correct", "judge", "q", "jq", "curation", *FACETS, "sort", "dir")
CURATION_FILTERS = {"excluded": "excluded", "flagged": "flagged", "marked": "excluded or flagged",
                    "unmarked": "neither"}
UNDER_TEST = "under-test"
"""The id of the turn under test on a sample page (the target of its 'jump' link)."""


def curation_filter(query: Query, wanted: str | None, states: dict[str, Any]) -> None:
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


def parse_query(request: Request, summary: dict[str, Any]) -> Query:
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
    sort = p.get("sort") or "rid"
    if sort not in SORTS:
        raise HTTPException(400, f"unknown sort {sort!r}: one of {', '.join(SORTS)}")
    if (p.get("dir") or "asc") not in ("asc", "desc"):
        raise HTTPException(400, "dir is asc or desc")
    return Query(gold=p.get("gold") or None, verdict=p.get("verdict") or None, correct=p.get("correct") or None,
                 judge=judge, q=(p.get("q") or "").strip()[:500] or None,
                 judge_q=(p.get("jq") or "").strip()[:500] or None,
                 facets={f: p[f] for f in FACETS if p.get(f)}, sort=sort, descending=p.get("dir") == "desc",
                 page=page, per_page=per_page)


def conversation(case: dict[str, Any], record: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The turns to show, oldest first: the history, the turn under test (its id `UNDER_TEST`), and what the
    task produced (`record` None: the case alone, as exported, without a generated reply)."""
    turns: list[dict[str, Any]] = [{"role": m.get("role"), "text": m.get("content"), "note": None}
                                   for m in case.get("history") or [] if isinstance(m, dict)]
    task = case.get("task")
    if task == "recovery":
        turns.append({"role": "assistant", "text": case.get("failed_response"), "note": "failed reply",
                      "id": UNDER_TEST})
        turns.append({"role": "user", "text": case.get("complaint"), "note": "complaint"})
    elif case.get("query") is not None:
        turns.append({"role": "user", "text": case.get("query"), "note": "turn under test", "id": UNDER_TEST})
    if task == "judge":
        turns.append({"role": "assistant", "text": case.get("response"), "note": "reply under judgement"})
    elif task in ("eval", "recovery") and record is not None:
        turns.append({"role": "assistant", "text": record.get("raw_output"),
                      "note": "generated recovery" if task == "recovery" else "generated reply"})
    return turns


def score_label(summary: dict[str, Any], manifest: dict[str, Any], judge: str | None) -> str | None:
    """The name of the score column: p(good) where the verdicts are probabilities (a Task 1 run with
    --verdict-from logprobs, a GRM judge), `score` for a Likert or rubric score, None where there is none."""
    if summary.get("task") != "judge":
        info = (summary.get("judges") or {}).get(judge or "") or {}
        return "p(good)" if info.get("mode") == "grm" else "score"
    config = manifest.get("task_config") or {}
    if config.get("verdict_from") == "logprobs":
        return "p(good)"
    return "score" if config.get("formulation") in ("likert", "rubric") else None


def kept_params(request: Request) -> dict[str, str]:
    """The browser's filters, search and sort (not its page), carried by its links and the sample pages'."""
    return {k: request.query_params[k] for k in _PARAMS if request.query_params.get(k)}


def _sort_links(kept: dict[str, str], query: Query) -> dict[str, str]:
    """column -> the link that sorts the whole run by it (a second click reverses the order)."""
    out = {}
    for key in SORTS:
        again = query.sort == key and not query.descending
        params = {**kept, "sort": key, "dir": "desc" if again else "asc"}
        if key == "rid" and not again:
            params.pop("sort")
            params.pop("dir")
        out[key] = "?" + urlencode(params)
    return out


@dataclass
class Listing:
    """What the browser's list is made of: the run, its summary, the query of the request (its curation filter
    applied), the run's index and the curation states. The list's page and its export share it."""

    view: ViewState
    entry: RunEntry
    summary: dict[str, Any]
    query: Query
    index: SampleIndex
    states: dict[str, Any]


def listing(request: Request, run_id: str) -> Listing:
    view = state(request)
    entry = view.run(run_id)
    summary = entry.summary()
    query = parse_query(request, summary)
    index = view.ready_index(entry)
    states = Curation(entry.path / CURATION_DB).states()
    curation_filter(query, request.query_params.get("curation") or None, states)
    return Listing(view, entry, summary, query, index, states)


@router.get("/runs/{run_id}/samples", response_class=HTMLResponse)
def browser(request: Request, run_id: str) -> HTMLResponse:
    found = listing(request, run_id)
    view, entry, summary, query, index, states = (found.view, found.entry, found.summary, found.query, found.index,
                                                  found.states)
    result = index.search(query)
    kept = kept_params(request)
    if query.per_page != 50:
        kept["per_page"] = str(result.per_page)
    links = {n: "?" + urlencode({**kept, "page": n}) for n in (1, result.page - 1, result.page + 1, result.pages)}
    score = score_label(summary, entry.manifest(), query.judge)
    confident = "?" + urlencode({**{k: v for k, v in kept.items() if k not in ("sort", "dir")},
                                 **({"correct": "no"} if summary.get("task") == "judge" else {}),
                                 "sort": "confidence", "dir": "desc"})
    exported = urlencode({k: v for k, v in kept.items()})
    return view.page("samples.html", title=f"Samples of {entry.id}", run=entry, summary=summary, query=query,
                     result=result, facets=index.facet_values(), links=links, params=kept, curation=states,
                     judges=summary.get("judges") or {}, curation_filters=CURATION_FILTERS,
                     curation_filter=request.query_params.get("curation") or "", sort_links=_sort_links(kept, query),
                     carry=("?" + urlencode(kept)) if kept else "", score_label=score,
                     confident_link=confident if score == "p(good)" else None,
                     export={"csv": f"/runs/{entry.id}/samples.csv" + (f"?{exported}" if exported else ""),
                             "jsonl": f"/runs/{entry.id}/samples.jsonl" + (f"?{exported}" if exported else "")})


def sample_prompts(manifest: dict[str, Any], summary: dict[str, Any], record: dict[str, Any],
                   case: dict[str, Any], scores: list[dict[str, Any]]) -> dict[str, Any]:
    """The full prompt each judge was sent for this sample (`report.judge_prompt`): Task 1's judge under test
    under the key "model", each Task 2/3 judge under its key."""
    from uxbench.report.judge_prompt import JudgePrompt, reply_judge_prompt, task1_prompt

    if not case:
        missing = JudgePrompt(error="this run stored no case with its records (made by an older uxbench), so the "
                                    "prompt cannot be rebuilt")
        return {"model": missing, **{str(s.get("judge")): missing for s in scores}}
    if summary.get("task") == "judge":
        return {"model": task1_prompt(manifest, record, case)}
    judges = {**(summary.get("judges") or {}), **(manifest.get("judges") or {})}
    return {str(s.get("judge")): reply_judge_prompt(manifest, judges.get(str(s.get("judge"))) or {}, record, case, s)
            for s in scores}


def _rid(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise HTTPException(404, "no such sample in this run (samples are numbered 1, 2, ...)") from None


@router.get("/runs/{run_id}/samples/{rid}", response_class=HTMLResponse)
def sample(request: Request, run_id: str, rid: str) -> HTMLResponse:
    view = state(request)
    entry = view.run(run_id)
    number = _rid(rid)
    summary = entry.summary()
    query = parse_query(request, summary)
    index = view.ready_index(entry)
    row = index.row(number)
    if row is None:
        raise HTTPException(404, "no such sample in this run")
    curation_filter(query, request.query_params.get("curation") or None,
                     Curation(entry.path / CURATION_DB).states())
    kept = kept_params(request)
    carry = ("?" + urlencode(kept)) if kept else ""
    around = index.neighbours(query, number) or index.neighbours(Query(judge=query.judge), number)
    record, case, scores = load_sample(entry.path, row["sample_id"])
    curation = Curation(entry.path / CURATION_DB)
    primary = summary.get("primary_judge")
    scores.sort(key=lambda s: s.get("judge") != primary)  # the judge of the run's figure first
    return view.page("sample.html", title=f"Sample {row['case_id']}", run=entry, row=row, record=record, case=case,
                     scores=scores, turns=conversation(case, record), judges=summary.get("judges") or {},
                     prompts=sample_prompts(entry.manifest(), summary, record, case, scores), primary=primary,
                     task=summary.get("task"), events=curation.events(str(row["case_id"])), who=view.who,
                     target="run", target_id=entry.id, around=around, carry=carry, filtered=bool(kept),
                     under_test=UNDER_TEST, score_label=score_label(summary, entry.manifest(), None))
