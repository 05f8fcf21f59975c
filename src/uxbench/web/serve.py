"""Start the web server for `uxbench view` and `uxbench human serve`: binds 127.0.0.1 by default, prints the
URL (and a warning beyond loopback), serves until interrupted."""

from __future__ import annotations

import socket
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from uxbench.web.security import check_port, host_warning

if TYPE_CHECKING:
    from uxbench.human.study import Study
    from uxbench.web.catalog import Catalog
    from uxbench.web.context import ViewState


def default_index_dir() -> Path:
    from uxbench.runtime.cache import default_cache_path

    return default_cache_path().parent / "view"


def free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def prebuild(view: ViewState, err: Callable[[str], None]) -> None:
    """Build (or check) every run's sample index, then the leaderboard, in the background, so the first pages
    seldom wait; a request for a run whose index is being built waits on the same lock."""
    from uxbench.web.pages.runs import leaderboard_for

    entries = list(view.catalog.runs.values())
    for entry in entries:
        try:
            view.index(entry).ensure()
        except (sqlite3.Error, OSError, ValueError) as exc:  # the page that needs it shows the error again
            err(f"warning: could not index {entry.path}: {exc}")
    leaderboard_for(view, entries)  # the start page's leaderboard (it reads every record of every run)


def serve(catalog: Catalog, *, host: str, port: int, index_dir: Path | None, study: Study | None,
          echo: Callable[[str], None], err: Callable[[str], None], study_links: bool = False,
          n_boot: int | None = None, seed: int = 0) -> None:
    import uvicorn

    from uxbench.web.app import create_app

    check_port(port)
    warning = host_warning(host)
    if warning:
        err(warning)
    port = port or free_port(host)
    from uxbench.metrics.proportions import DEFAULT_N_BOOT

    app = create_app(catalog, index_dir=index_dir or default_index_dir(), study=study,
                     n_boot=n_boot or DEFAULT_N_BOOT, seed=seed)
    if catalog.runs:
        threading.Thread(target=prebuild, args=(app.state.view, err), daemon=True, name="uxbench-index").start()
    shown = f"[{host}]" if ":" in host else ("127.0.0.1" if host in ("0.0.0.0", "") else host)
    base = f"http://{shown}:{port}"
    if catalog.runs or catalog.mines:
        echo(f"uxbench view: {base}/")
    if study is not None and study_links:
        for a in study.annotators():
            echo(f"{a.name}: {base}/h/{a.token}")
    echo("Press Ctrl+C to stop.")
    uvicorn.run(app, host=host, port=port, log_level="warning")
