"""Simulated-session runs on the leaderboard: one board per user panel (the same personas, simulator, mode and
turn limit), ranked by task success under the leaderboard's rule: rank = 1 + the runs significantly better,
from every pair's paired difference (same personas and seeds, cluster bootstrap over personas) with Holm's
adjustment over the board's pairs (`metrics.ranking.significance_ranks`). Runs made with another simulator are
another board: the simulator moves scores (SIMULATORS.md lesson 5), so ranking across simulators would compare
simulators as much as assistants (`uxbench sim sensitivity` measures that).

The boards have the shape of the task boards (`report.leaderboard`), so they render and export the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scipy.stats import norm

from uxbench.data.model_meta import ModelTable
from uxbench.metrics.session import paired_comparison
from uxbench.report.board_meta import model_cells, rank_rows, scaling_trends
from uxbench.report.sim_compare import run_outcomes

_PAIRS = "paired cluster bootstrap over personas, normal interval"


def _panel(manifest: dict[str, Any]) -> tuple[str, ...]:
    identity = manifest.get("identity") or {}
    personas = ",".join(f"{pid}:{h}" for pid, h in identity.get("personas") or [])
    return (personas, str((manifest.get("simulator") or {}).get("spec")), str(manifest.get("mode")),
            str(manifest.get("max_turns")), str(identity.get("seed")), str(identity.get("assessor")))


def _pair(upper: list[Any], lower: list[Any], n_boot: int, seed: int, confidence: float) -> dict[str, Any]:
    """Upper minus lower in task success on the sessions both have (the leaderboard's `diff` is i - j). The
    interval is the one of the p-value's test (diff +- q se, as the task boards'), so an interval holding 0 never
    comes with a significant difference; `uxbench sim compare` shows the percentile interval of the same
    bootstrap."""
    result = paired_comparison(lower, upper, n_boot=n_boot, seed=seed)
    cell = (result.get("metrics") or {}).get("success_rate")
    if cell is None or cell.get("se") is None:
        return {"n": result["n_pairs"], "diff": None, "ci_low": None, "ci_high": None, "se": None, "p_value": None,
                "method": _PAIRS}
    if cell.get("method"):  # no replicate varied: Newcombe's interval, whose p the ranking reads
        return {"n": result["n_pairs"], "diff": cell["diff"], "ci_low": cell["ci_low"], "ci_high": cell["ci_high"],
                "se": cell["se"], "p_value": cell["p_value"], "method": cell["method"]}
    half = float(norm.ppf(0.5 + confidence / 2)) * cell["se"]
    return {"n": result["n_pairs"], "diff": cell["diff"], "ci_low": max(-1.0, cell["diff"] - half),
            "ci_high": min(1.0, cell["diff"] + half), "se": cell["se"], "p_value": cell["p_value"], "method": _PAIRS}


def _board(panel: tuple[str, ...], members: list[Any], table: ModelTable, n_boot: int, seed: int,
           alpha: float) -> dict[str, Any]:
    rows, outcomes = [], []
    for path, manifest, outs, _keys in members:
        summary = _summary(path)
        model = str((manifest.get("model") or {}).get("spec"))
        metric = dict((summary.get("metrics") or {}).get("success_rate") or {})
        rows.append({"label": f"{model} ({path.name})", "model": model, "run_dir": str(path),
                     "run_id": manifest.get("run_id"), "demo_data": bool(manifest.get("demo")),
                     "fingerprint": None, "judge": None, "judge_spec": None, **model_cells(table.lookup(model)),
                     "metric": {k: metric.get(k) for k in ("value", "ci_low", "ci_high", "n")}})
        outcomes.append(outs)
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["metric"]["value"] is None,
                                                     -(rows[i]["metric"]["value"] or 0.0)))
    tests: dict[tuple[int, int], dict[str, Any]] = {}
    pairs: list[dict[str, Any]] = []
    for pos, i in enumerate(order):
        for j in order[pos + 1:]:
            if rows[i]["metric"]["value"] is None or rows[j]["metric"]["value"] is None:
                continue
            diff = _pair(outcomes[i], outcomes[j], n_boot, seed, 1.0 - alpha)
            if diff["p_value"] is not None:
                tests[(i, j)] = diff
            pairs.append({"i": i, "j": j, "a": rows[i]["label"], "b": rows[j]["label"], **diff})
    ranking, board_rows = rank_rows(rows, order, tests, pairs, alpha)
    simulator, mode, max_turns = panel[1], panel[2], panel[3]
    n_personas = len(panel[0].split(",")) if panel[0] else 0
    return {
        "task": "sim", "title": f"Simulated users ({n_personas} personas, simulator {simulator}, {mode}, "
                                f"<= {max_turns} replies)",
        "metric": "Task success %", "convention": "of the sessions (cluster bootstrap over personas)",
        "data": None, "rows": board_rows,
        "pairs": [{k: v for k, v in p.items() if k not in ("i", "j")} for p in pairs],
        "separability": {k: ranking[k] for k in ("separability", "n_pairs", "n_compared", "n_significant", "alpha",
                                                 "rule")},
        "mdd": None,
        "ci_methods": {"figure": "cluster bootstrap over personas", "pairs": _PAIRS, "corrected": None},
        "trends": scaling_trends(board_rows), "warnings": [],
    }


def sim_boards(paths: list[Path], table: ModelTable, n_boot: int, seed: int,
               alpha: float = 0.05) -> dict[str, dict[str, Any]]:
    """`{"sim": board, "sim-2": board, ...}`: one board per panel of simulated users."""
    panels: dict[tuple[str, ...], list[Any]] = {}
    for path in paths:
        item = (path, *run_outcomes(path))
        panels.setdefault(_panel(item[1]), []).append(item)
    return {("sim" if number == 1 else f"sim-{number}"): _board(panel, members, table, n_boot, seed, alpha)
            for number, (panel, members) in enumerate(panels.items(), start=1)}


def _summary(path: Path) -> dict[str, Any]:
    from uxbench.report.sim import load_sim_summary

    return load_sim_summary(path)
