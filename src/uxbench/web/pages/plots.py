"""Charts in the pages, drawn by `report.plots` (the `plot` extra, matplotlib) from `report.plot_data`, the same
charts `uxbench plot` writes: per-scenario bars with CI whiskers and the reliability diagram of a run, the funnel
and signal rates over time of a mining output. Served as SVG images (no script); without matplotlib the pages
show their tables only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from uxbench.errors import UxbenchError
from uxbench.web.context import ViewState, state
from uxbench.web.pages.scaling import plots_available, scaling_tasks

__all__ = ["plots_available", "router", "run_plot_kinds", "scaling_tasks"]

router = APIRouter()
RUN_PLOTS = ("scenario", "reliability")
MINE_PLOTS = ("funnel", "signals")
_SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'"


def run_plot_kinds(summary: dict[str, Any]) -> list[str]:
    """The charts a run page shows (none without the plot extra)."""
    if not plots_available():
        return []
    kinds = []
    if summary.get("task") == "judge" and ((summary.get("metrics") or {}).get("breakdowns") or {}).get("scenario"):
        kinds.append("scenario")
    if summary.get("task") != "judge" and any(((j.get("metrics") or {}).get("breakdowns") or {}).get("scenario")
                                              for j in (summary.get("judges") or {}).values()):
        kinds.append("scenario")
    if summary.get("task") == "judge" and (summary.get("calibration") or {}).get("n"):
        kinds.append("reliability")
    return kinds


def _svg(view: ViewState, key: tuple[Any, ...], make: Any) -> Response:
    from uxbench.report.plots import render

    name = "plot:" + ":".join(map(str, key))
    cached = view.cache.get(name)
    if cached is None:
        try:
            cached = render(make(), "svg")
        except UxbenchError as exc:
            raise HTTPException(404, str(exc)) from exc
        view.cache[name] = cached
    return Response(cached, media_type="image/svg+xml", headers={"Content-Security-Policy": _SVG_CSP})


@router.get("/runs/{run_id}/plots/{kind}.svg")
def run_plot(request: Request, run_id: str, kind: str) -> Response:
    view = state(request)
    entry = view.run(run_id)
    if kind not in RUN_PLOTS or not plots_available():
        raise HTTPException(404, "no such chart")
    from uxbench.report import plot_data

    summary = entry.summary()
    stamp = (entry.path / "summary.json").stat().st_mtime_ns
    make = (lambda: plot_data.scenario_bars([summary])) if kind == "scenario" else \
        (lambda: plot_data.reliability([summary]))
    return _svg(view, ("run", run_id, kind, stamp), make)


@router.get("/mines/{mine_id}/plots/{kind}.svg")
def mine_plot(request: Request, mine_id: str, kind: str) -> Response:
    view = state(request)
    entry = view.mine(mine_id)
    if kind not in MINE_PLOTS or not plots_available():
        raise HTTPException(404, "no such chart")
    from uxbench.mining.report import build_report
    from uxbench.report import plot_data

    def make() -> Any:
        report = build_report(entry.path)
        return plot_data.funnel(report.stage_counts) if kind == "funnel" else plot_data.signal_rates(report)

    counts = entry.path / "stage_counts.json"
    stamp = counts.stat().st_mtime_ns if counts.exists() else 0
    return _svg(view, ("mine", mine_id, kind, stamp), make)


@router.get("/plots/scaling/{task}.svg")
def scaling_plot(request: Request, task: str) -> Response:
    from uxbench.web.pages.runs import leaderboard_for

    view = state(request)
    board = leaderboard_for(view, list(view.catalog.runs.values()))
    if task not in scaling_tasks(board):
        raise HTTPException(404, "no such chart")
    from uxbench.report import plot_data

    stamp = view.cache["leaderboard"][0]
    return _svg(view, ("scaling", task, hash(stamp)), lambda: plot_data.scaling(board or {}, task))
