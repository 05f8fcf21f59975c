"""A run page: headline figures with CIs under both denominators, breakdowns, confusion matrix, positive bias,
and the reliability diagram where the verdicts are probabilities and gold labels exist (Task 1)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from uxbench.metrics.calibration import calibration
from uxbench.web.context import state

router = APIRouter()

TASK1_METRICS = (("avg_acc", "Avg-Acc"), ("good_acc", "Good-Acc"), ("bad_acc", "Bad-Acc"),
                 ("accuracy", "Accuracy"), ("bad_f1", "Bad-F1"), ("positive_bias", "Positive bias"))
BREAKDOWN_TITLES = {"scenario": "Scenario", "dimension": "Dimension", "difficulty": "Difficulty",
                    "n_turns": "Turns", "history_messages": "History messages", "reply_chars": "Reply length"}


def reliability(index_path: str, judge: str | None = None) -> dict[str, Any] | None:
    """The reliability table of probability verdicts against gold labels (Task 1 samples with a score in
    [0, 1]); None when there are none."""
    with closing(sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)) as db:
        pairs = db.execute("SELECT gold, score FROM samples WHERE gold IN ('good', 'bad') AND score IS NOT NULL "
                           "AND score BETWEEN 0 AND 1").fetchall()
    if not pairs:
        return None
    table = calibration([g == "good" for g, _ in pairs], [float(s) for _, s in pairs])
    for b in table["bins"]:  # SVG coordinates on a 200 x 200 plot, for the template
        if b["n"]:
            b["x"] = 20 + 180 * b["mean_p"]
            b["y"] = 200 - 180 * b["good_rate"]
    return table


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
                               "task": summary.get("task"), "breakdown_titles": BREAKDOWN_TITLES}
    if summary.get("task") == "judge":
        metrics = summary.get("metrics") or {}
        context.update(metrics=metrics, metric_names=TASK1_METRICS, confusion=metrics.get("confusion") or {},
                       reliability=reliability(str(index.path)))
    else:
        judges = summary.get("judges") or {}
        context.update(judges=judges, primary=summary.get("primary_judge"),
                       histograms={k: score_histogram(str(index.path), k) for k, info in judges.items()
                                   if info.get("mode") == "grm"})
    return view.page("run.html", **context)
