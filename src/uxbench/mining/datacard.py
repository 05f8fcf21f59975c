"""The data card of a mined benchmark: DATA_CARD.md for people, data_card.json for programs.

It records counts per pipeline stage, the signal distribution, the agents' outcomes (kept / rejected /
failed, with reasons), cases per task, dimension x scenario coverage per task, the agent model and the
sampling seed. It holds counts and labels only, never conversation text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from uxbench.data.taxonomy import TaxonomyKind, entries
from uxbench.fileio import atomic_write_bytes
from uxbench.mining.agents.models import Candidate
from uxbench.mining.export import FILES
from uxbench.mining.sample import TASKS, SampleConfig

_TASK_TITLES = {
    "judge_bad": "Task 1 (UX Judge), bad", "judge_good": "Task 1 (UX Judge), good",
    "eval": "Task 2 (UX Eval)", "recovery": "Task 3 (UX Recovery)",
}
_MEAN = re.compile(r"mean \d+(?:\.\d+)?")


def reason_group(text: str) -> str:
    """A reject reason or error without its numbers and details, for counting."""
    if "model error" in text:
        return text.split(":", 1)[0] + ": model error"
    if "invalid output after a retry" in text:
        return text.split(":", 1)[0] + ": invalid output after a retry"
    if "mean" in text:
        return _MEAN.sub("mean", text)
    return text.split(" (", 1)[0]


def agent_outcomes(candidates: Iterable[Candidate]) -> dict[str, Any]:
    """Kept / rejected / failed counts per kind, with grouped reasons."""
    status: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    quality: Counter[str] = Counter()
    corrected = needs_context = 0
    for c in candidates:
        status[f"{c.kind}:{c.status}"] += 1
        if c.status == "rejected" and c.reject_reason:
            reasons[reason_group(c.reject_reason)] += 1
        if c.status == "failed" and c.error:
            errors[reason_group(c.error)] += 1
        if c.status == "kept":
            quality[c.quality or "unaudited"] += 1
            corrected += c.dimension_original is not None
            needs_context += c.needs_context
    total = Counter(k.split(":")[1] for k in status.elements())
    return {
        "kept": total["kept"], "rejected": total["rejected"], "failed": total["failed"],
        "by_kind_status": dict(sorted(status.items())),
        "reject_reasons": dict(reasons.most_common()),
        "failure_reasons": dict(errors.most_common()),
        "kept_quality": dict(sorted(quality.items())),
        "kept_dimension_corrected_by_qa": corrected,
        "kept_needs_context": needs_context,
    }


def _coverage(cases: list[Candidate]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = {}
    for c in cases:
        table.setdefault(c.dimension or "none", Counter())[c.scenario or "none"] += 1
    return {dim: dict(sorted(row.items())) for dim, row in sorted(table.items())}




def _table(title: str, header: list[str], rows: list[list[object]]) -> list[str]:
    """A markdown section: heading, blank line, table, blank line."""
    out = [title, "", "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    out.append("")
    return out


def _matrix(task: str, cov: dict[str, dict[str, int]]) -> list[str]:
    kind: TaxonomyKind = "success_dimensions" if task == "judge_good" else "failure_dimensions"
    dims = [e.key for e in entries(kind)]
    scens = [e.key for e in entries("scenarios")]
    rows = [[d, *(cov.get(d, {}).get(s, 0) for s in scens), sum(cov.get(d, {}).values())] for d in dims]
    return _table(f"### Coverage: {_TASK_TITLES[task]}", ["dimension \\ scenario", *scens, "total"], rows)


def _markdown(card: dict[str, Any]) -> str:
    lines = [
        "# Data card: mined UX benchmark", "",
        f"- Agent model: `{card['model']}`",
        f"- Sampling seed: {card['seed']}",
        "- Keep rule, applied by code: judge mean at or above the threshold and no axis below the minimum "
        "(defaults 4.0 and 3); QA fails closed (no valid review, not kept).",
        "- One case per conversation across all tasks; tasks pick in the order "
        f"{', '.join(card['task_priority'])}.",
        "",
    ]
    lines += _table("## Pipeline stages", ["stage", "count"], [[k, v] for k, v in card["stage_counts"].items()])
    sig = card["signal_counts"]
    total = sum(sig.values()) or 1
    lines += _table("## Signal distribution", ["signal", "count", "share"],
                    [[k, v, f"{100 * v / total:.1f}%"] for k, v in sig.items()])
    agents = card["agents"]
    if agents:
        lines += _table("## Agent outcomes", ["outcome", "count"],
                        [[k, agents[k]] for k in ("kept", "rejected", "failed")])
        lines += _table("### By kind", ["kind:status", "count"],
                        [[k, v] for k, v in agents["by_kind_status"].items()])
        for title, key in (("Reject reasons", "reject_reasons"), ("Failure reasons", "failure_reasons")):
            if agents[key]:
                lines += _table(f"### {title}", ["reason", "count"], [[k, v] for k, v in agents[key].items()])
    lines += _table("## Cases per task", ["task", "file", "cases"],
                    [[_TASK_TITLES[t], card["files"][t], card["tasks"][t]] for t in TASKS])
    for task in TASKS:
        if card["tasks"][task]:
            lines += _matrix(task, card["coverage"][task])
    if card["extra"]:
        dumped = orjson.dumps(card["extra"], option=orjson.OPT_INDENT_2).decode()
        lines += ["## Other", "", "```json", dumped, "```", ""]
    return "\n".join(lines)


def write_data_card(
    out_dir: Path,
    stage_counts: dict[str, int],
    signal_counts: dict[str, int],
    selected: list[Candidate],
    extra: dict[str, Any],
    *,
    candidates: Iterable[Candidate] | None = None,
    model: str | None = None,
    seed: int | None = None,
    task_priority: Iterable[str] | None = None,
) -> Path:
    """Write DATA_CARD.md and data_card.json into `out_dir`; returns the markdown path.

    `candidates`: every agent candidate (kept or not) for the outcome counts. `model` and `seed` fall
    back to extra['model'] / extra['seed']."""
    per_task = {t: [c for c in selected if c.task == t] for t in TASKS}
    rest = {k: v for k, v in extra.items() if k not in ("model", "seed")}
    card: dict[str, Any] = {
        "model": model if model is not None else extra.get("model"),
        "seed": seed if seed is not None else extra.get("seed"),
        "task_priority": list(task_priority or SampleConfig().task_priority),
        "stage_counts": dict(stage_counts),
        "signal_counts": dict(sorted(signal_counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "agents": agent_outcomes(candidates) if candidates is not None else {},
        "tasks": {t: len(per_task[t]) for t in TASKS},
        "files": dict(FILES),
        "coverage": {t: _coverage(per_task[t]) for t in TASKS},
        "selected_signals": {t: dict(Counter(c.signal or "none" for c in per_task[t]).most_common())
                             for t in TASKS},
        "extra": rest,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out_dir / "data_card.json", orjson.dumps(card, option=orjson.OPT_INDENT_2))
    md = out_dir / "DATA_CARD.md"
    atomic_write_bytes(md, _markdown(card).encode())
    return md
