"""The per-turn result of the signal stage: one `TurnSignals` per assistant turn, and its flat table row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from uxbench.mining.signals.config import SIGNAL_NAMES

RecoveryOutcome = Literal["recovered", "failed", "user_gave_up", "unknown"]


class SignalValue(BaseModel):
    """One signal on one assistant turn (frozen: equal values are shared between turns)."""

    model_config = ConfigDict(frozen=True)

    fired: bool | None = False
    """None when the signal could not be computed (no timestamps, no follow-up message, ...)."""
    evidence: str | None = None
    """What made it fire (a snippet, a similarity, a gap), or why it was not computed."""
    score: float | None = 0.0
    """How sure the detector is, in [0, 1]; kept (with its evidence) when below the firing level; None when
    not computed."""


class RecoveryChain(BaseModel):
    """What happened after a dissatisfied reply (one chain per dissatisfied assistant turn)."""

    outcome: RecoveryOutcome
    """recovered: a later reply got a reaction that was not dissatisfied; failed: dissatisfaction went on
    to the end of the chain; user_gave_up: a give-up reply, or the conversation ended right after the failure;
    unknown: the conversation ended right after a retry, so whether it worked is not known."""
    turns: list[int] = Field(default_factory=list)
    """turn_index of every message the chain walked, in order (the failed reply first)."""
    actions: list[str] = Field(default_factory=list)
    """One per entry of `turns`: failure, retry, complain, dismiss, repeat, rephrase, followup, satisfied."""
    recovered_at: int | None = None
    """turn_index of the reply that recovered, when outcome is recovered."""


class TurnSignals(BaseModel):
    """Every signal on one assistant turn, with its evidence, and the verdicts they add up to."""

    conversation_id: str
    turn_index: int
    """turn_index of the assistant turn."""
    prev_user_turn: int | None = None
    """turn_index of the user message this reply answered."""
    next_user_turn: int | None = None
    """turn_index of the user message right after it, if any."""

    thumbs_down: SignalValue = Field(default_factory=SignalValue)
    thumbs_up: SignalValue = Field(default_factory=SignalValue)
    regenerate: SignalValue = Field(default_factory=SignalValue)
    """The user asked for another reply at this turn (replaced replies are in Session.regenerated)."""
    skim: SignalValue = Field(default_factory=SignalValue)
    complaint: SignalValue = Field(default_factory=SignalValue)
    dismiss: SignalValue = Field(default_factory=SignalValue)
    repeat: SignalValue = Field(default_factory=SignalValue)
    rephrase: SignalValue = Field(default_factory=SignalValue)
    continuation: SignalValue = Field(default_factory=SignalValue)
    """The next message goes on with the task ("continue", "now the same for X"): neutral."""
    topic_change: SignalValue = Field(default_factory=SignalValue)
    conversation_end: SignalValue = Field(default_factory=SignalValue)
    praise: SignalValue = Field(default_factory=SignalValue)
    builds_on: SignalValue = Field(default_factory=SignalValue)
    """The next message builds on the reply (refers back to it or picks up its content)."""
    copied: SignalValue = Field(default_factory=SignalValue)

    similarity: float | None = None
    """Similarity of the next user message to the previous one."""
    gap_s: float | None = None
    """Seconds from the reply to the next user message."""
    seconds_per_unit: float | None = None
    """gap_s per reading unit of the reply (skim)."""
    followup_label: str | None = None
    """The rules' label of the next message: repeat, rephrase, complaint, dismiss, topic_change, continue
    or other."""

    dissatisfied_score: float = 0.0
    """In [0, 1]: the strong signals' scores and the weak signals' share combined as independent evidence
    (1 - product of (1 - score)); see `detect`."""
    dissatisfied: bool = False
    """`dissatisfied_score >= SignalConfig.dissatisfied_threshold`."""
    dissatisfied_by: list[str] = Field(default_factory=list)
    satisfied: bool = False
    """A positive signal fired and the turn is not dissatisfied."""
    satisfied_by: list[str] = Field(default_factory=list)
    recovery: RecoveryChain | None = None
    """Set on dissatisfied turns."""

    def json_dict(self) -> dict[str, Any]:
        """``model_dump(mode="json")``, without pydantic's serializer: the signal stage writes one per reply
        (about 5% of the whole mining run went into these dumps). Equal to it, value for value (tested).
        The fields are read from the instance dicts, not by attribute: a copy of a `SignalValue`'s dict (its
        three fields, JSON values all) costs a fifth of a dict built from its attributes, ~14 per reply."""
        fields = self.__dict__
        out = {name: fields[name] for name in _SCALAR_FIELDS}
        for name in SIGNAL_NAMES:
            out[name] = fields[name].__dict__.copy()
        out["dissatisfied_by"] = list(self.dissatisfied_by)
        out["satisfied_by"] = list(self.satisfied_by)
        out["recovery"] = None if self.recovery is None else self.recovery.model_dump(mode="json")
        return out

    def signal(self, name: str) -> SignalValue:
        value = getattr(self, name)
        assert isinstance(value, SignalValue)
        return value

    def row(self) -> dict[str, Any]:
        """A flat row: ids, `<signal>` and `<signal>_evidence` columns, numbers, verdicts, recovery."""
        out: dict[str, Any] = {
            "conversation_id": self.conversation_id,
            "turn_index": self.turn_index,
            "prev_user_turn": self.prev_user_turn,
            "next_user_turn": self.next_user_turn,
        }
        for name, evidence, score in _ROW_COLUMNS:
            value = getattr(self, name)
            out[name] = value.fired
            out[evidence] = value.evidence
            out[score] = value.score
        out.update(
            similarity=self.similarity,
            gap_s=self.gap_s,
            seconds_per_unit=self.seconds_per_unit,
            followup_label=self.followup_label,
            dissatisfied_score=self.dissatisfied_score,
            dissatisfied=self.dissatisfied,
            dissatisfied_by=",".join(self.dissatisfied_by),
            satisfied=self.satisfied,
            satisfied_by=",".join(self.satisfied_by),
            recovery_outcome=self.recovery.outcome if self.recovery else None,
            recovery_turns=",".join(map(str, self.recovery.turns)) if self.recovery else None,
            recovery_actions=",".join(self.recovery.actions) if self.recovery else None,
        )
        return out


def made(fields: dict[str, Any]) -> TurnSignals:
    """A `TurnSignals` from every field but `recovery` (left None), each already of its type: what
    ``model_construct(**fields)`` makes (same values, field order and set fields; tested), without its alias and
    default lookups per field, which were a tenth of the signal stage."""
    return adopt({name: fields[name] for name in _GIVEN})


def adopt(fields: dict[str, Any]) -> TurnSignals:
    """`made`, for `fields` already in the model's field order (every field but `recovery`): the dict itself
    becomes the instance's (`recovery` is added to it), without a copy."""
    out = TurnSignals.__new__(TurnSignals)
    fields["recovery"] = None
    object.__setattr__(out, "__dict__", fields)
    object.__setattr__(out, "__pydantic_fields_set__", _GIVEN_SET.copy())
    object.__setattr__(out, "__pydantic_extra__", None)
    object.__setattr__(out, "__pydantic_private__", None)
    return out


_GIVEN = tuple(n for n in TurnSignals.model_fields if n != "recovery")
_GIVEN_SET = set(_GIVEN)
_ROW_COLUMNS = tuple((name, f"{name}_evidence", f"{name}_score") for name in SIGNAL_NAMES)
_LISTS = ("dissatisfied_by", "satisfied_by", "recovery")
_SCALAR_FIELDS = tuple(n for n in TurnSignals.model_fields if n not in SIGNAL_NAMES and n not in _LISTS)
assert set(SIGNAL_NAMES) <= set(TurnSignals.model_fields) and set(_LISTS) <= set(TurnSignals.model_fields)



ROW_NAMES = ("conversation_id", "turn_index", "created_at", "prev_user_turn", "next_user_turn",
             *(column for columns in _ROW_COLUMNS for column in columns),
             "similarity", "gap_s", "seconds_per_unit", "followup_label", "dissatisfied_score", "dissatisfied",
             "dissatisfied_by", "satisfied", "satisfied_by", "recovery_outcome", "recovery_turns", "recovery_actions")
"""The columns of `signal_outputs`' row tuples: `TurnSignals.row`'s, with the reply's ``created_at`` third."""
_JSON_KEYS = tuple(sorted(TurnSignals.model_fields))
_JSON_TEMPLATE = dict.fromkeys(_JSON_KEYS)
"""`json_dict`'s keys, sorted: a copy filled in place keeps this order, so the JSON needs no sorting."""
_PLAIN_KEYS = tuple(n for n in _JSON_KEYS if n not in SIGNAL_NAMES and n != "recovery")
_PLAIN = itemgetter(*_PLAIN_KEYS)
_SIGNALS = itemgetter(*SIGNAL_NAMES)
_HEAD = itemgetter("conversation_id", "turn_index")
_NEIGHBOURS = itemgetter("prev_user_turn", "next_user_turn")
_TAIL = itemgetter("similarity", "gap_s", "seconds_per_unit", "followup_label", "dissatisfied_score", "dissatisfied")
_VALUE = itemgetter("fired", "evidence", "score")
_VALUES: dict[int, tuple[SignalValue, orjson.Fragment, Any, Any, Any]] = {}
"""By id: a `SignalValue`, its JSON (keys sorted) and its fired, evidence and score, kept with the value itself (so
its id is not reused while it is here). The detectors share equal values: the pool's 676 k are 16 k objects."""
_MAX_VALUES = 1 << 16


def _value_entry(value: SignalValue) -> tuple[SignalValue, orjson.Fragment, Any, Any, Any]:
    if len(_VALUES) >= _MAX_VALUES:
        _VALUES.clear()
    fields = value.__dict__
    entry = _VALUES[id(value)] = (value, orjson.Fragment(orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)),
                                  *_VALUE(fields))
    return entry


def signal_outputs(signals: Sequence[TurnSignals],
                   times: Mapping[int, str | None]) -> tuple[str, list[tuple[Any, ...]]]:
    """What the signal stage stores of a conversation's replies, in one pass: the JSON text of their `json_dict`
    (``orjson.dumps([...], option=OPT_SORT_KEYS)``, the same bytes; tested), and each reply's row as a tuple of
    the `ROW_NAMES` columns (`row`'s values, ``created_at`` from ``times`` by turn_index). Each shared
    `SignalValue` is dumped and read once (`_VALUES`), not 14 times per reply into two dicts."""
    dicts: list[dict[str, Any]] = []
    rows: list[tuple[Any, ...]] = []
    known = _VALUES.get
    for ts in signals:
        fields = ts.__dict__
        entries = [known(id(value)) or _value_entry(value) for value in _SIGNALS(fields)]
        out = _JSON_TEMPLATE.copy()  # keys already sorted: filled in place, in order
        out.update(zip(_PLAIN_KEYS, _PLAIN(fields), strict=True))
        out.update(zip(SIGNAL_NAMES, [entry[1] for entry in entries], strict=True))
        recovery = fields["recovery"]
        if recovery is not None:
            out["recovery"] = orjson.Fragment(orjson.dumps(recovery.model_dump(mode="json"),
                                                           option=orjson.OPT_SORT_KEYS))
        dicts.append(out)
        head = _HEAD(fields)
        rows.append((
            *head, times.get(head[1]), *_NEIGHBOURS(fields), *[x for entry in entries for x in entry[2:]],
            *_TAIL(fields), ",".join(fields["dissatisfied_by"]), fields["satisfied"], ",".join(fields["satisfied_by"]),
            *((None, None, None) if recovery is None else
              (recovery.outcome, ",".join(map(str, recovery.turns)), ",".join(recovery.actions))),
        ))
    return orjson.dumps(dicts).decode("utf-8"), rows
