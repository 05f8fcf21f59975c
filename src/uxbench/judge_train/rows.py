"""A training row of a judge of one's own and the report of what was read: apart from `data`, which reads Task 1
files and mining outputs (`mined`), so that the two readers share them without importing each other."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from uxbench.data.schema import Message

Label = Literal["good", "bad"]


@dataclass(frozen=True)
class TrainRow:
    """One labelled reply in its context."""

    id: str
    conversation: str
    history: tuple[Message, ...]
    query: str
    response: str
    label: Label
    label_source: str
    """Where the label came from: `file:PATH` (+ `:signal_type`), `thumbs_down`, `signals:complaint` ..."""
    timestamp: datetime | None = None
    lang: Literal["zh", "en"] | None = None

    @property
    def text(self) -> str:
        """The row's whole text (history, query, reply), for near-duplicate checks."""
        return "\n".join([*(m.content for m in self.history), self.query, self.response])


@dataclass
class LoadReport:
    """What was read from each input and what was left out, with reasons."""

    rows_by_source: Counter[str] = field(default_factory=Counter)
    left_out: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"rows_by_label_source": dict(self.rows_by_source.most_common()),
                "left_out": dict(self.left_out.most_common())}
