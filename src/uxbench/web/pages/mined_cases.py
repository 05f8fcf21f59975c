"""The test cases a mining output exported (`cases/*.jsonl`, with the model), page by page, each with its
conversation and labels and a curation form keyed by its case id: the ids `uxbench run --data OUT/cases/...`
reads, so an excluded case is left out of later runs (the curation file lies in the output directory)."""

from __future__ import annotations

from itertools import islice
from typing import Any

import orjson
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from uxbench.errors import UxbenchError
from uxbench.mining.pipeline.outputs import CASES_DIR
from uxbench.runs.curation import CURATION_DB, Curation
from uxbench.web.context import state
from uxbench.web.pages.samples import conversation

router = APIRouter()
PER_PAGE = 20


@router.get("/mines/{mine_id}/cases", response_class=HTMLResponse)
def mined_cases(request: Request, mine_id: str) -> HTMLResponse:
    from uxbench.data.loaders import load_cases

    view = state(request)
    entry = view.mine(mine_id)
    folder = entry.path / CASES_DIR
    if not folder.is_dir():
        raise HTTPException(404, "this mining output has no exported cases (run `uxbench mine run` with a model)")
    try:
        page = max(1, int(request.query_params.get("page") or 1))
    except ValueError as exc:
        raise HTTPException(400, "page is a number") from exc
    try:
        chosen = list(islice(iter(load_cases(str(folder))), (page - 1) * PER_PAGE, page * PER_PAGE + 1))
    except UxbenchError as exc:
        raise HTTPException(404, str(exc)) from exc
    more = len(chosen) > PER_PAGE
    states = Curation(entry.path / CURATION_DB).states()
    items: list[dict[str, Any]] = []
    for case in chosen[:PER_PAGE]:
        data = orjson.loads(case.__pydantic_serializer__.to_json(case))
        items.append({"id": case.id, "task": case.task, "labels": data.get("labels") or {},
                      "gold": data.get("label"), "turns": conversation(data, None), "state": states.get(case.id)})
    return view.page("mined_cases.html", title=f"Cases of {entry.id}", mine=entry, items=items, page=page,
                     more=more, who=view.who)
