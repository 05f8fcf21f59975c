"""What every leaderboard board shows beside its figures, whatever ranks it (the task boards of
`report.leaderboard`, the simulated-user boards of `report.sim_board`): each row's model metadata from the model
table, the ranks from the pairwise tests, and the scaling trends of the figure over models."""

from __future__ import annotations

from typing import Any

from uxbench.data.model_meta import SIZE_ORDER, ModelInfo
from uxbench.metrics.correlation import trend
from uxbench.metrics.ranking import significance_ranks


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


def scaling_trends(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Scaling trends over distinct models (the best-ranked run of a model stands for it): against the release
    date, the size class and, when the model table has them, the parameter count (`metrics.correlation.trend`:
    not estimable with fewer than 5 models; interval, p-value and `significant` from one test)."""
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
        result = trend([x for x, _ in xs], [r["metric"]["value"] for _, r in xs])
        out[by] = {"by": by, **result, "models": [r["model"] for _, r in xs],
                   "left_out": [r["model"] for r in points if _x(r, by) is None]}
    return out


def rank_rows(rows: list[dict[str, Any]], order: list[int], tests: dict[tuple[int, int], dict[str, Any]],
              pairs: list[dict[str, Any]], alpha: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Rank `rows` from their pairwise `tests` (`metrics.ranking.significance_ranks`): each pair gets its Holm
    verdict, each row its rank, the rows it ties with and beats, and its difference from the row above in
    `order` (best first). Returns the ranking and the rows in that order."""
    ranking = significance_ranks([r["metric"]["value"] for r in rows], tests, alpha=alpha)
    for pair in pairs:
        verdict = ranking["pairs"].get((pair["i"], pair["j"])) or {}
        pair.update(p_adjusted=verdict.get("p_adjusted"), significant=bool(verdict.get("significant")))
    by_pair = {(p["i"], p["j"]): p for p in pairs}
    previous: int | None = None
    for i in order:
        row = rows[i]
        row["rank"] = ranking["ranks"][i]
        row["ties_with"] = [rows[j]["label"] for j in order if j in ranking["ties"][i]]
        row["better_than"] = [rows[j]["label"] for j in order if j in ranking["better_than"][i]]
        row["vs_previous"] = by_pair.get((previous, i)) if previous is not None else None
        row["tied_with_previous"] = bool(previous is not None and previous in ranking["ties"][i])
        previous = i
    return ranking, [rows[i] for i in order]
