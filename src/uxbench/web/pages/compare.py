"""Two runs on the same cases: each run's own figure and the paired difference, then case by case with
disagreements first and both outputs side by side. The form lists the runs by task and chooses no run for the
user (A = B is never a default); a pair it cannot compare (one run twice, two tasks) gets the form back with why."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from uxbench.errors import UxbenchError
from uxbench.web.catalog import RunEntry
from uxbench.web.context import ViewState, state
from uxbench.web.pages.samples import conversation
from uxbench.web.sample_index import load_sample

router = APIRouter()
PER_PAGE = 20


def _paired(a_path: Any, b_path: Any, task: str, n_boot: int, seed: int) -> dict[str, Any] | None:
    """Task 1: McNemar and the paired Avg-Acc difference from `report.compare` (B against A)."""
    if task != "judge":
        return None
    from uxbench.report.compare import compare_runs

    try:
        report = compare_runs([a_path, b_path], n_boot=n_boot, seed=seed)
    except UxbenchError as exc:
        return {"error": str(exc)}
    return {"paired": report["paired"][0] if report["paired"] else None, "warnings": report["warnings"]}


def _rate_diff(oa: dict[str, dict[str, Any]], ob: dict[str, dict[str, Any]], shared: list[str], task: str,
               n_boot: int, seed: int) -> dict[str, Any] | None:
    """Tasks 2/3: Good% (Recovery Rate) of B minus A under each run's primary judge, on the cases both had scored,
    with the paired bootstrap CI the leaderboard uses (`metrics.ranking.paired_rate_diff`)."""
    if task == "judge":
        return None
    from uxbench.metrics.ranking import paired_rate_diff

    both = [c for c in shared if oa[c]["verdict"] in ("good", "bad") and ob[c]["verdict"] in ("good", "bad")]
    if not both:
        return None
    out = paired_rate_diff([ob[c]["verdict"] == "good" for c in both], [oa[c]["verdict"] == "good" for c in both],
                           n_boot=n_boot, seed=seed)
    # Each run's own rate on these cases, beside the difference of the two.
    out["k_a"] = sum(oa[c]["verdict"] == "good" for c in both)
    out["k_b"] = sum(ob[c]["verdict"] == "good" for c in both)
    return out


def _figure(summary: dict[str, Any]) -> dict[str, Any]:
    """A run's own headline figure (the start page's): name and cell, over all its cases."""
    from uxbench.web.pages.runs import headline

    name, cell = headline(summary)
    return {"name": name, "cell": cell, "model": summary.get("model"), "n": summary.get("n_samples")}


def _choices(view: ViewState) -> list[dict[str, Any]]:
    """The served runs grouped by task (the form's option groups), each with its model."""
    from uxbench.report.leaderboard import TITLES

    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in view.catalog.runs.values():
        summary = entry.summary()
        groups.setdefault(str(summary.get("task")), []).append({"id": entry.id, "model": summary.get("model")})
    return [{"task": task, "title": TITLES.get(task, task), "runs": runs} for task, runs in groups.items()]


def _cached_paired(view: ViewState, a: RunEntry, b: RunEntry, task: str) -> dict[str, Any] | None:
    """`_paired`, once per pair of summaries (it reads every record of both runs)."""
    key = "paired:" + ":".join(f"{e.id}@{(e.path / 'summary.json').stat().st_mtime_ns}" for e in (a, b))
    if key not in view.cache:
        view.cache[key] = _paired(a.path, b.path, task, view.n_boot, view.seed)
    found: dict[str, Any] | None = view.cache[key]
    return found


@router.get("/compare", response_class=HTMLResponse)
def compare(request: Request) -> HTMLResponse:
    view = state(request)
    p = request.query_params
    a_id, b_id = p.get("a") or None, p.get("b") or None
    form: dict[str, Any] = {"title": "Compare runs", "groups": _choices(view), "sel_a": a_id, "sel_b": b_id,
                            "a": None, "b": None}
    if not a_id or not b_id:
        return view.page("compare.html", **form)
    a, b = view.run(a_id), view.run(b_id)
    if a.id == b.id:
        return view.page("compare.html", status=400, **form,
                         problem=f"Run A and run B are the same run ({a.id}): choose two different runs of one task "
                                 "to compare them case by case.")
    sa, sb = a.summary(), b.summary()
    if sa.get("task") != sb.get("task"):
        from uxbench.report.leaderboard import TITLES

        kinds = [TITLES.get(str(x.get("task")), str(x.get("task"))) for x in (sa, sb)]
        return view.page("compare.html", status=400, **form,
                         problem=f"Run A ({a.id}) is a {kinds[0]} run and run B ({b.id}) a {kinds[1]} run: a "
                                 "comparison pairs the cases of one task. Choose two runs of one task.")
    task = str(sa.get("task"))
    oa = view.ready_index(a).outcomes(None if task == "judge" else sa.get("primary_judge"))
    ob = view.ready_index(b).outcomes(None if task == "judge" else sb.get("primary_judge"))
    shared = [c for c in oa if c in ob]
    differ = [c for c in shared if oa[c]["verdict"] != ob[c]["verdict"]]
    order = differ + [c for c in shared if oa[c]["verdict"] == ob[c]["verdict"]]
    try:
        page = max(1, int(p.get("page") or 1))
    except ValueError as exc:
        raise HTTPException(400, "page is a number") from exc
    pages = max(1, -(-len(order) // PER_PAGE))
    page = min(page, pages)
    items = []
    for cid in order[(page - 1) * PER_PAGE: page * PER_PAGE]:
        rec_a, case, scores_a = load_sample(a.path, oa[cid]["sample_id"])
        rec_b, _, scores_b = load_sample(b.path, ob[cid]["sample_id"])
        items.append({"case_id": cid, "a": oa[cid], "b": ob[cid], "rec_a": rec_a, "rec_b": rec_b,
                      "differ": oa[cid]["verdict"] != ob[cid]["verdict"],
                      "turns": conversation(case, None),
                      "scores_a": scores_a, "scores_b": scores_b})
    base = {"a": a.id, "b": b.id}
    links = {"prev": "?" + urlencode({**base, "page": page - 1}), "next": "?" + urlencode({**base, "page": page + 1})}
    form.update(title=f"{a.id} vs {b.id}", a=a, b=b)
    return view.page("compare.html", **form, sa=sa, sb=sb, task=task,
                     figures={"A": _figure(sa), "B": _figure(sb)},
                     n_shared=len(shared), n_differ=len(differ), n_only_a=len(oa) - len(shared),
                     n_only_b=len(ob) - len(shared), items=items, page=page, pages=pages, links=links,
                     paired=_cached_paired(view, a, b, task),
                     rate_diff=_rate_diff(oa, ob, shared, task, view.n_boot, view.seed), n_boot=view.n_boot)
