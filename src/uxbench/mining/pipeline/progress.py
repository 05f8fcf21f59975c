"""Progress of the stages that ask a model: how many items are done, of how many, at what concurrency.

The pipeline calls a `StageTick` after every finished item (a follow-up, a session); the CLI renders the
events as a progress bar with an ETA (`uxbench.cli.mine_progress`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class StageProgress:
    stage: str
    """The stage's directory name (``07-agents``)."""
    unit: str
    """What is counted (``follow-ups``, ``sessions``, ``replies``)."""
    done: int
    total: int
    concurrency: int | None = None
    """The model's current concurrency limit (it adapts to the server)."""
    detail: str | None = None
    """What happens inside the items (the agents stage: model calls done, failed and in flight, by agent)."""


StageTick = Callable[[StageProgress], None]
