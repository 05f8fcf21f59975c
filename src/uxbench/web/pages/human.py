"""The annotator pages of a blind study: `/h/{token}` shows the annotator's next item (turns only: no label, no
model or judge name, no case id) and takes the judgment by POST with a CSRF token bound to the annotator's
token. Every request checks the token; an unknown one gets a 404 that says nothing more."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from uxbench.errors import UxbenchError
from uxbench.human.study import CHOICES, Annotator, Study
from uxbench.web.context import ViewState, form, state

router = APIRouter()


def _annotator(view: ViewState, token: str) -> tuple[Study, Annotator]:
    study = view.study
    annotator = study.annotator(token) if study is not None and 16 <= len(token) <= 100 else None
    if study is None or annotator is None:
        raise HTTPException(404, "not found")
    return study, annotator


@router.get("/h/{token}", response_class=HTMLResponse)
def item_page(request: Request, token: str) -> HTMLResponse:
    view = state(request)
    study, annotator = _annotator(view, token)
    order = study.order(annotator)
    done = {item for (_, item) in study.judgments(annotator.token)}
    mine = study.judgments(annotator.token)
    wanted = request.query_params.get("item")
    if wanted is not None and wanted not in order:
        raise HTTPException(404, "not found")
    item_id = wanted or next((i for i in order if i not in done), None)
    position = order.index(item_id) + 1 if item_id else len(order)
    context: dict[str, Any] = {
        "title": "Annotation", "nav": False, "token": token, "n_done": len(done), "n_items": len(order),
        "csrf": view.csrf.token("h:" + annotator.token), "mode": study.mode, "choices": CHOICES[study.mode],
        "order": order, "done": done, "position": position}
    if item_id is None:
        return view.page("human_done.html", **context)
    return view.page("human_item.html", item_id=item_id, item=study.shown(item_id),
                     current=mine.get((annotator.token, item_id)), **context)


@router.post("/h/{token}")
async def judge(request: Request, token: str) -> RedirectResponse:
    view = state(request)
    study, annotator = _annotator(view, token)
    fields = await form(request)
    if not view.csrf.check("h:" + annotator.token, fields.get("csrf")):
        raise HTTPException(403, "the form is stale; reload the page and judge again")
    try:
        study.judge(annotator, fields.get("item_id", ""), fields.get("choice", ""))
    except UxbenchError as exc:
        raise HTTPException(400, str(exc)) from exc
    return RedirectResponse(f"/h/{token}", status_code=303)
