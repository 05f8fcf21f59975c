"""Checking the miner's answer: schema, taxonomy keys, and turn ids against the session and its signals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from uxbench.data.taxonomy import map_failure_dimension, map_scenario, map_success_dimension
from uxbench.mining.agents.jsonout import extract_json
from uxbench.mining.agents.models import BAD_SIGNALS, CaseKind
from uxbench.mining.records import MinedSession
from uxbench.mining.signals.config import SIGNAL_NAMES
from uxbench.mining.signals.results import TurnSignals

# Names a model may use for a signal (the released signal-type vocabulary and near spellings).
SIGNAL_ALIASES: dict[str, str] = {
    "dislike": "thumbs_down", "thumbsdown": "thumbs_down", "unlike": "thumbs_down",
    "like": "thumbs_up", "thumbsup": "thumbs_up",
    "explicit_complaint": "complaint", "repeat_query": "repeat", "rephrase_query": "rephrase",
    "short_dismiss": "dismiss", "skip_read": "skim", "abandon": "topic_change", "no_followup": "conversation_end",
    "explicit_praise": "praise", "thanks": "praise", "deep_dive": "builds_on", "follow_up": "builds_on",
    "regenerated": "regenerate", "copy": "copied",
}


class _CaseOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn_index: int
    query_turn_index: int
    scenario: str
    signal: str
    explanation: str
    failure_dimension: str | None = None
    success_dimension: str | None = None


@dataclass(frozen=True)
class Proposal:
    """One validated miner case (keys, not names)."""

    turn_index: int
    query_turn_index: int
    dimension: str
    scenario: str
    signal: str
    explanation: str


def signal_name(raw: str) -> str | None:
    """The signal-stage name for what a model wrote."""
    norm = raw.strip().lower().replace("-", "_").replace(" ", "_")
    if norm in SIGNAL_NAMES:
        return norm
    return SIGNAL_ALIASES.get(norm, SIGNAL_ALIASES.get(norm.replace("_", "")))


def query_block(item: MinedSession, turn_index: int) -> list[int]:
    """turn_index of the user turns right before assistant turn `turn_index` (no assistant turn between)."""
    turns = item.session.turns
    pos = next((p for p, t in enumerate(turns) if t.turn_index == turn_index), None)
    out: list[int] = []
    if pos is None:
        return out
    for t in reversed(turns[:pos]):
        if t.role != "user":
            break
        out.append(t.turn_index)
    return out


def is_good_turn(ts: TurnSignals, good_signals: tuple[str, ...]) -> bool:
    """A liked reply: not dissatisfied, and one of the good-case signals fired."""
    return not ts.dissatisfied and any(ts.signal(s).fired for s in good_signals)


def _check_case(
    i: int, case: _CaseOut, item: MinedSession, kind: CaseKind, by_turn: dict[int, TurnSignals],
    allowed: tuple[str, ...], require_dissatisfied: bool,
) -> tuple[Proposal | None, list[str]]:
    where = f"cases[{i}]"
    problems: list[str] = []
    ts = by_turn.get(case.turn_index)
    if ts is None:
        return None, [f"{where}: turn_index {case.turn_index} is not an assistant turn of the dialogue"]
    if kind == "bad" and require_dissatisfied and not ts.dissatisfied:
        problems.append(f"{where}: turn {case.turn_index} is not marked DISSATISFIED")
    if kind == "good" and not is_good_turn(ts, allowed):
        problems.append(f"{where}: turn {case.turn_index} is not marked LIKED")
    block = query_block(item, case.turn_index)
    if case.query_turn_index not in block:
        problems.append(
            f"{where}: query_turn_index {case.query_turn_index} is not the user turn that reply "
            f"{case.turn_index} answered ({block[0] if block else 'none'})"
        )
    field = "failure_dimension" if kind == "bad" else "success_dimension"
    raw_dim = case.failure_dimension if kind == "bad" else case.success_dimension
    mapper = map_failure_dimension if kind == "bad" else map_success_dimension
    dim = mapper(raw_dim)
    if dim is None:
        problems.append(f"{where}: {field} {raw_dim!r} is not one of the listed keys")
    scenario = map_scenario(case.scenario)
    if scenario is None:
        problems.append(f"{where}: scenario {case.scenario!r} is not one of the listed keys")
    sig = signal_name(case.signal)
    fired = [name for name in allowed if ts.signal(name).fired]
    if sig is None or sig not in fired:
        problems.append(
            f"{where}: signal {case.signal!r} is not among the signals listed under turn "
            f"{case.turn_index} ({', '.join(fired) or 'none'})"
        )
    if not case.explanation.strip():
        problems.append(f"{where}: explanation is empty")
    if problems or dim is None or scenario is None or sig is None or not block:
        return None, problems
    return Proposal(case.turn_index, block[0], dim, scenario, sig, case.explanation.strip()), []


def parse_proposals(
    text: str, item: MinedSession, kind: CaseKind, *, good_signals: tuple[str, ...],
    require_dissatisfied: bool, max_cases: int,
) -> tuple[list[Proposal] | None, list[str]]:
    """The miner's cases, or the problems that make the answer unusable (any invalid case does)."""
    obj = extract_json(text, "cases")
    if obj is None:
        return None, ['no JSON object with a "cases" list was found']
    raw_cases: Any = obj["cases"]
    if not isinstance(raw_cases, list):
        return None, ['"cases" must be a list']
    by_turn = {ts.turn_index: ts for ts in item.signals}
    allowed = BAD_SIGNALS if kind == "bad" else good_signals
    out: list[Proposal] = []
    problems: list[str] = []
    seen: set[int] = set()
    for i, raw in enumerate(raw_cases):
        try:
            case = _CaseOut.model_validate(raw)
        except ValidationError as err:
            e = err.errors()[0]
            loc = ".".join(map(str, e.get("loc", ()))) or "case"
            problems.append(f"cases[{i}].{loc}: {e.get('msg', 'invalid')}")
            continue
        proposal, found = _check_case(i, case, item, kind, by_turn, allowed, require_dissatisfied)
        problems.extend(found)
        if proposal is not None and proposal.turn_index not in seen:
            seen.add(proposal.turn_index)
            out.append(proposal)
    if problems:
        return None, problems
    return out[:max_cases], []
