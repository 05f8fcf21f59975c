"""Everything a run was asked to do, as sections of (setting, value) for a run page: the data, the model and its
arguments, the task's settings (formulation, strategy, language, system prompt ...), the templates (by hash),
each judge and its protocol, the runtime options, the environment, and the command line that made it. Read from
the manifest (secrets were redacted when it was written) and the summary's `invocation`."""

from __future__ import annotations

import json
from typing import Any

Section = tuple[str, list[tuple[str, str]]]
NOT_RECORDED = "not recorded (the run was made before uxbench recorded its command line, or from Python)"


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _model(role: str, found: Any) -> list[tuple[str, str]]:
    if not isinstance(found, dict) or not found.get("spec"):
        return []
    rows = [(role, str(found["spec"]))]
    rows += [(f"{role} argument {k}", _text(v)) for k, v in sorted((found.get("args") or {}).items())]
    return rows


def _templates(hashes: Any) -> str:
    if not isinstance(hashes, dict) or not hashes:
        return "—"
    return ", ".join(f"{name} ({str(digest)[:12]})" for name, digest in sorted(hashes.items()))


def _environment(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    env = manifest.get("environment") or {}
    packages = env.get("packages") or {}
    git = env.get("git") or {}
    rows = [("uxbench", str(packages.get("uxbench", "—"))
             + (f", commit {str(git.get('commit'))[:12]}{' (uncommitted changes)' if git.get('dirty') else ''}"
                if git.get("commit") else ""))]
    rows += [("python", _text(env.get("python"))), ("platform", _text(env.get("platform"))),
             ("created", _text(env.get("created_at")))]
    return rows


def _command(summary: dict[str, Any]) -> list[tuple[str, str]]:
    invocation = summary.get("invocation") or {}
    rows = [("command line", str(invocation.get("command") or NOT_RECORDED))]
    if invocation.get("elapsed_s") is not None:
        rows.append(("last invocation took", f"{invocation['elapsed_s']} s"))
    return rows


def task_run_settings(manifest: dict[str, Any], summary: dict[str, Any]) -> list[Section]:
    """The settings of a Task 1/2/3 run."""
    data = manifest.get("data") or summary.get("data") or {}
    options = manifest.get("options") or {}
    sections: list[Section] = [("Run", [
        ("task", _text(manifest.get("task") or summary.get("task"))),
        ("data", _text(data.get("description"))),
        ("data fingerprint", str(data.get("fingerprint") or "—")[:16]),
        ("split", _text(data.get("split"))),
        ("limit", _text(options.get("limit")) if options.get("limit") is not None else "all cases"),
        *_model("model", manifest.get("model")),
    ])]
    config = manifest.get("task_config") or {}
    sections.append(("Task settings", [(k, _text(v)) for k, v in sorted(config.items()) if k != "task"]
                     + [("templates", _templates(manifest.get("template_hashes")))]))
    primary = manifest.get("primary_judge") or summary.get("primary_judge")
    judges = manifest.get("judges") or {}
    for key in sorted(judges, key=lambda k: k != primary):
        info = judges[key] or {}
        role = "primary judge" if key == primary else "judge"
        rows = [*_model(role, info), ("key", key), ("mode", _text(info.get("mode")))]
        rows += [(k, _text(v)) for k, v in sorted((info.get("settings") or {}).items()) if k != "mode"]
        rows.append(("templates", _templates(info.get("template_hashes"))))
        sections.append((f"{role.capitalize()} {info.get('spec') or key}", rows))
    for key, info in sorted((manifest.get("strategy_classifiers") or {}).items()):
        sections.append((f"Strategy classifier {info.get('spec') or key}",
                         [*_model("classifier", info), ("key", key),
                          *((k, _text(v)) for k, v in sorted((info.get("settings") or {}).items()))]))
    sections.append(("Runtime", [(k, _text(v)) for k, v in sorted(options.items()) if k != "limit"]))
    sections.append(("Environment", _environment(manifest) + _command(summary)))
    return sections


def sim_run_settings(manifest: dict[str, Any], summary: dict[str, Any]) -> list[Section]:
    """The settings of a simulated-session run (`uxbench sim run`)."""
    identity = manifest.get("identity") or {}
    personas = manifest.get("personas") or {}
    judges = [j.split(":", 1)[1] if str(j).startswith("satisfaction:") else str(j)
              for j in manifest.get("judges") or []]
    sections: list[Section] = [("Run", [
        ("mode", _text(manifest.get("mode"))), ("language", _text(manifest.get("lang"))),
        ("personas", f"{personas.get('n', '—')} from {', '.join(map(str, personas.get('sources') or [])) or '—'}"),
        ("trials per persona", _text(manifest.get("trials"))), ("replies per session at most",
                                                                 _text(manifest.get("max_turns"))),
        ("seed", _text(manifest.get("seed"))),
        *_model("model", manifest.get("model")), *_model("simulator", manifest.get("simulator")),
        *_model("assessor", manifest.get("assessor")),
        ("satisfaction judge", ", ".join(judges) or "none"),
    ])]
    generation = identity.get("generation") or {}
    sections.append(("Generation", [(k.replace("_", " "), _text(v)) for k, v in sorted(generation.items())]
                     + [("templates", _templates(manifest.get("simulator_prompt_digests")))]))
    sections.append(("Runtime", [(k, _text(v)) for k, v in sorted((manifest.get("options") or {}).items())]))
    sections.append(("Environment", _environment(manifest) + _command(summary)))
    return sections
