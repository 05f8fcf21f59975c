"""Recompute a run's summary from its stored records, with other summary settings (bootstrap rounds and
seed of the confidence intervals). Nothing is rerun and nothing in the run directory is changed: the
summary settings are not part of the run identity, so `uxbench report RUN_DIR --n-boot N --seed S` is
the way to see the figures under other settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from uxbench.data import user_files
from uxbench.errors import DataError, UxbenchError
from uxbench.report.compare import RunView, open_run_store, view_of
from uxbench.runs.store import MANIFEST, SUMMARY

_INVOCATION_FIELDS = ("skipped_rows", "read", "invocation", "scoring", "strategy_labelling")
"""Fields of the stored summary about the invocation that wrote it (not recomputable): kept as they were."""


def recomputed_summary(path: str | Path, *, n_boot: int, seed: int) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """(run directory, manifest, summary) with the summary recomputed from `samples.sqlite` (the latest
    selection of samples, every judge's scores) under `n_boot` bootstrap rounds and `seed`, for any task. The
    stored summary's figures are not read, so this also shows a run whose `summary.json` is damaged."""
    from uxbench.orchestrate.summary import run_summary, task_from_manifest
    from uxbench.tasks.base import SummaryOptions

    store = open_run_store(path)
    try:
        manifest = store.read_manifest() or {}
        model = manifest.get("model")
        if not isinstance(model, dict) or not model.get("spec"):
            raise UxbenchError(f"{store.path / MANIFEST} lacks the model: the summary cannot be recomputed.")
        task = task_from_manifest(manifest, str(store.path / MANIFEST))
        summary = run_summary(store, task, manifest, SummaryOptions(n_boot=n_boot, seed=seed),
                              selected=store.read_selection(), extra=_stored(store.path, _INVOCATION_FIELDS))
    finally:
        store.close()
    return store.path, manifest, summary


def resummarize_run(path: str | Path, *, n_boot: int, seed: int) -> RunView:
    """A Task 1 run's checked view with its summary recomputed (`recomputed_summary`)."""
    where, manifest, summary = recomputed_summary(path, n_boot=n_boot, seed=seed)
    return view_of(where, manifest, summary)


def _stored(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """Those fields of the stored summary, when it can be read at all."""
    try:
        stored = user_files.parse_json(user_files.read_bytes(path / SUMMARY), str(path / SUMMARY))
    except (OSError, DataError):
        return {}
    return {k: stored[k] for k in keys if k in stored} if isinstance(stored, dict) else {}
