"""Recovery strategies in the Task 3 summary: how often each of the six opens a recovery, and the Recovery
Rate of each, per judge, for the rules and for every `--strategy-model` that labelled the run.

The rules' label is stored on each generation record (`extra.strategy`, `extra.strategy_cue`) when the reply
is generated; records written before that are labelled here from their text. Model labels are rows of the
run's `scores` table under a `strategy-...` key (`orchestrate.strategy_step`): a label, an unparseable answer
(no label), or a failed call. Every generated, non-empty reply is counted in every classifier's distribution:
model classifiers add `unparseable` and `not_labelled` (failed or not yet labelled) so the shares add to one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from uxbench.metrics.strategies import distribution, rate_by_group
from uxbench.runs.records import SampleRecord
from uxbench.scoring.strategies import Strategy, classify_opening
from uxbench.tasks.base import ScoreLookup

ORDER: tuple[Strategy, ...] = ("apology", "agreement", "error_diagnosis", "humor", "direct_fix", "clarification")
"""The method's order (UXBENCH_METHOD 4.5)."""
UNPARSEABLE = "unparseable"
NOT_LABELLED = "not_labelled"
RULES = "rules"


def rule_label(reply: str) -> dict[str, str | None]:
    """The rules' strategy of a reply and the cue that decided it (None: no cue, the fallback)."""
    strategy, cue = classify_opening(reply)
    return {"strategy": strategy, "strategy_cue": cue}


class ReplyTap:
    """Passes records through (to the generic summary) while noting each non-empty reply's rules label."""

    def __init__(self, records: Iterable[SampleRecord]) -> None:
        self._records = records
        self.rules: dict[str, str] = {}
        """sample id -> the rules' strategy, for every generated, non-empty reply."""

    def __iter__(self) -> Iterator[SampleRecord]:
        for record in self._records:
            reply = record.raw_output or ""
            if record.status == "ok" and reply.strip():
                stored = record.extra.get("strategy")
                self.rules[record.sample_id] = stored if stored in ORDER else str(rule_label(reply)["strategy"])
            yield record


def _model_labels(replies: Iterable[str], scores: Iterable[Any]) -> dict[str, str]:
    wanted = set(replies)
    labels = dict.fromkeys(wanted, NOT_LABELLED)
    for s in scores:
        if s.sample_id in wanted and s.status == "ok":
            labels[s.sample_id] = s.label if s.label in ORDER else UNPARSEABLE
    return labels


def _block(method: str, info: dict[str, Any], labels: dict[str, str], judges: ScoreLookup,
           judge_labels: dict[str, dict[str, str | None]]) -> dict[str, Any]:
    categories = list(ORDER) + ([UNPARSEABLE, NOT_LABELLED] if method == "model" else [])
    values = list(labels.values())
    return {
        "method": method,
        "spec": info.get("spec"),
        "settings": info.get("settings"),
        "n_replies": len(values),
        "n_unparseable": values.count(UNPARSEABLE),
        "n_not_labelled": values.count(NOT_LABELLED),
        "distribution": distribution(values, categories),
        "recovery_rate": {key: rate_by_group(labels, judge_labels[key], categories) for key in judges},
    }


def strategy_summary(tap: ReplyTap, judges: ScoreLookup, classifiers: ScoreLookup) -> dict[str, Any]:
    """The `recovery_strategies` block of a Task 3 summary (read `tap` after the records were consumed)."""
    judge_labels = {
        key: {s.sample_id: s.label for s in scores if s.status == "ok" and s.sample_id in tap.rules}
        for key, scores in judges.items()
    }
    blocks = {RULES: _block("rules", {"spec": None, "settings": {"rules": "scoring/strategies.py"}},
                            tap.rules, judges, judge_labels)}
    for key, scores in classifiers.items():
        blocks[key] = _block("model", scores.info, _model_labels(tap.rules, scores), judges, judge_labels)
    return {"strategies": list(ORDER), "n_replies": len(tap.rules), "classifiers": blocks}
