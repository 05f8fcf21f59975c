"""Whether charts can be drawn, and which leaderboard tasks have a scaling chart: apart from `plots`, so that
the runs page (which lists the charts) and the charts' routes (which read the runs page's leaderboard) do not
import each other."""

from __future__ import annotations

import importlib.util
from typing import Any

from uxbench.errors import UxbenchError


def plots_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def scaling_tasks(board: dict[str, Any] | None) -> list[str]:
    """The tasks of the leaderboard whose scaling chart has two models or more with a release date."""
    if not board or not plots_available():
        return []
    from uxbench.report.plot_data import scaling

    found = []
    for task in board.get("tasks") or {}:
        try:
            if len(scaling(board, task).points) >= 2:
                found.append(task)
        except (UxbenchError, KeyError, ValueError):
            continue
    return found
