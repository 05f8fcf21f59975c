"""Compare finished runs: one row of headline metrics per run, and paired tests against the first run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.metrics.judge import CONVENTIONS
from uxbench.metrics.paired import mcnemar, paired_bootstrap_diff
from uxbench.metrics.power import avg_acc_design, mdd_entry
from uxbench.report.settings_diff import differences, manifest_setup
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import MINING_MARKERS as MINING_MARKERS  # re-exported: the viewer and discovery use it
from uxbench.runs.store import SAMPLES_DB, SUMMARY, RunStore
from uxbench.runs.summary import check_summary

DEMO_LABEL = "DEMO DATA"
METRICS = ("avg_acc", "good_acc", "bad_acc", "bad_f1", "positive_bias", "accuracy")
SUPPORTED_TASKS = ("judge",)


@dataclass
class RunView:
    """A finished run directory: its manifest and summary; records are read on demand."""

    path: Path
    manifest: dict[str, Any]
    summary: dict[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.path.name)

    @property
    def task(self) -> str:
        return str(self.summary.get("task") or self.manifest.get("task") or "?")

    @property
    def model(self) -> str:
        return _model_name(self.summary, self.manifest)

    def records(self) -> list[SampleRecord]:
        """Every stored record (ok and error), in data order; empty when the run stored none."""
        if not (self.path / SAMPLES_DB).is_file():
            return []
        with RunStore(self.path) as store:
            return list(store.iter_records())




def open_run_store(path: str | Path) -> RunStore:
    """A run directory's store; a clear error for a path that is not one (missing, a file, mining output)."""
    where = Path(path)
    if not where.exists():
        raise UxbenchError(f"{where}: no such directory. Pass a run directory printed by `uxbench run`.")
    if not where.is_dir():
        raise UxbenchError(f"{where} is a file, not a run directory. Pass a directory printed by `uxbench run`.")
    if not (where / SAMPLES_DB).exists() and any((where / m).exists() for m in MINING_MARKERS):
        raise UxbenchError(
            f"{where} is the output of `uxbench mine run`, not a run directory: use `uxbench mine report {where}`, "
            f"or run its cases with `uxbench run --data {where / 'cases'}`."
        )
    return RunStore.open_existing(where)


def load_run(path: str | Path) -> RunView:
    """Open a finished run directory. Raises UxbenchError when it is not one, has no summary yet, or its
    summary does not have the shape uxbench writes (`runs.summary`)."""
    store = open_run_store(path)
    try:
        manifest = store.read_manifest() or {}
        summary = store.read_summary()
    finally:
        store.close()
    if summary is None:
        raise UxbenchError(
            f"{store.path} has no {SUMMARY}: the run has not finished. "
            "Rerun the same `uxbench run` command to resume it, then compare."
        )
    return view_of(store.path, manifest, summary)


def view_of(path: Path, manifest: dict[str, Any], summary: dict[str, Any]) -> RunView:
    """A checked view: the summary validated against the models that describe what a run writes."""
    check_summary(summary, str(path / SUMMARY))
    view = RunView(path=path, manifest=manifest, summary=summary)
    _check_metrics(summary, view.task, str(path / SUMMARY))
    return view


def _check_metrics(summary: dict[str, Any], task: str, where: str) -> None:
    if task not in SUPPORTED_TASKS:
        raise UxbenchError(f"{where}: reports support the {', '.join(SUPPORTED_TASKS)} task, not {task!r}.")
    metrics = summary.get("metrics")
    if not isinstance(metrics, dict) or not all(isinstance(metrics.get(c), dict) for c in CONVENTIONS):
        raise UxbenchError(
            f"{where}: 'metrics' lacks the judge metrics; the summary may be from an older uxbench."
        )


def _model_name(summary: dict[str, Any], manifest: dict[str, Any]) -> str:
    if summary.get("model"):
        return str(summary["model"])
    model = manifest.get("model")
    if isinstance(model, dict) and model.get("spec"):
        return str(model["spec"])
    return str(model or "?")


def _cell(entry: dict[str, Any] | None) -> dict[str, Any]:
    """The rendering view of one metric: value, CI and (for proportions) its denominator."""
    if not entry:
        return {"value": None, "ci_low": None, "ci_high": None, "n": None}
    return {
        "value": entry.get("value"),
        "ci_low": entry.get("ci_low") if entry.get("value") is not None else None,
        "ci_high": entry.get("ci_high") if entry.get("value") is not None else None,
        "n": entry.get("n"),
    }


def run_row(
    summary: dict[str, Any], *, manifest: dict[str, Any] | None = None, run_dir: str | Path | None = None
) -> dict[str, Any]:
    """One report row from a run's summary.json (and manifest.json when at hand)."""
    manifest = manifest or {}
    metrics: dict[str, Any] = summary.get("metrics") or {}
    data = summary.get("data") or manifest.get("data") or {}
    demo = bool(summary.get("demo_data", manifest.get("demo_data", False)))
    unparseable = metrics.get("unparseable") or {}
    row: dict[str, Any] = {
        "label": _model_name(summary, manifest),
        "run_dir": str(run_dir or summary.get("run_dir") or ""),
        "run_id": manifest.get("run_id"),
        "model": _model_name(summary, manifest),
        "task": summary.get("task") or manifest.get("task"),
        "data": (data.get("description") if isinstance(data, dict) else str(data)) or "",
        "fingerprint": data.get("fingerprint") if isinstance(data, dict) else None,
        "demo_data": demo,
        "data_label": DEMO_LABEL if demo else "",
        "n": metrics.get("n", summary.get("n_samples")),
        "n_errors": summary.get("n_errors"),
        "n_good": metrics.get("n_good"),
        "n_bad": metrics.get("n_bad"),
        "unparseable": {**_cell(unparseable), "k": unparseable.get("k")},
        "neutral_escape_bad": _cell((metrics.get("neutral_escape") or {}).get("bad")),
    }
    for conv in CONVENTIONS:
        block = metrics.get(conv) or {}
        row[conv] = {name: _cell(block.get(name)) for name in METRICS}
    n_valid = (unparseable.get("n") or 0) - (unparseable.get("k") or 0)
    row["valid_only"]["n"] = n_valid
    return row


def _unique_labels(rows: list[dict[str, Any]], manifests: Sequence[dict[str, Any] | None]) -> None:
    """Runs of one model are named by what differs between them (`strategy=cot`), as the leaderboard names them;
    runs that differ in nothing recorded, by their run id."""
    by_model: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_model.setdefault(row["label"], []).append(i)
    for members in by_model.values():
        if len(members) > 1:
            setups = [manifest_setup(manifests[i] or {}) for i in members]
            for i, diff in zip(members, differences(setups), strict=True):
                if diff:
                    rows[i]["label"] += " (" + ", ".join(f"{k}={v}" for k, v in diff.items()) + ")"
    seen: dict[str, int] = {}
    for row in rows:
        seen[row["label"]] = seen.get(row["label"], 0) + 1
    for i, row in enumerate(rows):
        if seen[row["label"]] > 1:
            tag = row["run_id"] or Path(row["run_dir"]).name or f"#{i + 1}"
            row["label"] = f"{row['label']} ({tag})"


def report_from_summaries(
    summaries: Sequence[dict[str, Any]],
    *,
    manifests: Sequence[dict[str, Any] | None] | None = None,
    run_dirs: Sequence[str | Path | None] | None = None,
) -> dict[str, Any]:
    """A comparison report without paired tests (they need the records)."""
    if not summaries:
        raise UxbenchError("Nothing to report: give at least one run directory.")
    rows = []
    for i, summary in enumerate(summaries):
        manifest = manifests[i] if manifests else None
        run_dir = run_dirs[i] if run_dirs else None
        task = str(summary.get("task") or (manifest or {}).get("task") or "?")
        where = str(Path(run_dir) / SUMMARY) if run_dir else f"summary #{i + 1}"
        check_summary(summary, where)
        _check_metrics(summary, task, where)
        rows.append(run_row(summary, manifest=manifest, run_dir=run_dir))
    _unique_labels(rows, manifests or [None] * len(rows))
    tasks = {r["task"] for r in rows}
    if len(tasks) > 1:
        raise UxbenchError(f"Cannot compare runs of different tasks: {', '.join(sorted(map(str, tasks)))}.")
    warnings = []
    prints = {r["fingerprint"] for r in rows if r["fingerprint"]}
    if len(prints) > 1:
        warnings.append("The runs used different data (fingerprints differ): compare figures with care.")
    return {
        "kind": "uxbench.compare",
        "task": rows[0]["task"],
        "demo_data": any(r["demo_data"] for r in rows),
        "conventions": dict(CONVENTIONS),
        "runs": rows,
        "baseline": rows[0]["label"],
        "paired": [],
        "warnings": warnings,
    }


def _outcomes(records: list[SampleRecord], label: str, warnings: list[str]) -> dict[str, tuple[str, bool]]:
    """case_id -> (gold, correct) under the "all" convention (errors and unparseable are wrong)."""
    out: dict[str, tuple[str, bool]] = {}
    dupes = 0
    for rec in records:
        if rec.gold is None:
            continue
        if rec.case_id in out:
            dupes += 1
            continue
        correct = rec.status == "ok" and rec.prediction == rec.gold
        out[rec.case_id] = (rec.gold, correct)
    if dupes:
        warnings.append(f"{label}: {dupes} records repeat a case_id; the first of each was used.")
    return out


def _paired(
    base: dict[str, tuple[str, bool]], other: dict[str, tuple[str, bool]], labels: tuple[str, str],
    n_boot: int, seed: int, warnings: list[str],
) -> dict[str, Any]:
    shared = [cid for cid in base if cid in other]
    mismatch = [cid for cid in shared if base[cid][0] != other[cid][0]]
    matched = [cid for cid in shared if base[cid][0] == other[cid][0]]
    b_label, o_label = labels
    if mismatch:
        warnings.append(f"{o_label} vs {b_label}: {len(mismatch)} shared cases have different gold labels; "
                        "they were left out of the paired tests.")
    if len(matched) != len(base) or len(matched) != len(other):
        warnings.append(
            f"{o_label} vs {b_label}: the case sets differ; paired tests use the {len(matched)} matched "
            f"cases ({len(base)} in {b_label}, {len(other)} in {o_label})."
        )
    entry: dict[str, Any] = {
        "baseline": b_label, "other": o_label, "convention": "all",
        "n_matched": len(matched), "n_baseline": len(base), "n_other": len(other),
        "n_gold_mismatch": len(mismatch), "mcnemar": None, "avg_acc_diff": None, "mdd": None,
        "note": "a = other run, b = baseline; avg_acc_diff = other - baseline",
    }
    if not matched:
        warnings.append(f"{o_label} vs {b_label}: no shared cases, no paired test.")
        return entry
    a = [other[c][1] for c in matched]
    b = [base[c][1] for c in matched]
    golds = [base[c][0] for c in matched]
    entry["mcnemar"] = mcnemar(a, b)
    if all(g in ("good", "bad") for g in golds):
        diff = paired_bootstrap_diff(a, b, golds, n_boot=n_boot, seed=seed)
        entry["avg_acc_diff"] = diff
        psi = diff["discordance"]
        if diff["n_good"] and diff["n_bad"]:
            entry["mdd"] = mdd_entry(*avg_acc_design(psi["good"], diff["n_good"], psi["bad"], diff["n_bad"]))
    return entry


def compare_runs(paths: Sequence[str | Path], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Rows per run (both conventions, with CIs) and, for two or more runs, paired tests vs the first.

    Paired tests match records by case_id under the "all" convention: McNemar on per-case correctness and
    a paired stratified bootstrap of the Avg-Acc difference. Differences in case sets are reported in
    `warnings` and each entry's `n_matched`.
    """
    return compare_views([load_run(p) for p in paths], n_boot=n_boot, seed=seed)


def compare_views(views: Sequence[RunView], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """`compare_runs` over views already opened (e.g. with summaries recomputed by `resummarize_run`)."""
    report = report_from_summaries(
        [v.summary for v in views], manifests=[v.manifest for v in views], run_dirs=[v.path for v in views]
    )
    if len(views) < 2:
        return report
    labels = [r["label"] for r in report["runs"]]
    warnings: list[str] = report["warnings"]
    outcomes = [_outcomes(v.records(), labels[i], warnings) for i, v in enumerate(views)]
    for i in range(1, len(views)):
        report["paired"].append(
            _paired(outcomes[0], outcomes[i], (labels[0], labels[i]), n_boot, seed, warnings)
        )
    return report
