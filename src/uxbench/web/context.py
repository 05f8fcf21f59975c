"""What every page handler shares: the catalog, the sample indexes, the CSRF tokens, the templates."""

from __future__ import annotations

import getpass
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from uxbench.metrics.proportions import DEFAULT_N_BOOT
from uxbench.web.catalog import Catalog, MineEntry, PendingEntry, RunEntry
from uxbench.web.render import (
    board_filters,
    breakable,
    cell_text,
    highlight,
    markdown_html,
    pct,
    text_lang,
    verbatim_html,
)
from uxbench.web.sample_index import SampleIndex
from uxbench.web.security import Csrf

if TYPE_CHECKING:
    from uxbench.human.study import Study

MAX_FORM_BYTES = 64 * 1024
SMALL_RUN = 5_000
SMALL_RUN_WAIT_S = 60.0
_INDEXES_LOCK = threading.Lock()


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("uxbench.web", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(md=markdown_html, verbatim=verbatim_html, text_lang=text_lang, pct=pct, cell=cell_text,
                       breakable=breakable, highlight=highlight, **board_filters())
    return env


class IndexBuilding(Exception):
    """A page needs a run's sample index, which is being built."""

    def __init__(self, entry: RunEntry, index: SampleIndex) -> None:
        super().__init__(entry.id)
        self.entry = entry
        self.index = index


class RunInProgress(Exception):
    """A page of a run that is still being written (no summary yet): the app answers with its progress."""

    def __init__(self, entry: PendingEntry) -> None:
        super().__init__(entry.id)
        self.entry = entry


@dataclass
class ViewState:
    catalog: Catalog
    index_dir: Path
    csrf: Csrf = field(default_factory=Csrf)
    study: Study | None = None
    who: str = field(default_factory=lambda: _user())
    env: Environment = field(default_factory=_environment)
    indexes: dict[str, SampleIndex] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    index_wait_s: float = 2.0
    """How long a page waits for a first index build before it shows the build's progress instead (a run of at
    most `SMALL_RUN` samples is waited for: it is indexed in a few seconds at most)."""
    n_boot: int = DEFAULT_N_BOOT
    """Bootstrap rounds of every interval the view computes (the leaderboard, the comparisons): the CLI's."""
    seed: int = 0

    def index(self, entry: RunEntry) -> SampleIndex:
        """One index object per run (its lock makes concurrent first requests build it once)."""
        with _INDEXES_LOCK:
            if entry.id not in self.indexes:
                self.indexes[entry.id] = SampleIndex(entry.path, self.index_dir)
            return self.indexes[entry.id]

    def index_wait(self, entry: RunEntry) -> float:
        """How long a page of `entry` waits for a first build of its index."""
        small = int(entry.summary().get("n_samples") or 0) <= SMALL_RUN
        return max(self.index_wait_s, SMALL_RUN_WAIT_S) if small else self.index_wait_s

    def ready_index(self, entry: RunEntry) -> SampleIndex:
        """The run's index when a page can read it now; otherwise `IndexBuilding` (the app answers with a page
        that shows the build's progress and reloads itself) while it is built in the background."""
        index = self.index(entry)
        if not index.ensure_nowait(self.index_wait(entry)):
            if index.error:
                raise HTTPException(500, f"could not index the samples of {entry.id}: {index.error}")
            raise IndexBuilding(entry, index)
        return index

    def run(self, run_id: str) -> RunEntry:
        entry = self.catalog.run(run_id)
        if entry is None:
            pending = self.catalog.pending.get(run_id)
            if pending is not None:
                raise RunInProgress(pending)
            raise HTTPException(404, "no such run")
        return entry

    def mine(self, mine_id: str) -> MineEntry:
        entry = self.catalog.mine(mine_id)
        if entry is None:
            raise HTTPException(404, "no such mining output")
        return entry

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("csrf", self.csrf.token("view"))
        context.setdefault("nav", True)
        html = self.env.get_template(name).render(catalog=self.catalog, **context)
        return HTMLResponse(html, status_code=status)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def state(request: Request) -> ViewState:
    found: ViewState = request.app.state.view
    return found


async def form(request: Request) -> dict[str, str]:
    """A url-encoded form body (the only kind these pages post), capped in size."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise HTTPException(413, "form too large")
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
