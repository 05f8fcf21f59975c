"""`uxbench bias`: how far the judges of a set of runs can be trusted, measured on their own scores.

Per task (Task 2 and Task 3 apart):
- self-preference: Good% of every judge x candidate model (Wilson CI, n), with the judge's own family (`*`) and
  own organisation (`+`) marked from the model table (`data/models.yaml`, `$UXBENCH_MODELS`);
- length bias per judge: correlation of its score with reply length, and length-controlled Good% per candidate
  (`metrics.bias.length_controlled_rates`);
- agreement: raw agreement and Cohen's kappa between every two judges that scored the same replies;
- resolution: each judge's tie rate (two models' replies to one case scored within 0.01 of p(good) by a GRM judge,
  or given the same verdict by a pointwise one: the pairs the judge cannot order), and for every two judges that
  scored the same three runs or more, Kendall's tau between their leaderboards (bootstrap CI over cases).
Also, for Task 1 runs with probability verdicts, calibration (ECE with its bins, Brier; computed by the run); for
Task 1 runs on the same data, Fleiss' kappa across them as judges, and each Likert or rubric run's tie share
(`report.judge_agreement`); and for `uxbench pairwise` output directories, the win rate of each judge x pair with
the family marks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uxbench.data import user_files
from uxbench.data.model_meta import ModelInfo, ModelTable
from uxbench.errors import DataError, UxbenchError
from uxbench.metrics.agreement import cohen_kappa
from uxbench.metrics.bias import length_controlled_rates, length_correlation, self_preference_matrix
from uxbench.metrics.correlation import leaderboard_agreement
from uxbench.metrics.proportions import proportion
from uxbench.report.discover import discover
from uxbench.report.judge_agreement import judge_agreement
from uxbench.report.run_data import RunData, judge_label, load_run_data
from uxbench.report.run_setup import label_runs

TASK_TITLES = {"eval": "Task 2, UX Eval", "recovery": "Task 3, UX Recovery", "judge": "Task 1, UX Judge"}


def relation(judge: ModelInfo | None, candidate: ModelInfo | None) -> str:
    """'*' when the judge and the candidate share a family, '+' when only their organisation; '' otherwise or
    when the model table knows either not."""
    if judge is None or candidate is None:
        return ""
    if judge.family and candidate.family and judge.family.lower() == candidate.family.lower():
        return "*"
    if judge.org and candidate.org and judge.org.lower() == candidate.org.lower():
        return "+"
    return ""


def _meta(info: ModelInfo | None) -> dict[str, Any]:
    return {"org": info.org, "family": info.family, "matched": info.key} if info else {"org": None, "family": None,
                                                                                          "matched": None}


def _judges_of(runs: Sequence[RunData]) -> dict[str, dict[str, Any]]:
    infos: dict[str, dict[str, Any]] = {}
    for run in runs:
        for key in run.verdicts:
            infos.setdefault(key, dict(run.judges.get(key) or {"spec": None}))
    return infos


def _task_section(runs: list[RunData], table: ModelTable, n_boot: int, seed: int) -> dict[str, Any]:
    infos = _judges_of(runs)
    labels = {key: judge_label(key, info, infos) for key, info in infos.items()}
    judge_meta = {key: table.lookup(str(info["spec"])) if info.get("spec") else None for key, info in infos.items()}
    cand_meta = {run.label: table.lookup(run.model) for run in runs}
    matrix = self_preference_matrix(
        (key, run.label, v.label) for run in runs for key, by_sample in run.verdicts.items()
        for v in by_sample.values())
    for key, by_cand in matrix["cells"].items():
        for cand, cell in by_cand.items():
            cell["relation"] = relation(judge_meta[key], cand_meta[cand])
    matrix["judges"] = [{"key": k, "label": labels[k], "spec": infos[k].get("spec"), "mode": infos[k].get("mode"),
                         **_meta(judge_meta[k])} for k in matrix["judges"]]
    matrix["candidates"] = [{"label": c, **_meta(cand_meta[c])} for c in matrix["candidates"]]
    return {
        "runs": [{"path": str(r.path), "model": r.model, "label": r.label, "demo_data": r.demo} for r in runs],
        "self_preference": matrix,
        "length_bias": [_length_bias(key, labels[key], runs, n_boot, seed) for key in infos],
        "agreement": _agreement(runs, labels, n_boot, seed),
        "resolution": {"ties": [_ties(key, labels[key], infos[key], runs) for key in infos],
                       "leaderboards": _leaderboards(runs, labels, n_boot, seed)},
    }


TIE_WITHIN = 0.01
"""Two p(good) scores this close count as a tie of a probability judge."""


def _ties(key: str, label: str, info: dict[str, Any], runs: list[RunData]) -> dict[str, Any]:
    """How often the judge cannot tell two models' replies to the same case apart."""
    by_run = [{v.case_id: v for v in run.verdicts.get(key, {}).values() if v.label is not None} for run in runs]
    scored = [v for verdicts in by_run for v in verdicts.values()]
    use_score = info.get("mode") == "grm" and bool(scored) and all(v.score is not None for v in scored)
    ties = pairs = 0
    for first, second in itertools.combinations(by_run, 2):
        for case_id, v in first.items():
            w = second.get(case_id)
            if w is None:
                continue
            pairs += 1
            same = abs(float(v.score or 0) - float(w.score or 0)) <= TIE_WITHIN if use_score else v.label == w.label
            ties += same
    return {"judge": key, "label": label, "measure": f"p(good) within {TIE_WITHIN}" if use_score else "same verdict",
            "rate": proportion(ties, pairs), "n_pairs": pairs}


def _leaderboards(runs: list[RunData], labels: dict[str, str], n_boot: int, seed: int) -> list[dict[str, Any]]:
    """Kendall's tau between the leaderboards of every two judges over the runs both scored (3 or more)."""
    out = []
    for k1, k2 in itertools.combinations(sorted(labels), 2):
        both = [run for run in runs if run.verdicts.get(k1) and run.verdicts.get(k2)]
        if len(both) < 3:
            continue
        cases = sorted({v.case_id for run in both for k in (k1, k2) for v in run.verdicts[k].values()})
        col = {c: i for i, c in enumerate(cases)}

        def matrix(key: str, members: list[RunData] = both, col: dict[str, int] = col) -> list[list[float]]:
            rows = []
            for run in members:
                row = [float("nan")] * len(col)
                for v in run.verdicts[key].values():
                    if v.label is not None:
                        row[col[v.case_id]] = float(v.label == "good")
                rows.append(row)
            return rows

        out.append({"judge_a": k1, "judge_b": k2, "label_a": labels[k1], "label_b": labels[k2],
                    "runs": [run.label for run in both],
                    **leaderboard_agreement(matrix(k1), matrix(k2), n_boot=n_boot, seed=seed)})
    return out


def _length_bias(key: str, label: str, runs: list[RunData], n_boot: int, seed: int) -> dict[str, Any]:
    lengths: list[int] = []
    values: list[float] = []
    groups: dict[str, tuple[list[int], list[bool]]] = {}
    labelled = [(run, run.replies[sid][1], v) for run in runs for sid, v in run.verdicts.get(key, {}).items()
                if v.label is not None]
    use_score = bool(labelled) and all(v.score is not None and 0.0 <= v.score <= 1.0 for _, _, v in labelled)
    for run, chars, v in labelled:
        lengths.append(chars)
        values.append(float(v.score) if use_score and v.score is not None else float(v.label == "good"))
        group = groups.setdefault(run.label, ([], []))
        group[0].append(chars)
        group[1].append(v.label == "good")
    return {
        "judge": key, "label": label, "n": len(lengths),
        "measure": "p(good)" if use_score else "good = 1, bad = 0",
        "spearman": length_correlation(lengths, values, method="spearman"),
        "pearson": length_correlation(lengths, values, method="pearson"),
        "length_controlled": length_controlled_rates(groups, n_boot=n_boot, seed=seed),
    }


def _agreement(runs: list[RunData], labels: dict[str, str], n_boot: int, seed: int) -> list[dict[str, Any]]:
    pairs: dict[tuple[str, str], tuple[list[str | None], list[str | None]]] = {}
    for run in runs:
        for k1, k2 in itertools.combinations(sorted(run.verdicts), 2):
            first, second = run.verdicts[k1], run.verdicts[k2]
            shared = [sid for sid in first if sid in second]
            if not shared:
                continue
            a, b = pairs.setdefault((k1, k2), ([], []))
            a.extend(first[s].label for s in shared)
            b.extend(second[s].label for s in shared)
    return [{"judge_a": k1, "judge_b": k2, "label_a": labels[k1], "label_b": labels[k2],
             **cohen_kappa(a, b, n_boot=n_boot, seed=seed)} for (k1, k2), (a, b) in pairs.items()]


def _calibration(run: RunData) -> dict[str, Any] | None:
    cal = run.summary.get("calibration")
    if not isinstance(cal, dict) or not cal.get("n"):
        return None
    return {"path": str(run.path), "model": run.model, **cal}


def _pairwise(path: Path, table: ModelTable) -> list[dict[str, Any]]:
    try:
        summary = user_files.parse_json(user_files.read_bytes(path / "summary.json"), str(path / "summary.json"))
        if not isinstance(summary, dict):
            raise DataError("should hold a JSON object", source=str(path / "summary.json"))
    except (OSError, DataError):
        raise UxbenchError(f"{path} has no readable summary.json: rerun the `uxbench pairwise` command that made "
                           "it.") from None
    out = []
    for key, f in (summary.get("judges") or {}).items():
        judge = table.lookup(str(f.get("spec")))
        model_a, model_b = f["run_a"]["model"], f["run_b"]["model"]
        out.append({"path": str(path), "judge": key, "spec": f.get("spec"), "task": f.get("task"),
                    "model_a": model_a, "model_b": model_b,
                    "relation_a": relation(judge, table.lookup(model_a)),
                    "relation_b": relation(judge, table.lookup(model_b)),
                    **{k: f.get(k) for k in ("n_decided", "a_wins", "b_wins", "ties_both_orders",
                                             "position_inconsistent", "win_rate_a", "position_inconsistency")}})
    return out


def bias_report(
    paths: Sequence[str | Path], *, n_boot: int = 1000, seed: int = 0, table: ModelTable | None = None
) -> dict[str, Any]:
    """The bias report over run directories (any task), pairwise comparison directories, globs or parents."""
    found = discover([str(p) for p in paths])
    table = table or ModelTable.default()
    runs = [load_run_data(p) for p in found.runs]
    report: dict[str, Any] = {"kind": "uxbench.bias", "tasks": {}, "calibration": [], "pairwise": [],
                              "skipped": found.skipped, "notes": [], "n_boot": n_boot, "seed": seed,
                              "demo_data": any(r.demo for r in runs)}
    for task in ("eval", "recovery"):
        members = [r for r in runs if r.task == task]
        label_runs(members)
        if members:
            scored = [r for r in members if r.verdicts]
            if len(scored) < len(members):
                report["notes"].append(f"{TASK_TITLES[task]}: {len(members) - len(scored)} runs have no scores yet "
                                       "(`uxbench score RUN_DIR --judge ...`).")
            if scored:
                report["tasks"][task] = _task_section(scored, table, n_boot, seed)
    for run in runs:
        if run.task == "judge":
            cal = _calibration(run)
            if cal is None:
                report["notes"].append(f"{run.path}: a Task 1 run without probability verdicts has no calibration "
                                       "(run it with --verdict-from logprobs).")
            else:
                report["calibration"].append(cal)
    for path in found.pairwise:
        report["pairwise"].extend(_pairwise(path, table))
    judge_runs = [r for r in runs if r.task == "judge"]
    label_runs(judge_runs)
    report["judge_agreement"] = judge_agreement(judge_runs, n_boot=n_boot, seed=seed)
    agreement = report["judge_agreement"]
    if not report["tasks"] and not report["calibration"] and not report["pairwise"] and not (
            agreement["groups"] or agreement["ties"]):
        raise UxbenchError("Nothing to analyse: the runs hold no judge scores, calibration or pairwise results. "
                           "Score Task 2/3 runs with `uxbench score RUN_DIR --judge ...` first.")
    return report
