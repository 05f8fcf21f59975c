"""Simulated-session runs on the leaderboard: one board per user panel (the same personas, simulator, mode and
turn limit), ranked by task success with honest ties: a run whose paired difference from the run above (same
personas and seeds, cluster bootstrap over personas) has a CI containing 0 shares its rank. Runs made with
another simulator are another board: the simulator moves scores (SIMULATORS.md lesson 5), so ranking across
simulators would compare simulators as much as assistants (`uxbench sim sensitivity` measures that).

The boards have the shape of the task boards (`report.leaderboard`), so they render and export the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from uxbench.data.model_meta import ModelTable
from uxbench.metrics.ranking import diff_contains_zero, shared_ranks
from uxbench.metrics.session import paired_comparison
from uxbench.report.sim_compare import run_outcomes


def _panel(manifest: dict[str, Any]) -> tuple[str, ...]:
    identity = manifest.get("identity") or {}
    personas = ",".join(f"{pid}:{h}" for pid, h in identity.get("personas") or [])
    return (personas, str((manifest.get("simulator") or {}).get("spec")), str(manifest.get("mode")),
            str(manifest.get("max_turns")), str(identity.get("seed")), str(identity.get("assessor")))


def sim_boards(paths: list[Path], table: ModelTable, n_boot: int, seed: int) -> dict[str, dict[str, Any]]:
    """`{"sim": board, "sim-2": board, ...}`: one board per panel of simulated users."""
    from uxbench.report.leaderboard import _meta, _trends

    loaded = [(path, *run_outcomes(path)) for path in paths]
    panels: dict[tuple[str, ...], list[Any]] = {}
    for item in loaded:
        panels.setdefault(_panel(item[1]), []).append(item)
    boards: dict[str, dict[str, Any]] = {}
    for number, (panel, members) in enumerate(panels.items(), start=1):
        rows = []
        for path, manifest, outcomes, _keys in members:
            summary = _summary(path)
            model = str((manifest.get("model") or {}).get("spec"))
            metric = dict((summary.get("metrics") or {}).get("success_rate") or {})
            rows.append(({"label": f"{model} ({path.name})", "model": model, "run_dir": str(path),
                          "run_id": manifest.get("run_id"), "demo_data": bool(manifest.get("demo")),
                          "fingerprint": None, "judge": None, "judge_spec": None, **_meta(table.lookup(model)),
                          "metric": {k: metric.get(k) for k in ("value", "ci_low", "ci_high", "n")}}, outcomes))
        rows.sort(key=lambda r: (r[0]["metric"]["value"] is None, -(r[0]["metric"]["value"] or 0.0)))
        tied = [False]
        for i in range(1, len(rows)):
            (_up, up_out), (low, low_out) = rows[i - 1], rows[i]
            result = paired_comparison(low_out, up_out, n_boot=n_boot, seed=seed)
            cell = (result.get("metrics") or {}).get("success_rate")
            diff = None if cell is None else {"n": result["n_pairs"], "diff": cell["diff"], "ci_low": cell["ci_low"],
                                              "ci_high": cell["ci_high"], "method": "paired cluster bootstrap"}
            low["vs_previous"] = diff
            tied.append(bool(diff_contains_zero(diff)) if diff is not None else False)
        for (row, _), rank, t in zip(rows, shared_ranks(tied), tied, strict=True):
            row["rank"] = rank if row["metric"]["value"] is not None else None
            row["tied_with_previous"] = t
            row.setdefault("vs_previous", None)
        board_rows = [row for row, _ in rows]
        simulator, mode, max_turns = panel[1], panel[2], panel[3]
        n_personas = len(panel[0].split(",")) if panel[0] else 0
        boards["sim" if number == 1 else f"sim-{number}"] = {
            "task": "sim", "title": f"Simulated users ({n_personas} personas, simulator {simulator}, {mode}, "
                                    f"<= {max_turns} replies)",
            "metric": "Task success %", "convention": "of the sessions (cluster bootstrap over personas)",
            "rows": board_rows, "trends": _trends(board_rows, n_boot, seed), "warnings": [],
        }
    return boards


def _summary(path: Path) -> dict[str, Any]:
    from uxbench.report.sim import load_sim_summary

    return load_sim_summary(path)
