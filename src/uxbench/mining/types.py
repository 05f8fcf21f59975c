"""Records that flow between mining stages. Stages are pure functions over batches of these."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

Feedback = Literal["like", "dislike"]


class Turn(BaseModel):
    """One message of a raw log, in the canonical shape (one JSON object per turn on input)."""

    conversation_id: str
    turn_index: int
    """Order of the turn in its conversation (user and assistant messages both count)."""
    role: Literal["user", "assistant"]
    content: str
    created_at: datetime | None = None
    """Timezone-aware when the source gives a zone; naive timestamps are read as UTC."""
    feedback: Feedback | None = None
    """Explicit thumbs on an assistant turn."""
    regeneration_index: int = 0
    """0 for the first reply; n for the n-th regeneration of the same turn."""
    message_id: str | None = None
    """Source message id, used to drop duplicate rows."""
    counters: dict[str, int] = Field(default_factory=dict)
    """Engagement counters when the product logs them: copy, share, regenerate_clicks, stop_generate."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free metadata carried through (never used for signals unless documented)."""


class Session(BaseModel):
    """A conversation in order, regenerations set apart."""

    conversation_id: str
    turns: list[Turn]
    """The conversation as the user finally saw it: for a regenerated reply, the last regeneration."""
    regenerated: list[Turn] = Field(default_factory=list)
    """Replies the user replaced with a regeneration (each is a negative implicit signal, not a repeat)."""
    has_timestamps: bool = False
    """True when every turn has created_at (timing signals need it)."""
    meta: dict[str, Any] = Field(default_factory=dict)
