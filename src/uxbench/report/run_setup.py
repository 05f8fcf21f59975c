"""What sets runs of one model apart (formulation, strategy, system prompt, judge, ...), and labels that say it.

Two runs of the same model differ in their task settings, the judge that scored them or the provider arguments;
tables name each by its model plus what differs from its siblings (`gpt-4o (strategy=cot)`), so a reader sees
why the figures differ. A run whose manifest carries a readable `label` is named by it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from uxbench.report.run_data import RunData

_SKIP = {"task", "likert_threshold", "max_chars"}
"""Task settings never shown: the task itself, and a derived copy (likert_threshold is `threshold`)."""
_SHORT = 24


def _short(value: Any) -> str:
    text = "none" if value is None else str(value)
    if len(text) <= _SHORT:
        return text
    return f"{text[:_SHORT - 10].rstrip()}… #{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def setup_of(run: RunData, judge: str | None = None) -> dict[str, str]:
    """A run's settings as short text: its task settings, the judge ranking it (spec, mode and the settings of
    its protocol) and its model's provider arguments (secrets are already redacted in the manifest)."""
    out: dict[str, str] = {}
    for key, value in sorted((run.manifest.get("task_config") or {}).items()):
        if key not in _SKIP:
            out[key] = _short(value)
    model = run.manifest.get("model") if isinstance(run.manifest.get("model"), dict) else {}
    for key, value in sorted(((model or {}).get("args") or {}).items()):
        out[f"arg.{key}"] = _short(value)
    if judge is not None:
        info = run.judges.get(judge) or {}
        out["judge"] = str(info.get("spec") or judge)
        settings = dict(info.get("settings") or {})
        out["judge_mode"] = str(info.get("mode") or settings.get("mode") or "")
        for key in ("strategy", "threshold", "lang"):
            if key in settings:
                out[f"judge_{key}"] = _short(settings[key])
    return out


def differences(setups: list[dict[str, str]]) -> list[dict[str, str]]:
    """Per setup, the settings whose value is not the same in all of them."""
    keys = sorted({k for s in setups for k in s})
    varying = [k for k in keys if len({s.get(k) for s in setups}) > 1]
    return [{k: s.get(k, "none") for k in varying} for s in setups]


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
