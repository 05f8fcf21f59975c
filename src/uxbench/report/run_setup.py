"""What sets runs of one model apart (formulation, strategy, system prompt, judge, ...), and labels that say it.

Two runs of the same model differ in their task settings, the judge that scored them or the provider arguments;
tables name each by its model plus what differs from its siblings (`gpt-4o (strategy=cot)`), so a reader sees
why the figures differ. A run whose manifest carries a readable `label` is named by it.
"""

from __future__ import annotations

from uxbench.report.run_data import RunData
from uxbench.report.settings_diff import differences, manifest_setup, short_text


def setup_of(run: RunData, judge: str | None = None) -> dict[str, str]:
    """A run's settings as short text: `manifest_setup`, and the judge ranking it (spec, mode and the settings of
    its protocol)."""
    out = manifest_setup(run.manifest)
    if judge is not None:
        info = run.judges.get(judge) or {}
        out["judge"] = str(info.get("spec") or judge)
        settings = dict(info.get("settings") or {})
        out["judge_mode"] = str(info.get("mode") or settings.get("mode") or "")
        for key in ("strategy", "threshold", "lang"):
            if key in settings:
                out[f"judge_{key}"] = short_text(settings[key])
    return out


def label_runs(runs: list[RunData], judges: list[str | None] | None = None) -> list[dict[str, str]]:
    """Give each run a unique `label`: its manifest's label, else its model, plus what differs from the other runs
    of that model and task (then its directory if that is still not unique). Returns each run's differences."""
    chosen = judges or [None] * len(runs)
    setups = [setup_of(run, judge) for run, judge in zip(runs, chosen, strict=True)]
    diffs: list[dict[str, str]] = [{} for _ in runs]
    by_model: dict[tuple[str, str], list[int]] = {}
    for i, run in enumerate(runs):
        by_model.setdefault((run.task, run.model), []).append(i)
    for members in by_model.values():
        if len(members) > 1:
            for i, diff in zip(members, differences([setups[i] for i in members]), strict=True):
                diffs[i] = diff
    for i, run in enumerate(runs):
        named = run.manifest.get("label")
        if isinstance(named, str) and named.strip():
            run.label = named.strip()
            continue
        parts = ", ".join(f"{k}={v}" for k, v in diffs[i].items())
        run.label = f"{run.model} ({parts})" if parts else run.model
    seen: dict[tuple[str, str], list[int]] = {}
    for i, run in enumerate(runs):
        seen.setdefault((run.task, run.label), []).append(i)
    for members in seen.values():
        if len(members) > 1:
            for i in members:
                tag = runs[i].path.name if len({runs[j].path.name for j in members}) == len(members) else \
                    str(runs[i].path)
                runs[i].label = f"{runs[i].label} [{tag}]"
    return diffs
