"""What the agents read: the dialogue with turn ids and signal tags, and a compact signal summary."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping

from uxbench.mining.records import MinedSession
from uxbench.mining.signals.config import SIGNAL_NAMES
from uxbench.mining.signals.results import TurnSignals
from uxbench.mining.types import Turn

_EVIDENCE_CHARS = 160
_MIN_TURN_CHARS = 200


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the cut marked with how much was left out."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit]} …[{len(text) - limit} more characters]"


def fired_signals(ts: TurnSignals) -> list[tuple[str, str | None]]:
    """(signal name, evidence) of every signal that fired on the turn, in the stage's order."""
    out: list[tuple[str, str | None]] = []
    for name in SIGNAL_NAMES:
        value = ts.signal(name)
        if value.fired:
            out.append((name, value.evidence))
    return out


def _time(turn: Turn) -> str:
    return turn.created_at.strftime("%Y-%m-%d %H:%M:%S") if turn.created_at else ""


def _signal_line(ts: TurnSignals) -> str:
    tags = [
        f"{name} ({clip(ev, _EVIDENCE_CHARS)})" if ev else name for name, ev in fired_signals(ts)
    ]
    line = "    signals: " + ("; ".join(tags) if tags else "none")
    if ts.recovery is not None:
        line += f"\n    recovery after this reply: {ts.recovery.outcome}"
    return line


def _lines(
    turns: Iterable[Turn], by_turn: Mapping[int, TurnSignals], marks: Mapping[int, str], limit: int
) -> list[str]:
    out = []
    for turn in turns:
        head = f"[{turn.turn_index}] {turn.role}"
        when = _time(turn)
        if when:
            head += f" · {when}"
        if turn.turn_index in marks:
            head += f"  <- {marks[turn.turn_index]}"
        out.append(head)
        out.append(clip(turn.content, limit) or "(empty)")
        ts = by_turn.get(turn.turn_index)
        if turn.role == "assistant" and ts is not None:
            out.append(_signal_line(ts))
    return out


def render_dialogue(
    item: MinedSession, marks: Mapping[int, str], *, max_chars_per_turn: int, max_total_chars: int
) -> str:
    """The numbered dialogue; `marks` labels chosen turns (DISSATISFIED, LIKED). Long dialogues get a
    smaller per-turn limit until they fit (never below 200 characters a turn)."""
    by_turn = {ts.turn_index: ts for ts in item.signals}
    limit = max_chars_per_turn
    while True:
        text = "\n".join(_lines(item.session.turns, by_turn, marks, limit))
        if len(text) <= max_total_chars or limit <= _MIN_TURN_CHARS:
            return text
        limit = max(_MIN_TURN_CHARS, limit // 2)


def signal_summary(item: MinedSession) -> str:
    """A compact JSON summary of the session's signals for the miner."""
    counts: Counter[str] = Counter()
    for ts in item.signals:
        counts.update(name for name, _ in fired_signals(ts))
    summary = {
        "turns": len(item.session.turns),
        "assistant_turns": len(item.signals),
        "timestamps": item.session.has_timestamps,
        "regenerated_replies": len(item.session.regenerated),
        "dissatisfied": [
            {
                "turn": ts.turn_index,
                "by": ts.dissatisfied_by,
                "recovery": ts.recovery.outcome if ts.recovery else None,
            }
            for ts in item.signals
            if ts.dissatisfied
        ],
        "liked": [{"turn": ts.turn_index, "by": ts.satisfied_by} for ts in item.signals if ts.satisfied],
        "signal_counts": dict(sorted(counts.items())),
    }
    return json.dumps(summary, ensure_ascii=False)


def turn_text(item: MinedSession, turn_index: int | None) -> str:
    """The content of a turn, or '' when there is none."""
    if turn_index is None:
        return ""
    for turn in item.session.turns:
        if turn.turn_index == turn_index:
            return turn.content
    return ""
