"""The signal stage with the learned follow-up classifier (`uxbench mine run --signals learned:DIR`).

The rules run first, unchanged (every signal and its evidence stays in the table); then, on every reply that
has a next user message, the classifier's probability decides `dissatisfied` instead of the text rules. The
explicit signals (thumbs-down, regeneration) still make a reply dissatisfied on their own. `dissatisfied_by`
names `learned`, the score is the classifier's probability (when the table has a score column), `satisfied`
and the recovery chains are recomputed from the new verdicts, and so are the stage's counts. Same function for
the in-process engine and Ray: a pure map over a batch.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import pyarrow as pa

from uxbench.errors import ConfigError
from uxbench.mining.pipeline.stages import (
    SIGNALS_SCHEMA,
    StageFn,
    _dumps,
    _signal_counts,
    load_session,
    load_signals,
)
from uxbench.mining.signals.learned import MODEL_FILE, FollowupClassifier, Triple
from uxbench.mining.signals.recovery import attach_recovery
from uxbench.mining.signals.results import TurnSignals

PREFIX = "learned:"
EXPLICIT = ("thumbs_down", "regenerate")


def parse_signals_option(value: str) -> str | None:
    """`rules` -> None; `learned:DIR` -> DIR (checked: it holds a readable classifier)."""
    if value == "rules":
        return None
    if value.startswith(PREFIX) and value[len(PREFIX):]:
        from uxbench.extras import require

        require("learn", f"--signals {value}")
        directory = value[len(PREFIX):]
        FollowupClassifier.load(directory)  # a clear error now, not in a worker
        return directory
    raise ConfigError(f"--signals takes 'rules' or 'learned:DIR' (a directory written by `uxbench mine "
                      f"train-signals`), not {value!r}")


def model_digest(directory: str) -> str:
    """The classifier's identity for the stage key: a retrained model recomputes the stage."""
    try:
        return hashlib.sha256((Path(directory) / MODEL_FILE).read_bytes()).hexdigest()[:24]
    except OSError as err:
        raise ConfigError(f"cannot read the learned classifier in {directory}: {err}") from None


@lru_cache(maxsize=2)
def _classifier(directory: str, digest: str) -> FollowupClassifier:
    return FollowupClassifier.load(directory)


def _apply(signals: list[TurnSignals], texts: dict[int, str], clf: FollowupClassifier) -> None:
    asked = [ts for ts in signals if ts.next_user_turn is not None]
    triples = [Triple(texts.get(ts.prev_user_turn) if ts.prev_user_turn is not None else None,
                      texts.get(ts.turn_index, ""), texts.get(ts.next_user_turn, "")) for ts in asked
               if ts.next_user_turn is not None]
    probs = dict(zip((ts.turn_index for ts in asked), clf.predict_proba(triples), strict=True))
    positive = clf.config.positive_signals
    for ts in signals:
        explicit = [n for n in EXPLICIT if ts.signal(n).fired]
        p = probs.get(ts.turn_index)
        learned = p is not None and p >= clf.threshold
        ts.dissatisfied = bool(explicit) or learned
        ts.dissatisfied_by = explicit + (["learned"] if learned else [])
        if p is not None and "dissatisfied_score" in TurnSignals.model_fields:
            before = float(getattr(ts, "dissatisfied_score", 0.0)) if explicit else 0.0
            setattr(ts, "dissatisfied_score", max(p, before))  # noqa: B010  # a field of the newer table only
        ts.satisfied_by = [] if ts.dissatisfied else [n for n in positive if ts.signal(n).fired]
        ts.satisfied = bool(ts.satisfied_by)
        ts.recovery = None
    attach_recovery(signals, clf.config.recovery_max_turns)


def learned_signals_map(table: pa.Table, rules: StageFn, model_dir: str, digest: str) -> pa.Table:
    """`rules` (the signal stage's map) on the batch, then the classifier's verdicts on its rows."""
    clf = _classifier(model_dir, digest)
    out = rules(table).to_pylist()
    for row in out:
        if row["session"] is None:
            continue
        session = load_session(row["session"], row["conversation_id"])
        signals = load_signals(row["signals"])
        texts = {t.turn_index: t.content for t in session.turns}
        _apply(signals, texts, clf)
        times = {t.turn_index: t.created_at.isoformat() if t.created_at else None
                 for t in session.turns if t.role == "assistant"}
        row["signals"] = _dumps([ts.json_dict() for ts in signals])
        row["turn_rows"] = [{**ts.row(), "created_at": times.get(ts.turn_index)} for ts in signals]
        row["counts"] = _dumps(_signal_counts(session, signals))
    return pa.Table.from_pylist(out, schema=SIGNALS_SCHEMA)
