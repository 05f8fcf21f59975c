"""Curation: mark a case excluded or flagged (POST, CSRF-checked), and the audit trail of a run or mining output.
The curation file lies in the served directory, chosen by the id in the form, never by a path."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from uxbench.errors import UxbenchError
from uxbench.mining.pipeline.outputs import CASES_DIR, SIGNALS_PARQUET
from uxbench.runs.curation import ACTIONS, CURATION_DB, Curation
from uxbench.web.context import ViewState, form, state
from uxbench.web.pages.mined_cases import exported_ids

router = APIRouter()


def _known(view: ViewState, target: str, target_id: str, case_id: str) -> bool:
    """Whether `case_id` names a case of the target: a sample's case of the run; an exported case or a flagged
    turn (`conversation#turn`) of the mining output."""
    if target == "run":
        return view.index(view.run(target_id)).rid_of(case_id) is not None
    folder = view.mine(target_id).path
    conversation, _, turn = case_id.rpartition("#")
    if conversation and turn.isdigit() and (folder / SIGNALS_PARQUET).exists():
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        table = pq.read_table(folder / SIGNALS_PARQUET, columns=["conversation_id", "turn_index"],
                              filters=[("conversation_id", "=", conversation)])
        if pc.any(pc.equal(table["turn_index"], int(turn))).as_py():
            return True
    return (folder / CASES_DIR).is_dir() and case_id in exported_ids(folder / CASES_DIR)


def _folder(view: ViewState, target: str, target_id: str) -> Path:
    if target == "run":
        return view.run(target_id).path
    if target == "mine":
        return view.mine(target_id).path
    raise HTTPException(404, "no such target")


@router.post("/curate")
async def curate(request: Request) -> RedirectResponse:
    view = state(request)
    fields = await form(request)
    if not view.csrf.check("view", fields.get("csrf")):
        raise HTTPException(403, "the form is stale or was not sent by this page; reload and try again")
    folder = _folder(view, fields.get("target", ""), fields.get("target_id", ""))
    if fields.get("action") not in ACTIONS:
        raise HTTPException(400, "unknown action")
    if not _known(view, fields.get("target", ""), fields.get("target_id", ""), fields.get("case_id", "")):
        raise HTTPException(400, f"no case {fields.get('case_id', '')!r} in {fields.get('target_id', '')}: curate "
                                 "a case from its page")
    try:
        Curation(folder / CURATION_DB).record(fields.get("case_id", ""), fields["action"], fields.get("reason", ""),
                                              fields.get("who", ""))
    except UxbenchError as exc:
        raise HTTPException(400, str(exc)) from exc
    back = fields.get("back", "")
    if not back.startswith("/") or back.startswith("//"):  # stay on this site
        back = "/"
    return RedirectResponse(back, status_code=303)


@router.get("/curation/{target}/{target_id}", response_class=HTMLResponse)
def audit(request: Request, target: str, target_id: str) -> HTMLResponse:
    view = state(request)
    folder = _folder(view, target, target_id)
    curation = Curation(folder / CURATION_DB)
    return view.page("curation.html", title=f"Curation of {target_id}", target=target, target_id=target_id,
                     events=curation.events(), states=curation.states(), file=str(folder / CURATION_DB))
