"""Records that cross the boundary between the deterministic stages and the LLM agents."""

from __future__ import annotations

from pydantic import BaseModel, Field

from uxbench.mining.signals.results import TurnSignals
from uxbench.mining.types import Session


class MinedSession(BaseModel):
    """A de-identified, gated, prefiltered session with its per-turn signals: the agents' input."""

    session: Session
    signals: list[TurnSignals] = Field(default_factory=list)
    """One entry per assistant turn of `session.turns`."""
    duplicate_of: str | None = None
    """conversation_id of the earlier near-duplicate, when the dedup stage found one (such sessions are
    kept for signal statistics but not sent to the agents)."""

    @property
    def conversation_id(self) -> str:
        return self.session.conversation_id

    @property
    def n_dissatisfied(self) -> int:
        return sum(1 for s in self.signals if s.dissatisfied)
