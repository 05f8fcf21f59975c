"""The recovery-strategy block of a Task 3 summary as text: each strategy's share of the recoveries per
classifier (rules, strategy models), and the primary judge's Recovery Rate per strategy."""

from __future__ import annotations

from typing import Any

from uxbench.report.render import DASH, ReportFormat, _check_fmt, _markdown, _rich, pct

RULES_NOTE = ("Strategies are read from each recovery's opening. The rules match short cue lists "
              "(71% agreement with hand labels on the project's own 80 test openings, which flatters them); "
              "a strategy model (--strategy-model) is the better reading.")


def _share(cell: dict[str, Any] | None) -> str:
    return DASH if not cell else f"{pct(cell)}  ({cell.get('k', 0)})"


def render_strategies(summary: dict[str, Any], fmt: ReportFormat, *, width: int | None = None) -> str:
    """Text for `fmt` (table or md; csv and json give the empty string: the summary's JSON holds it all)."""
    _check_fmt(fmt)
    block = summary.get("recovery_strategies") or {}
    classifiers: dict[str, Any] = block.get("classifiers") or {}
    if fmt in ("csv", "json") or not classifiers:
        return ""
    specs = [("rules" if key == "rules" else str(c.get("spec") or key)) for key, c in classifiers.items()]
    # Strategy models are named by a short label, with their spec in a note: a spec (a path) is too long a column.
    models = iter(range(1, len(specs) + 1))
    names = ["rules" if spec == "rules" else f"M{next(models)}" for spec in specs]
    legend = [f"{name} = {spec}" for name, spec in zip(names, specs, strict=True) if name != spec]
    categories = list(block.get("strategies") or [])
    if any(c.get("method") == "model" for c in classifiers.values()):
        categories += ["unparseable", "not_labelled"]
    n = block.get("n_replies", 0)
    share_rows = [[cat] + [_share((c.get("distribution") or {}).get(cat)) for c in classifiers.values()]
                  for cat in categories]
    sections: list[tuple[str, list[str], list[list[str]]]] = [
        (f"Recovery strategies: share of the {n} non-empty recoveries, % [95% CI] (count)",
         ["Strategy", *names], share_rows),
    ]
    primary = summary.get("primary_judge")
    judge = (summary.get("judges") or {}).get(primary or "")
    if judge is not None:
        rate_rows = []
        for cat in categories:
            cells = []
            for c in classifiers.values():
                cell = ((c.get("recovery_rate") or {}).get(primary) or {}).get(cat)
                cells.append(DASH if not cell else f"{pct(cell.get('rate'))}  (n={cell.get('n_scored', 0)})")
            rate_rows.append([cat, *cells])
        sections.append((f"Recovery Rate % of scored per strategy, primary judge {judge.get('spec') or primary}",
                         ["Strategy", *names], rate_rows))
    notes = [RULES_NOTE] + (["Strategy models: " + "; ".join(legend) + "."] if legend else [])
    for key, c in classifiers.items():
        if c.get("method") == "model" and (c.get("n_unparseable") or c.get("n_not_labelled")):
            notes.append(f"{c.get('spec') or key}: {c.get('n_unparseable', 0)} answers unparseable, "
                         f"{c.get('n_not_labelled', 0)} recoveries not labelled (failed calls: rerun to retry).")
    if fmt == "table":  # a narrow terminal keeps the rules and the first strategy model
        return _rich(sections, notes, width, droppable=tuple(reversed(names[2:])), wrap=(0,))
    return _markdown(sections, notes, text_columns=1)


def unlabelled_recoveries(summary: dict[str, Any]) -> int:
    """Recoveries some strategy model has not labelled (its call failed for good, or it has not run on them)."""
    classifiers = ((summary.get("recovery_strategies") or {}).get("classifiers") or {}).values()
    return sum(int(c.get("n_not_labelled") or 0) for c in classifiers if c.get("method") == "model")
