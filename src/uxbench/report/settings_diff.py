"""What sets runs of one model apart, from their manifests alone: their task settings and provider arguments as
short text, and the settings whose value differs between runs. `report.run_setup` adds the judge; the Task 1
comparison (`report.compare`) uses these directly (it sits below `run_data`, so it cannot import `run_setup`)."""

from __future__ import annotations

import hashlib
from typing import Any

_SKIP = {"task", "likert_threshold", "max_chars"}
"""Task settings never shown: the task itself, and a derived copy (likert_threshold is `threshold`)."""
SHORT = 24


def short_text(value: Any) -> str:
    text = "none" if value is None else str(value)
    if len(text) <= SHORT:
        return text
    return f"{text[:SHORT - 10].rstrip()}… #{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def manifest_setup(manifest: dict[str, Any]) -> dict[str, str]:
    """A run's task settings and its model's provider arguments as short text (secrets are already redacted in
    the manifest)."""
    out: dict[str, str] = {}
    for key, value in sorted((manifest.get("task_config") or {}).items()):
        if key not in _SKIP:
            out[key] = short_text(value)
    model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
    for key, value in sorted(((model or {}).get("args") or {}).items()):
        out[f"arg.{key}"] = short_text(value)
    return out


def differences(setups: list[dict[str, str]]) -> list[dict[str, str]]:
    """Per setup, the settings whose value is not the same in all of them."""
    keys = sorted({k for s in setups for k in s})
    varying = [k for k in keys if len({s.get(k) for s in setups}) > 1]
    return [{k: s.get(k, "none") for k in varying} for s in setups]
