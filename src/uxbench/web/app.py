"""The app factory of `uxbench view`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from uxbench.web.catalog import Catalog
from uxbench.web.context import ViewState
from uxbench.web.pages import compare, curation, human, mined_cases, mining, plots, run, runs, samples, sim

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


def create_app(catalog: Catalog, *, index_dir: Path, study: Study | None = None) -> FastAPI:
    """The web app over `catalog` (and, when given, the annotator pages of `study`)."""
    app = FastAPI(title="uxbench view", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.view = ViewState(catalog=catalog, index_dir=index_dir, study=study)
    static = Path(__file__).parent / "static"
    app.mount("/static", StaticFiles(directory=static), name="static")
    for module in (runs, run, samples, compare, mining, mined_cases, curation, human, plots, sim):
        app.include_router(module.router)

    @app.middleware("http")
    async def headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response: Response = await call_next(request)
        for key, value in _HEADERS.items():
            response.headers.setdefault(key, value)
        if request.url.path.startswith("/h/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> HTMLResponse:
        view: ViewState = request.app.state.view
        return view.page("error.html", status=exc.status_code, code=exc.status_code, message=str(exc.detail),
                         nav=not request.url.path.startswith("/h/"))

    return app
