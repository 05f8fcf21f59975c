"""The start page: every run with its headline figure, the runs in progress with what they have written, the
leaderboard per task, the mining outputs. The served paths are looked at again on each visit (at most every few
seconds), so a run written since the server started is listed."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from uxbench.errors import UxbenchError
from uxbench.web.catalog import PendingEntry, RunEntry
from uxbench.web.context import ViewState, state

router = APIRouter()


def headline(summary: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(name, cell) of a run's headline figure: Task 1 Avg-Acc over all cases; Tasks 2/3 the primary judge's
    rate of the scored replies."""
    if summary.get("task") == "judge":
        return "Avg-Acc", ((summary.get("metrics") or {}).get("all") or {}).get("avg_acc")
    judges = summary.get("judges") or {}
    info = judges.get(summary.get("primary_judge") or "") or {}
    name = "Recovery Rate" if summary.get("task") == "recovery" else "Good%"
    return name, (info.get("metrics") or {}).get("good_rate_scored_only")


def headline_corrected(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The judge-corrected rate of the scored replies under the primary judge, when it is calibrated."""
    info = (summary.get("judges") or {}).get(summary.get("primary_judge") or "") or {}
    block = info.get("corrected") if isinstance(info.get("corrected"), dict) else {}
    found = (block or {}).get("scored_only")
    return found if isinstance(found, dict) else None


def headline_why(summary: dict[str, Any]) -> str | None:
    """Why a Task 2/3 run has no headline figure: its primary judge scored none of its replies (the counts of
    each kind of unusable answer), or it has no judge yet."""
    from uxbench.report.generative import unscored_reason

    if summary.get("task") == "judge":
        return None
    info = (summary.get("judges") or {}).get(summary.get("primary_judge") or "")
    if not info:
        return "not scored by any judge yet"
    return unscored_reason(info)


def run_rows(view: ViewState) -> list[dict[str, Any]]:
    from uxbench.dirlock import read_lock_holder

    rows = []
    for entry in view.catalog.runs.values():
        summary = entry.summary()
        name, cell = headline(summary)
        rows.append({"id": entry.id, "task": summary.get("task"), "model": summary.get("model"),
                     "n": summary.get("n_samples"), "metric": name, "cell": cell, "why": headline_why(summary),
                     "corrected": headline_corrected(summary),
                     "data": (summary.get("data") or {}).get("description"), "demo": summary.get("demo_data"),
                     "running": read_lock_holder(entry.path) is not None})  # resumed, or a judge added
    return rows


def pending_row(entry: PendingEntry) -> dict[str, Any]:
    """A run in progress as the pages show it: task, model, what it has written, who writes it and when it last
    did (`PendingEntry.progress`)."""
    from datetime import datetime, timezone

    manifest = entry.manifest()
    progress = entry.progress()
    limit = (manifest.get("options") or {}).get("limit")
    judges = manifest.get("judges") or {}
    updated = progress["updated"]
    return {"id": entry.id, "task": manifest.get("task"), "model": (manifest.get("model") or {}).get("spec"),
            "data": (manifest.get("data") or {}).get("description"), "records": progress["records"],
            "errors": progress["errors"], "total": progress["selected"] or limit,
            "scores": {str((judges.get(k) or {}).get("spec") or k): n for k, n in progress["scores"].items()},
            "holder": progress["holder"],
            "updated": datetime.fromtimestamp(updated, timezone.utc).isoformat(timespec="seconds") if updated
            else None}


def leaderboard_for(view: ViewState, entries: list[RunEntry]) -> dict[str, Any] | None:
    """`report.leaderboard` over the served runs, recomputed only when a summary changed."""
    from uxbench.report.leaderboard import leaderboard

    if not entries:
        return None
    key = tuple((e.id, (e.path / "summary.json").stat().st_mtime_ns) for e in entries)
    cached = view.cache.get("leaderboard")
    if cached and cached[0] == key:
        board: dict[str, Any] = cached[1]
        return board
    try:
        board = leaderboard([e.path for e in entries], n_boot=view.n_boot, seed=view.seed)
    except UxbenchError as exc:
        board = {"tasks": {}, "error": str(exc)}
    by_path = {str(e.path): e.id for e in entries}
    sims = {str(e.path): e.id for e in view.catalog.sims.values()}
    for task in board.get("tasks", {}).values():
        for row in task["rows"]:
            row["view_id"] = by_path.get(row["run_dir"])
            if row["run_dir"] in sims:
                row["view_href"] = f"/sims/{sims[row['run_dir']]}"
    view.cache["leaderboard"] = (key, board)
    return board


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    view = state(request)
    view.catalog.refresh()
    board = leaderboard_for(view, [*view.catalog.runs.values(), *view.catalog.sims.values()])  # type: ignore[list-item]
    from uxbench.web.pages.scaling import scaling_tasks
    from uxbench.web.pages.sim import sim_rows

    return view.page("index.html", title="uxbench", runs=run_rows(view), board=board, sims=sim_rows(view),
                     mines=list(view.catalog.mines.values()), skipped=view.catalog.skipped,
                     pending=[pending_row(e) for e in view.catalog.pending.values()],
                     scaling=scaling_tasks(board))
