"""The mining funnel from `stage_counts.json`: one panel per unit (conversations, assistant replies, cases), each
step in the order the pipeline runs it and each a subset of the step before, so no bar ever goes back up and no
axis mixes rows with conversations. What is not a filter (the log rows read, the conversations with a dissatisfied
reply) is said in the panel's note instead of being drawn as a step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from uxbench.errors import UxbenchError


@dataclass
class FunnelPanel:
    """The steps of one unit, in pipeline order: (label, count), each at most the one before."""

    unit: str
    title: str
    steps: list[tuple[str, int]]
    note: str = ""


@dataclass
class FunnelChart:
    title: str
    panels: list[FunnelPanel] = field(default_factory=list)


_PANELS: tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...] = (
    ("conversations", "Conversations", (
        ("sessions", "sessions", "grouped from the log"),
        ("gate", "passed", "past the safety gate"),
        ("prefilter", "kept", "kept by the prefilter"),
        ("dedup", "kept", "not near-duplicates"),
    )),
    ("replies", "Assistant replies in the kept conversations", (
        ("signals", "assistant_turns", "assistant replies"),
        ("signals", "dissatisfied_turns", "met with dissatisfaction"),
    )),
    ("cases", "Cases", (
        ("agents", "candidates", "candidates proposed by the agents"),
        ("agents", "kept", "candidates kept by the judge and QA"),
        ("cases", "selected", "cases selected and exported"),
    )),
)
"""(unit, title, steps): each step is (stage, count, label); stages a run did not reach are left out."""


def _count(counts: dict[str, Any], stage: str, key: str) -> int | None:
    block = counts.get(stage)
    if not isinstance(block, dict):
        return None
    if key == "passed":
        value = block.get("checked", 0) - block.get("gated", 0)
    elif stage == "agents" and key == "kept":
        value = sum(v for k, v in block.items() if k.endswith("_kept"))
    else:
        value = block.get(key)
    return None if value is None else int(value)


def _note(unit: str, counts: dict[str, Any]) -> str:
    ingest = counts.get("ingest") or {}
    signals = counts.get("signals") or {}
    if unit == "conversations" and ingest.get("rows") is not None:
        invalid = ingest.get("invalid_rows") or 0
        return f"from {ingest['rows']:,} log rows" + (f" ({invalid:,} invalid, left out)" if invalid else "")
    if unit == "replies" and signals.get("sessions_with_dissatisfied") is not None:
        return (f"in {signals['sessions_with_dissatisfied']:,} of {signals.get('sessions', 0):,} conversations; "
                "counted before near-duplicates are dropped")
    return ""


def funnel_panels(stage_counts: dict[str, Any]) -> list[FunnelPanel]:
    """The panels of the steps the run reached (a panel with no step is left out)."""
    panels = []
    for unit, title, steps in _PANELS:
        found = [(label, n) for stage, key, label in steps if (n := _count(stage_counts, stage, key)) is not None]
        if found:
            panels.append(FunnelPanel(unit=unit, title=title, steps=found, note=_note(unit, stage_counts)))
    return panels


def funnel(stage_counts: dict[str, Any]) -> FunnelChart:
    """The funnel chart `uxbench plot --kind funnel` draws and the view shows."""
    panels = funnel_panels(stage_counts)
    if not panels:
        raise UxbenchError("stage_counts.json holds no stage counts.")
    return FunnelChart(title="Mining funnel: what each stage kept, one unit per panel", panels=panels)
