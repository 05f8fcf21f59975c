"""Task 1 runs as several judges of the same cases: Fleiss' kappa across them, and each graded run's ties.

Runs are grouped by their data fingerprint (the same cases); a group of two or more runs gets Fleiss' kappa of the
good / bad labels over the cases every run judged (a case one run could not read is left out and counted), with a
bootstrap interval over cases. When every run of a group scored on the same scale (Likert with one N, or one
rubric, by content hash), kappa of the scores themselves is given too: the paper's ablation found only moderate
agreement between judges on Likert ratings (0.41-0.44). Each Likert or rubric run also shows the share of
(liked, disliked) case pairs it scored the same (`metrics.ties`, computed by the run)."""

from __future__ import annotations

from typing import Any

from uxbench.metrics.agreement import fleiss_kappa
from uxbench.report.run_data import RunData


def _scale(run: RunData) -> str | None:
    """What a run's scores mean: 'likert:5', 'rubric:<digest>'; None for label-only runs."""
    if isinstance(run.summary.get("rubric"), dict):
        return f"rubric:{run.summary['rubric'].get('id')}:{run.summary['rubric'].get('digest')}"
    if isinstance(run.summary.get("likert"), dict):
        return f"likert:{run.summary['likert'].get('scale')}"
    return None


def _formulation(run: RunData) -> str:
    rubric = run.summary.get("rubric")
    name = str(run.summary.get("formulation") or "?")
    return f"rubric {rubric.get('id')}" if isinstance(rubric, dict) else name


def judge_agreement(runs: list[RunData], *, n_boot: int, seed: int) -> dict[str, Any]:
    """Fleiss' kappa per group of Task 1 runs on the same data, and each graded run's tie share."""
    judges = [r for r in runs if r.task == "judge"]
    groups: dict[str, list[RunData]] = {}
    for run in judges:
        groups.setdefault(run.fingerprint or str(run.path), []).append(run)
    out_groups = []
    for fingerprint, members in groups.items():
        if len(members) < 2:
            continue
        shared = sorted(set.intersection(*(set(r.judged) for r in members)))
        labels = fleiss_kappa([[r.judged[c][0] for r in members] for c in shared], n_boot=n_boot, seed=seed)
        scales = {_scale(r) for r in members}
        scores: dict[str, Any] | None = None
        note = ""
        if len(scales) == 1 and None not in scales:
            scores = fleiss_kappa([[None if r.judged[c][1] is None else f"{r.judged[c][1]:.6g}" for r in members]
                                   for c in shared], n_boot=n_boot, seed=seed)
        elif None not in scales:
            note = "the runs score on different scales: kappa of the scores is not defined"
        out_groups.append({"data": fingerprint, "runs": [{"path": str(r.path), "model": r.label,
                                                          "formulation": _formulation(r)} for r in members],
                           "n_shared_cases": len(shared), "labels": labels, "scores": scores, "note": note})
    ties = []
    for run in judges:
        graded = run.summary.get("rubric") or run.summary.get("likert")
        if isinstance(graded, dict) and isinstance(graded.get("pair_ties"), dict):
            ties.append({"path": str(run.path), "model": run.label, "formulation": _formulation(run),
                         **graded["pair_ties"]})
    return {"groups": out_groups, "ties": ties}
