"""Plain-text rendering of `uxbench data stats` (the JSON form is the stats dict itself)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

_DIST_KEYS = ("label", "lang", "scenario", "failure_dimension", "success_dimension", "difficulty", "signal_type")
_NUM_KEYS = (
    ("n", "cases"), ("multi_turn_pct", "multi-turn %"), ("mean_turns", "mean turns"),
    ("mean_query_chars", "mean query chars"), ("mean_response_chars", "mean response chars"),
)


def render_data_stats(stats: dict[str, Any], width: int = 120) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    title = stats.get("source", "data")
    if stats.get("is_demo"):
        title += "  [DEMO DATA]"
    console.print(f"{title}\nfingerprint {stats.get('fingerprint', '')[:16]}…")
    tasks: dict[str, Any] = stats.get("tasks", {})
    overview = Table(title="Per task", show_lines=False)
    overview.add_column("")
    for name in tasks:
        overview.add_column(name, justify="right")
    for key, label in _NUM_KEYS:
        overview.add_row(label, *(_fmt(tasks[t].get(key)) for t in tasks))
    console.print(overview)
    for key in _DIST_KEYS:
        table = Table(title=key.replace("_", " "))
        table.add_column("value")
        for name in tasks:
            table.add_column(name, justify="right")
        values: list[str] = []
        for t in tasks:
            for v in (tasks[t].get(key) or {}):
                if v not in values:
                    values.append(v)
        if not values or values == ["(none)"]:
            continue
        for v in values:
            table.add_row(v, *(str((tasks[t].get(key) or {}).get(v, 0)) for t in tasks))
        console.print(table)
    skipped = stats.get("skipped") or {}
    if skipped.get("count"):
        console.print(f"Skipped rows: {skipped['count']}")
    for note in stats.get("notes") or []:
        console.print(f"Note: {note}", highlight=False)
    return buf.getvalue()


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
