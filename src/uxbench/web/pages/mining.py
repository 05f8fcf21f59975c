"""A mining output: the stage funnel, signal rates per scenario and per day with CIs, recovery outcomes
(`mining.report.build_report`), and an explorer of the flagged turns with their text and evidence, joined back
from the de-identified sessions (`work/01-sessions`), never from the raw log."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from uxbench.errors import UxbenchError
from uxbench.mining.pipeline.outputs import SIGNALS_PARQUET
from uxbench.mining.report import NO_TIME, TABLE_SIGNALS, build_report
from uxbench.mining.signals import SIGNAL_NAMES
from uxbench.runs.curation import CURATION_DB, Curation
from uxbench.web.context import state
from uxbench.web.pages.plots import plots_available

router = APIRouter()
SESSIONS_STAGE = "01-sessions"
PER_PAGE = 20


def funnel(counts: dict[str, Any]) -> list[Any]:
    """The funnel's panels, one per unit, steps in pipeline order: what `uxbench plot --kind funnel` draws
    (`report.funnel`)."""
    from uxbench.report.funnel import funnel_panels

    return funnel_panels(counts)


def shares(rows: list[tuple[str, int]], total: int) -> list[dict[str, Any]]:
    """{key, k, n, share, ci} of each (key, count) out of `total`, with its Wilson 95% interval."""
    from uxbench.metrics.proportions import wilson_ci

    return [{"key": key, "k": k, "n": total, "share": k / total if total else None,
             "ci": wilson_ci(k, total) if total else None} for key, k in rows]


def signal_cells(report: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """row key -> signal -> {k, n, ci}: each rate's numerator, denominator (the replies where the signal could be
    computed) and Wilson 95% interval, from the report's counts (by scenario and by day share the keys' space)."""
    from uxbench.metrics.proportions import wilson_ci

    out: dict[str, dict[str, dict[str, Any]]] = {}
    for table in ("scenario", "day"):
        for rates in report.by_scenario if table == "scenario" else report.by_day:
            cells = out.setdefault(f"{table}:{rates.key}", {})
            for name, pair in (getattr(rates, "counts", None) or {}).items():
                if pair is not None and pair[1]:
                    cells[name] = {"k": pair[0], "n": pair[1], "ci": wilson_ci(pair[0], pair[1])}
    return out


def session_turns(out: Path, conversation_ids: set[str]) -> dict[str, dict[int, dict[str, Any]]]:
    """conversation_id -> turn_index -> turn, from the de-identified session shards."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    if not conversation_ids:
        return found
    wanted = pa.array(sorted(conversation_ids))
    for shard in sorted((out / "work" / SESSIONS_STAGE).glob("part-*.parquet")):
        table = pq.read_table(shard, columns=["conversation_id", "session"])
        table = table.filter(pc.is_in(table["conversation_id"], value_set=wanted))
        for cid, session in zip(table["conversation_id"].to_pylist(), table["session"].to_pylist(), strict=True):
            turns = orjson.loads(session).get("turns") or []
            found[cid] = {int(t["turn_index"]): t for t in turns if not t.get("regeneration_index")}
    return found


@router.get("/mines/{mine_id}", response_class=HTMLResponse)
def mining_page(request: Request, mine_id: str) -> HTMLResponse:
    view = state(request)
    entry = view.mine(mine_id)
    try:
        report = build_report(entry.path)
    except UxbenchError as exc:
        raise HTTPException(404, str(exc)) from exc
    n_chains = sum(o.count for o in report.recovery)
    n_patterns = round(report.patterns[0].count / report.patterns[0].share) if report.patterns and \
        report.patterns[0].share else 0  # the count of every pattern, not only the top ones shown
    return view.page("mining.html", title=f"Mining output {entry.id}", mine=entry, report=report,
                     recovery=shares([(o.outcome, o.count) for o in report.recovery], n_chains),
                     patterns=shares([(p.pattern, p.count) for p in report.patterns], n_patterns),
                     funnel=funnel(report.stage_counts), signals=TABLE_SIGNALS, cells=signal_cells(report),
                     plots=plots_available(), has_cases=(entry.path / "cases").is_dir(),
                     time_plot=plots_available() and any(d.key != NO_TIME for d in report.by_day))


@router.get("/mines/{mine_id}/turns", response_class=HTMLResponse)
def flagged_turns(request: Request, mine_id: str) -> HTMLResponse:
    view = state(request)
    entry = view.mine(mine_id)
    signal = request.query_params.get("signal") or "dissatisfied"
    if signal != "dissatisfied" and signal not in SIGNAL_NAMES:
        raise HTTPException(400, "unknown signal")
    try:
        page = max(1, int(request.query_params.get("page") or 1))
    except ValueError as exc:
        raise HTTPException(400, "page is a number") from exc
    path = entry.path / SIGNALS_PARQUET
    if not path.exists():
        raise HTTPException(404, "this output has no signal table")
    evidence = [f"{s}_evidence" for s in SIGNAL_NAMES]
    columns = ["conversation_id", "turn_index", "created_at", "prev_user_turn", "next_user_turn", "dissatisfied",
               "dissatisfied_by", "recovery_outcome", *SIGNAL_NAMES, *evidence]
    table = pq.read_table(path, columns=list(dict.fromkeys(columns)))
    table = table.filter(pc.fill_null(table[signal], False))
    total = table.num_rows
    pages = max(1, -(-total // PER_PAGE))
    page = min(page, pages)
    rows = table.slice((page - 1) * PER_PAGE, PER_PAGE).to_pylist()
    texts = session_turns(entry.path, {r["conversation_id"] for r in rows})
    states = Curation(entry.path / CURATION_DB).states()
    items = []
    for r in rows:
        turns = texts.get(r["conversation_id"], {})
        key = f"{r['conversation_id']}#{r['turn_index']}"
        items.append({"row": r, "key": key, "reply": turns.get(r["turn_index"]),
                      "before": turns.get(r["prev_user_turn"]) if r["prev_user_turn"] is not None else None,
                      "after": turns.get(r["next_user_turn"]) if r["next_user_turn"] is not None else None,
                      "fired": [(s, r.get(f"{s}_evidence")) for s in SIGNAL_NAMES if r.get(s)],
                      "state": states.get(key)})
    links = {n: "?" + urlencode({"signal": signal, "page": n}) for n in (1, page - 1, page + 1, pages)}
    return view.page("mining_turns.html", title=f"Flagged turns of {entry.id}", mine=entry, items=items,
                     total=total, page=page, pages=pages, links=links, signal=signal, signal_names=SIGNAL_NAMES,
                     who=view.who)
