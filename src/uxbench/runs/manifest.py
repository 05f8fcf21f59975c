"""What a run was asked to do, and the environment it ran in.

The run id is a hash of everything that decides the outputs (task, task config, templates, model,
model args, data fingerprint), so rerunning the same command finds the same run directory and resumes it.
Concurrency, limits and output paths do not enter the id: they change how, not what.
"""

from __future__ import annotations

import hashlib
import platform
import re
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from uxbench.redact import redact_args as redact_args  # re-exported: manifests write model args with it
from uxbench.runs.spec_paths import public_spec

_PACKAGES = (
    "uxbench", "pydantic", "aiohttp", "numpy", "scipy", "torch", "transformers",
    "openai", "anthropic", "google-genai", "datasets",
)


def content_hash(obj: Any, length: int = 16) -> str:
    """Stable hash of JSON-able data (sorted keys)."""
    raw = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return hashlib.sha256(raw).hexdigest()[:length]


def run_identity(
    *, task: str, task_config: dict[str, Any], template_hashes: dict[str, str],
    model_spec: str, model_args: dict[str, str], data_fingerprint: str,
) -> dict[str, Any]:
    """The run's identity. Model args go through `redact_args`: a secret becomes a constant marker (a new
    key finds the same run), while every argument that changes the answer (max_new_tokens, extra_body's
    top_k ...) is kept verbatim, so changing it gives another run id."""
    return {
        "task": task,
        "task_config": task_config,
        "template_hashes": template_hashes,
        "model": model_spec,
        "model_args": redact_args(model_args),
        "data_fingerprint": data_fingerprint,
    }


NAMED_OPTIONS = ("formulation", "rubric", "strategy", "layout", "verdict_from", "system_prompt", "lang")
"""Task options that name a run when they differ from the task's defaults (the hash tells the rest apart)."""


def run_name(task: str, model_spec: str, task_config: dict[str, Any], defaults: dict[str, Any],
             identity_hash: str, *, legacy: bool = False) -> str:
    """A run directory's name a person can read: task, model, the named options that differ from the
    defaults (e.g. `judge-openai-gpt-4o-mini-cot-zh-8dec2694ab`), and the identity hash that makes it unique.
    A model named by a path is named by the path's last part (`model_slug`); `legacy` gives the name runs had
    before, with the whole path's slug, which `run_dir_under` still finds."""
    parts = [task, slug(model_spec) if legacy else model_slug(model_spec)]
    for key in NAMED_OPTIONS:
        value = task_config.get(key)
        if value is not None and value != defaults.get(key):
            parts.append(slug(Path(str(value)).stem if key in ("rubric", "system_prompt") else str(value), 16))
    return "-".join([*parts, identity_hash[:10]])


def slug(text: str, limit: int = 40) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (s[-limit:] if len(s) > limit else s) or "model"


def model_slug(spec: str, limit: int = 40) -> str:
    """A model spec's slug for a run id, with any path in it cut to its last part
    ('scripted:file:/home/me/rules.json' -> 'scripted-file-rules.json'): a run id never says where a file lives."""
    return slug(public_spec(spec), limit)


def run_dir_under(root: Path, run_id: str, legacy_id: str) -> tuple[str, Path]:
    """(run id, directory) of a run under `root`: `run_id`, unless only a directory named `legacy_id` (the name
    such a run had before run ids left paths out) exists, which is then resumed under its own name."""
    if legacy_id != run_id and not (root / run_id).exists() and (root / legacy_id).is_dir():
        return legacy_id, root / legacy_id
    return run_id, root / run_id


def package_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_revision(path: Path | None = None) -> dict[str, Any] | None:
    """Commit and dirty flag of the checkout uxbench runs from (None outside a git checkout)."""
    where = path or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where, capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(dirty)}


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "git": git_revision(),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
