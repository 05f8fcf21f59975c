"""What every leaderboard board shows beside its figures, whatever ranks it (the task boards of
`report.leaderboard`, the simulated-user boards of `report.sim_board`): each row's model metadata from the model
table, and the scaling trends of the figure over models."""

from __future__ import annotations

from typing import Any

from uxbench.data.model_meta import SIZE_ORDER, ModelInfo
from uxbench.metrics.correlation import trend


def model_cells(info: ModelInfo | None) -> dict[str, Any]:
    if info is None:
        return {"org": None, "family": None, "released": None, "size": None, "params_b": None, "matched": None}
    return {"org": info.org, "family": info.family, "released": info.released.isoformat() if info.released else None,
            "size": info.size, "params_b": info.params_b, "matched": info.key}


def _x(row: dict[str, Any], by: str) -> float | None:
    if by == "release":
        import datetime as dt

        return float(dt.date.fromisoformat(row["released"]).toordinal()) if row["released"] else None
    if by == "params":
        return float(row["params_b"]) if row["params_b"] is not None else None
    return float(SIZE_ORDER[row["size"]]) if row["size"] else None


def scaling_trends(rows: list[dict[str, Any]], n_boot: int, seed: int) -> dict[str, Any]:
    """Scaling trends over distinct models (the best-ranked run of a model stands for it): against the release
    date, the size class and, when the model table has them, the parameter count."""
    models: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["metric"]["value"] is not None:
            models.setdefault(row["model"], row)
    points = list(models.values())
    out: dict[str, Any] = {}
    for by in ("release", "size", "params"):
        if by == "params" and not any(r["params_b"] is not None for r in points):
            continue
        xs = [(x, r) for r in points if (x := _x(r, by)) is not None]
        result = trend([x for x, _ in xs], [r["metric"]["value"] for _, r in xs], n_boot=n_boot, seed=seed)
        out[by] = {"by": by, **result, "models": [r["model"] for _, r in xs],
                   "left_out": [r["model"] for r in points if _x(r, by) is None]}
    return out
