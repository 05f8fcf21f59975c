"""`uxbench mine report`: what a mined log says about its users' experience.

Read from a mining run's output directory:
- signal rates per scenario and per day: share of assistant turns on which each signal fired (among the
  turns where it could be computed), and the dissatisfied rate with its Wilson 95% interval. The scenario
  of a turn comes from the agents (``candidates.jsonl``: the candidate on that turn, else any candidate of
  its conversation); without the agents, or for conversations they did not take, it is "(unlabelled)".
  The day is the date of the reply's own timestamp (in the zone the log gave), "(no time)" without one;
- top failure patterns: failure dimension x signal of the kept bad candidates (all bad candidates with a
  dimension when none was kept); without the agents, the most frequent combinations of the signals that
  made a turn dissatisfied;
- recovery outcomes of the chains that start at each dissatisfied turn, with Wilson intervals.

Every rate keeps its counts (fired / replies where the signal could be computed), because the denominators
differ: a rephrase is only computable on a reply with a next user message, a thumbs-down on every reply.
Signals whose source the log does not record (no thumbs, no regenerations anywhere in it) are n/a (None),
not 0%. Text and Markdown rendering: `mining.report_text`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal

import orjson
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from uxbench.errors import DataError
from uxbench.metrics.proportions import wilson_ci
from uxbench.mining.signals import SIGNAL_NAMES

UNLABELLED = "(unlabelled)"
NO_TIME = "(no time)"
OUTCOMES = ("recovered", "failed", "user_gave_up", "unknown")
TABLE_SIGNALS = ("thumbs_down", "regenerate", "complaint", "repeat", "rephrase", "dismiss", "skim",
                 "topic_change", "thumbs_up", "praise")
"""The signals shown in the text and Markdown tables (JSON has all of them)."""


class SignalRates(BaseModel):
    key: str
    turns: int
    dissatisfied: int
    dissatisfied_rate: float | None
    dissatisfied_ci: tuple[float, float] | None
    signals: dict[str, float | None]
    """Per signal: fired / turns where it could be computed (None when it never could, or the log does not
    record its source)."""
    counts: dict[str, tuple[int, int] | None] = Field(default_factory=dict)
    """Per signal: (fired, turns where it could be computed), the rate's numerator and denominator; None as in
    `signals`."""


class Pattern(BaseModel):
    pattern: str
    count: int
    share: float


class OutcomeRow(BaseModel):
    outcome: str
    count: int
    share: float
    ci: tuple[float, float]


RECORDED_BY = {"thumbs_down": "thumbs", "thumbs_up": "thumbs", "regenerate": "regenerations",
               "copied": "copy or share events"}
"""Signals read from fields a log may not have, and what the log then lacks."""


class MiningReport(BaseModel):
    directory: str
    conversations: int
    assistant_turns: int
    dissatisfied_turns: int
    overall: SignalRates | None = None
    """Every assistant turn: the row the per-scenario and per-day tables break down."""
    not_recorded: list[str] = Field(default_factory=list)
    """Signals whose source the log does not record (none fired anywhere): n/a in every row."""
    scenarios_from: Literal["agents", "none"]
    by_scenario: list[SignalRates] = Field(default_factory=list)
    by_day: list[SignalRates] = Field(default_factory=list)
    patterns_from: Literal["candidates", "signals"]
    patterns: list[Pattern] = Field(default_factory=list)
    recovery: list[OutcomeRow] = Field(default_factory=list)
    stage_counts: dict[str, Any] = Field(default_factory=dict)


def _rates(key: str, rows: list[dict[str, Any]], not_recorded: frozenset[str] = frozenset()) -> SignalRates:
    n = len(rows)
    bad = sum(bool(r["dissatisfied"]) for r in rows)
    signals: dict[str, float | None] = {}
    counts: dict[str, tuple[int, int] | None] = {}
    for name in SIGNAL_NAMES:
        computed = [r[name] for r in rows if r[name] is not None]
        usable = bool(computed) and name not in not_recorded
        signals[name] = sum(computed) / len(computed) if usable else None
        counts[name] = (sum(computed), len(computed)) if usable else None
    return SignalRates(key=key, turns=n, dissatisfied=bad, dissatisfied_rate=bad / n if n else None,
                       dissatisfied_ci=wilson_ci(bad, n) if n else None, signals=signals, counts=counts)


def _not_recorded(rows: list[dict[str, Any]], stage_counts: dict[str, Any]) -> frozenset[str]:
    """Signals from fields the log does not have: no thumbs at all (neither up nor down), no regeneration (none
    fired and the sessions stage set none apart), no copy events. A log that records them but where nobody used
    them reads the same; the report says "not in the log" rather than a 0% that looks measured."""
    fired = {name: any(r[name] for r in rows) for name in RECORDED_BY}
    out = set()
    if not fired["thumbs_down"] and not fired["thumbs_up"]:
        out |= {"thumbs_down", "thumbs_up"}
    if not fired["regenerate"] and not (stage_counts.get("sessions") or {}).get("regenerated_replies"):
        out.add("regenerate")
    if not fired["copied"]:
        out.add("copied")
    return frozenset(out)


def _candidates(out: Path) -> list[dict[str, Any]]:
    path = out / "candidates.jsonl"
    if not path.exists():
        return []
    with path.open("rb") as handle:
        return [orjson.loads(line) for line in handle if line.strip()]


def _scenario_lookup(cands: list[dict[str, Any]]) -> tuple[dict[tuple[str, int], str], dict[str, str]]:
    by_turn: dict[tuple[str, int], str] = {}
    by_conv: dict[str, str] = {}
    for c in sorted(cands, key=lambda c: c.get("status") != "kept"):  # kept candidates first
        if c.get("scenario"):
            by_turn.setdefault((c["conversation_id"], c["turn_index"]), c["scenario"])
            by_conv.setdefault(c["conversation_id"], c["scenario"])
    return by_turn, by_conv


def _patterns(cands: list[dict[str, Any]], rows: list[dict[str, Any]], top: int) -> tuple[str, list[Pattern]]:
    bad = [c for c in cands if c.get("kind") == "bad" and c.get("failure_dimension")]
    kept = [c for c in bad if c.get("status") == "kept"]
    counts: Counter[str]
    if bad:
        source = "candidates"
        counts = Counter(f"{c['failure_dimension']} x {c.get('signal') or 'none'}" for c in (kept or bad))
    else:
        source = "signals"
        counts = Counter(r["dissatisfied_by"].replace(",", " + ") for r in rows if r["dissatisfied"])
    total = sum(counts.values())
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return source, [Pattern(pattern=p, count=n, share=n / total) for p, n in ordered]


def build_report(out_dir: str | Path, top: int = 10) -> MiningReport:
    """The report of a finished mining run (reads signals.parquet, candidates.jsonl, stage_counts.json)."""
    out = Path(out_dir)
    table_path = out / "signals.parquet"
    if not table_path.exists():
        raise DataError("no signals.parquet here; run `uxbench mine run` first", source=str(out))
    columns = ["conversation_id", "turn_index", "created_at", "dissatisfied", "dissatisfied_by",
               "recovery_outcome", *SIGNAL_NAMES]
    rows = pq.read_table(table_path, columns=columns).to_pylist()
    cands = _candidates(out)
    by_turn, by_conv = _scenario_lookup(cands)
    scenarios: dict[str, list[dict[str, Any]]] = defaultdict(list)
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cid = r["conversation_id"]
        scenarios[by_turn.get((cid, r["turn_index"])) or by_conv.get(cid) or UNLABELLED].append(r)
        days[r["created_at"][:10] if r["created_at"] else NO_TIME].append(r)
    outcomes = Counter(r["recovery_outcome"] for r in rows if r["recovery_outcome"])
    n_chains = sum(outcomes.values())
    source, patterns = _patterns(cands, rows, top)
    counts_path = out / "stage_counts.json"
    stage_counts = orjson.loads(counts_path.read_bytes()) if counts_path.exists() else {}
    absent = _not_recorded(rows, stage_counts)
    return MiningReport(
        directory=str(out), conversations=len({r["conversation_id"] for r in rows}), assistant_turns=len(rows),
        dissatisfied_turns=sum(bool(r["dissatisfied"]) for r in rows),
        overall=_rates("all replies", rows, absent), not_recorded=sorted(absent),
        scenarios_from="agents" if by_conv else "none",
        by_scenario=sorted((_rates(k, v, absent) for k, v in scenarios.items()), key=lambda s: (-s.turns, s.key)),
        by_day=[_rates(k, days[k], absent) for k in sorted(days)],
        patterns_from=source,  # type: ignore[arg-type]  # one of the two literals
        patterns=patterns,
        recovery=[OutcomeRow(outcome=o, count=outcomes[o], share=outcomes[o] / n_chains if n_chains else 0.0,
                             ci=wilson_ci(outcomes[o], n_chains)) for o in OUTCOMES],
        stage_counts=stage_counts,
    )
