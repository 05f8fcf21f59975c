"""The annotator pages of a blind study: `/h/{token}` shows the annotator's next item (turns only: no label, no
model or judge name, no case id) and takes the judgment by POST with a CSRF token bound to the annotator's
token. Every request checks the token; an unknown one gets a 404 that says nothing more.

The page is laid out to judge a hundred items: the conversation once (its latest turns in view), the reply or
the two replies under it and the choices, all within a laptop's screen; a key per choice (shown on the page);
short guidelines; every word in the study's language (`annotator_text`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from uxbench.errors import UxbenchError
from uxbench.human.study import CHOICES, Annotator, Study
from uxbench.web.annotator_text import KEYS, NEXT_KEY, PREV_KEY, text
from uxbench.web.context import ViewState, form, state

router = APIRouter()


def _same(one: list[dict[str, Any]], other: list[dict[str, Any]]) -> bool:
    return [(t.get("role"), t.get("text")) for t in one] == [(t.get("role"), t.get("text")) for t in other]


def layout(item: dict[str, Any]) -> dict[str, Any]:
    """What the item page shows: `context` (the turns before the reply, shown once), `replies` ({side: turn}),
    and for a pair of different conversations (a Task 1 pair) `contexts` ({side: turns}) instead of `context`."""
    if "turns" in item:
        turns = list(item["turns"])
        return {"context": turns[:-1], "replies": {"": turns[-1] if turns else {}}, "contexts": None}
    a, b = list(item.get("a") or []), list(item.get("b") or [])
    replies = {"A": a[-1] if a else {}, "B": b[-1] if b else {}}
    if _same(a[:-1], b[:-1]):
        return {"context": a[:-1], "replies": replies, "contexts": None}
    return {"context": [], "replies": replies, "contexts": {"A": a[:-1], "B": b[:-1]}}


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
    words = text(study.lang)
    context: dict[str, Any] = {
        "title": words["title"], "nav": False, "token": token, "n_done": len(done), "n_items": len(order),
        "csrf": view.csrf.token("h:" + annotator.token), "mode": study.mode, "choices": CHOICES[study.mode],
        "order": order, "done": done, "position": position, "t": words, "page_lang": study.lang, "keys": KEYS,
        "header": words["title"]}
    if item_id is None:
        return view.page("human_done.html", **context)
    at = order.index(item_id)
    return view.page("human_item.html", item_id=item_id, shown=layout(study.shown(item_id) or {}),
                     current=mine.get((annotator.token, item_id)), prev_item=order[at - 1] if at else None,
                     next_item=order[at + 1] if at + 1 < len(order) else None, prev_key=PREV_KEY,
                     next_key=NEXT_KEY, **context)


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
