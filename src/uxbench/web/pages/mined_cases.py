"""The test cases a mining output exported (`cases/*.jsonl`, with the model), page by page, filtered by task and
label, each with its conversation as a run would see it (Task 3: the failed reply and the complaint) and its
labels, and a curation form keyed by its case id: the ids `uxbench run --data OUT/cases/...` reads, so an
excluded case is left out of later runs (the curation file lies in the output directory)."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlencode

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
TASKS = ("judge", "eval", "recovery")
LABELS = ("good", "bad")


def exported_ids(folder: Any) -> set[str]:
    """The case ids of a mining output's exported cases (what curation may name)."""
    from uxbench.data.loaders import load_cases

    try:
        return {case.id for case in load_cases(str(folder))}
    except UxbenchError:
        return set()


@router.get("/mines/{mine_id}/cases", response_class=HTMLResponse)
def mined_cases(request: Request, mine_id: str) -> HTMLResponse:
    from uxbench.data.loaders import load_cases

    view = state(request)
    entry = view.mine(mine_id)
    folder = entry.path / CASES_DIR
    if not folder.is_dir():
        raise HTTPException(404, "this mining output has no exported cases (run `uxbench mine run` with a model)")
    p = request.query_params
    try:
        page = int(p.get("page") or 1)
    except ValueError as exc:
        raise HTTPException(400, "page is a number") from exc
    task, label = p.get("task") or None, p.get("label") or None
    if task not in (None, *TASKS) or label not in (None, *LABELS):
        raise HTTPException(400, f"task is one of {', '.join(TASKS)}; label good or bad")
    try:
        cases = list(load_cases(str(folder)))
    except UxbenchError as exc:
        raise HTTPException(404, str(exc)) from exc
    tasks = Counter(c.task for c in cases)
    chosen = [c for c in cases if (task is None or c.task == task)
              and (label is None or getattr(c, "label", None) == label)]
    pages = max(1, -(-len(chosen) // PER_PAGE))
    if page < 1 or page > pages:
        raise HTTPException(404, f"no page {page}: these cases fill {pages} page{'s' if pages > 1 else ''}")
    states = Curation(entry.path / CURATION_DB).states()
    items: list[dict[str, Any]] = []
    for case in chosen[(page - 1) * PER_PAGE: page * PER_PAGE]:
        data = orjson.loads(case.__pydantic_serializer__.to_json(case))
        items.append({"id": case.id, "task": case.task, "labels": data.get("labels") or {},
                      "gold": data.get("label"), "turns": conversation(data, None), "state": states.get(case.id)})
    kept = {k: v for k, v in (("task", task), ("label", label)) if v}
    links = {n: "?" + urlencode({**kept, "page": n}) for n in (page - 1, page + 1)}
    back = f"/mines/{entry.id}/cases?" + urlencode({**kept, "page": page})
    return view.page("mined_cases.html", title=f"Cases of {entry.id}", mine=entry, items=items, page=page,
                     pages=pages, total=len(cases), matched=len(chosen), tasks=tasks, task=task, label=label,
                     task_names=TASKS, links=links, back=back, who=view.who)
