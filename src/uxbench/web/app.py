"""The app factory of `uxbench view`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from uxbench.metrics.proportions import DEFAULT_N_BOOT
from uxbench.web.catalog import Catalog
from uxbench.web.context import IndexBuilding, RunInProgress, ViewState
from uxbench.web.pages import (
    compare,
    curation,
    human,
    mined_cases,
    mining,
    plots,
    run,
    runs,
    sample_export,
    samples,
    sim,
)
from uxbench.web.security import HostCheck

if TYPE_CHECKING:
    from uxbench.human.study import Study

_HEADERS = {
    # Everything is served from here: no inline script, no remote script, style or image.
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def create_app(catalog: Catalog, *, index_dir: Path, study: Study | None = None, hosts: HostCheck | None = None,
               annotator_only: bool = False, n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> FastAPI:
    """The web app over `catalog` (and, when given, the annotator pages of `study`). `hosts`: the names requests
    may use (default: loopback only). `annotator_only` (`uxbench human serve`): the annotator pages and nothing
    else, no run list or compare form. Its intervals use `n_boot` bootstrap rounds and `seed`, as the CLI does."""
    app = FastAPI(title="uxbench view", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.view = ViewState(catalog=catalog, index_dir=index_dir, study=study, n_boot=n_boot, seed=seed)
    check = hosts or HostCheck()
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")
    routers = (human,) if annotator_only else (runs, run, samples, sample_export, compare, mining, mined_cases,
                                               curation, human, plots, sim)
    for module in routers:
        app.include_router(module.router)

    @app.middleware("http")
    async def headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        if not check.allows(request.headers.get("host")):  # before anything is read or written
            response: Response = PlainTextResponse(
                "This server answers only to " + check.describe() + ". If you reach it under another name, "
                "start it with --allow-host NAME.\n", status_code=421)
        else:
            response = await call_next(request)
        for key, value in _HEADERS.items():
            response.headers.setdefault(key, value)
        if request.url.path.startswith("/h/") or annotator_only:
            response.headers["Cache-Control"] = "no-store"
        return response

    def error_page(request: Request, status: int, message: str) -> HTMLResponse:
        view: ViewState = request.app.state.view
        return view.page("error.html", status=status, code=status, message=message,
                         nav=not (annotator_only or request.url.path.startswith("/h/")))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> HTMLResponse:
        return error_page(request, exc.status_code, str(exc.detail))

    @app.exception_handler(IndexBuilding)
    async def building(request: Request, exc: IndexBuilding) -> HTMLResponse:
        view: ViewState = request.app.state.view
        done, total = exc.index.progress or (0, 0)
        response = view.page("building.html", status=202, title=f"Indexing {exc.entry.id}", run=exc.entry,
                             done=done, total=total)
        response.headers["Retry-After"] = "2"
        return response

    @app.exception_handler(RunInProgress)
    async def in_progress(request: Request, exc: RunInProgress) -> HTMLResponse:
        from uxbench.web.pages.runs import pending_row

        view: ViewState = request.app.state.view
        response = view.page("run_progress.html", status=202, title=f"Run {exc.entry.id} in progress",
                             run=pending_row(exc.entry))
        response.headers["Retry-After"] = "5"
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> HTMLResponse:
        """A path or query value of the wrong kind (`/samples/abc`): the error page, not FastAPI's JSON."""
        where = [str(e.get("loc", ["", ""])[-1]) for e in exc.errors()]
        if any(e.get("loc", [""])[0] == "path" for e in exc.errors()):
            return error_page(request, 404, "no such page (" + ", ".join(where) + " is not valid here)")
        return error_page(request, 400, "invalid value for " + ", ".join(where))

    return app
