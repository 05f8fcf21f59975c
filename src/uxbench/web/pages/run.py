"""A run page: headline figures with CIs under both denominators, breakdowns, confusion matrix, positive bias,
the reliability table (and diagram) of the summary's calibration where the verdicts are probabilities (Task 1),
and a p(good) histogram for GRM judges (Tasks 2/3 have no gold labels, so no reliability)."""

from __future__ import annotations

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


def strategy_tables(summary: dict[str, Any]) -> dict[str, Any] | None:
    """Task 3: each strategy's share of the recoveries per classifier and the primary judge's Recovery Rate per
    strategy, as `uxbench report` prints them (`report/strategies.py`)."""
    from uxbench.report.strategies import RULES_NOTE

    block = summary.get("recovery_strategies") or {}
    classifiers: dict[str, Any] = block.get("classifiers") or {}
    if summary.get("task") != "recovery" or not classifiers:
        return None
    models = iter(range(1, len(classifiers) + 1))
    columns = [{"name": "rules" if c.get("method") == "rules" else f"M{next(models)}", "spec": c.get("spec"),
                "block": c} for c in classifiers.values()]
    categories = list(block.get("strategies") or [])
    if any(c.get("method") == "model" for c in classifiers.values()):
        categories += ["unparseable", "not_labelled"]
    primary = summary.get("primary_judge")
    rows = [{"strategy": cat, "cells": [{"share": (col["block"].get("distribution") or {}).get(cat),
                                         "rate": ((col["block"].get("recovery_rate") or {}).get(primary or "") or {})
                                         .get(cat)} for col in columns]} for cat in categories]
    judge = ((summary.get("judges") or {}).get(primary or "") or {}).get("spec") or primary
    return {"n": block.get("n_replies", 0), "columns": columns, "rows": rows, "judge": judge, "note": RULES_NOTE}


def settings_lead(manifest: dict[str, Any], summary: dict[str, Any]) -> str:
    """The settings a reader checks first, on one line: the task's prompt settings, the primary judge's protocol,
    and whether the command line is known."""
    config = manifest.get("task_config") or {}
    keys = ("formulation", "strategy", "verdict_from", "lang", "system_prompt", "recovery_layout",
            "recovery_strategy")
    bits = [f"{k.replace('_', ' ')} {config[k]}" for k in keys if config.get(k) is not None]
    primary = ((manifest.get("judges") or {}).get(manifest.get("primary_judge") or "") or {})
    if primary:
        settings = primary.get("settings") or {}
        bits.append(f"primary judge {primary.get('spec')} ({settings.get('mode') or primary.get('mode')}, "
                    f"lang {settings.get('lang', 'auto')})")
    bits.append("command line recorded" if (summary.get("invocation") or {}).get("command") else
                "no command line recorded")
    return " · ".join(bits)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str) -> HTMLResponse:
    view = state(request)
    entry = view.run(run_id)
    summary = entry.summary()
    manifest = entry.manifest()
    index = view.index(entry)
    indexed = index.ensure_nowait(view.index_wait(entry))  # the histograms need it; the figures do not
    from uxbench.report.run_settings import task_run_settings

    context: dict[str, Any] = {"title": f"Run {entry.id}", "run": entry, "summary": summary, "manifest": manifest,
                               "task": summary.get("task"), "breakdown_titles": BREAKDOWN_TITLES,
                               "plots": run_plot_kinds(summary), "settings": task_run_settings(manifest, summary),
                               "settings_lead": settings_lead(manifest, summary)}
    if summary.get("task") == "judge":
        metrics = summary.get("metrics") or {}
        context.update(metrics=metrics, metric_names=TASK1_METRICS, confusion=metrics.get("confusion") or {},
                       reliability=summary.get("calibration") if (summary.get("calibration") or {}).get("n")
                       else None)
    else:
        from uxbench.report.trust_text import block_of, corrected_cell, correction_notes

        judges = summary.get("judges") or {}
        primary = summary.get("primary_judge")
        trust = {key: correction_notes(str(info.get("spec") or key), block_of(info)) for key, info in judges.items()}
        from uxbench.report.generative import unscored_reason

        context.update(judges=judges, primary=primary, indexing=not indexed,
                       unscored={key: why for key, info in judges.items() if (why := unscored_reason(info))},
                       ordered_judges=sorted(judges.items(), key=lambda kv: kv[0] != primary),
                       strategies=strategy_tables(summary), trust=trust, corrected_text=corrected_cell,
                       histograms={k: index.score_histogram(k) for k, info in judges.items()
                                   if info.get("mode") == "grm"} if indexed else {})
    return view.page("run.html", **context)
