"""Recompute a run's summary from its stored records, with other summary settings (bootstrap rounds and
seed of the confidence intervals). Nothing is rerun and nothing in the run directory is changed: the
summary settings are not part of the run identity, so `uxbench report RUN_DIR --n-boot N --seed S` is
the way to see the figures under other settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.report.compare import RunView, open_run_store, view_of
from uxbench.runs.store import MANIFEST, SUMMARY

_INVOCATION_FIELDS = ("skipped_rows", "invocation")
"""Fields of the stored summary about the invocation that wrote it (not recomputable): kept as they were."""


def resummarize_run(path: str | Path, *, n_boot: int, seed: int) -> RunView:
    """The run at `path` with its summary recomputed from `samples.sqlite` (the latest selection of
    samples, every judge's scores) under `n_boot` bootstrap rounds and `seed`. The stored summary's
    figures are not read, so this also shows a run whose `summary.json` is damaged."""
    from uxbench.orchestrate.scoring_step import judges_in_manifest
    from uxbench.orchestrate.summary import summarize_store
    from uxbench.tasks.base import SummaryOptions
    from uxbench.tasks.registry import create_task, get_task_entry

    store = open_run_store(path)
    try:
        manifest = store.read_manifest() or {}
        name, config, model, data = (manifest.get(k) for k in ("task", "task_config", "model", "data"))
        if not isinstance(name, str) or not isinstance(config, dict) or not isinstance(model, dict):
            raise UxbenchError(f"{store.path / MANIFEST} lacks the task, its settings or the model: "
                               "the summary cannot be recomputed.")
        spec = str(model.get("spec"))
        fields = get_task_entry(name).options.model_fields  # the manifest also holds derived keys ("task")
        task = create_task(name, {k: v for k, v in config.items() if k in fields})
        selected = store.read_selection()
        summary = summarize_store(
            store, task, selected=selected, model_spec=spec, judges=judges_in_manifest(manifest),
            primary_judge=manifest.get("primary_judge"), options=SummaryOptions(n_boot=n_boot, seed=seed),
        )
        errors = [r.error for r in store.iter_records(selected) if r.status != "ok" and r.error][:3]
        n_selected = len(selected) if selected is not None else store.count()
    finally:
        store.close()
    data = data if isinstance(data, dict) else {}
    summary = {
        **_stored(store.path, _INVOCATION_FIELDS), **summary,
        "run_id": manifest.get("run_id"), "run_dir": str(store.path), "task": name, "model": spec,
        "demo_data": bool(data.get("demo", False)),
        "data": {"description": data.get("description"), "fingerprint": data.get("fingerprint")},
        "n_selected": n_selected, "errors": errors,
    }
    return view_of(store.path, manifest, summary)


def _stored(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """Those fields of the stored summary, when it can be read at all."""
    try:
        stored = json.loads((path / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: stored[k] for k in keys if k in stored} if isinstance(stored, dict) else {}
