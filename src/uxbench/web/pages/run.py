"""A run page: headline figures with CIs under both denominators, breakdowns, confusion matrix, positive bias,
the reliability table (and diagram) of the summary's calibration where the verdicts are probabilities (Task 1),
and a p(good) histogram for GRM judges (Tasks 2/3 have no gold labels, so no reliability)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from uxbench.web.context import state
from uxbench.web.pages.plots import run_plot_kinds

router = APIRouter()

TASK1_METRICS = (("avg_acc", "Avg-Acc"), ("good_acc", "Good-Acc"), ("bad_acc", "Bad-Acc"),
                 ("accuracy", "Accuracy"), ("bad_f1", "Bad-F1"), ("positive_bias", "Positive bias"))
BREAKDOWN_TITLES = {"scenario": "Scenario", "dimension": "Dimension", "difficulty": "Difficulty",
                    "n_turns": "Turns", "history_messages": "History messages", "reply_chars": "Reply length"}


def score_histogram(index_path: str, judge: str, bins: int = 10) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)) as db:
        scores = [r[0] for r in db.execute("SELECT score FROM verdicts WHERE judge = ? AND score BETWEEN 0 AND 1",
                                           (judge,))]
    counts = [0] * bins
    for s in scores:
        counts[min(int(s * bins), bins - 1)] += 1
    top = max(counts) or 1
    return [{"lo": i / bins, "hi": (i + 1) / bins, "n": c, "height": 160 * c / top} for i, c in enumerate(counts)]


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str) -> HTMLResponse:
    view = state(request)
    entry = view.run(run_id)
    summary = entry.summary()
    manifest = entry.manifest()
    index = view.index(entry)
    index.ensure()
    context: dict[str, Any] = {"title": f"Run {entry.id}", "run": entry, "summary": summary, "manifest": manifest,
                               "task": summary.get("task"), "breakdown_titles": BREAKDOWN_TITLES,
                               "plots": run_plot_kinds(summary)}
    if summary.get("task") == "judge":
        metrics = summary.get("metrics") or {}
        context.update(metrics=metrics, metric_names=TASK1_METRICS, confusion=metrics.get("confusion") or {},
                       reliability=summary.get("calibration") if (summary.get("calibration") or {}).get("n")
                       else None)
    else:
        from uxbench.report.trust_text import block_of, corrected_cell, correction_notes

        judges = summary.get("judges") or {}
        trust = {key: correction_notes(str(info.get("spec") or key), block_of(info)) for key, info in judges.items()}
        context.update(judges=judges, primary=summary.get("primary_judge"), trust=trust, corrected_text=corrected_cell,
                       histograms={k: score_histogram(str(index.path), k) for k, info in judges.items()
                                   if info.get("mode") == "grm"})
    return view.page("run.html", **context)
