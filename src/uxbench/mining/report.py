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
    """Per signal: fired / turns where it could be computed (None when it never could)."""


class Pattern(BaseModel):
    pattern: str
    count: int
    share: float


class OutcomeRow(BaseModel):
    outcome: str
    count: int
    share: float
    ci: tuple[float, float]


class MiningReport(BaseModel):
    directory: str
    conversations: int
    assistant_turns: int
    dissatisfied_turns: int
    scenarios_from: Literal["agents", "none"]
    by_scenario: list[SignalRates] = Field(default_factory=list)
    by_day: list[SignalRates] = Field(default_factory=list)
    patterns_from: Literal["candidates", "signals"]
    patterns: list[Pattern] = Field(default_factory=list)
    recovery: list[OutcomeRow] = Field(default_factory=list)
    stage_counts: dict[str, Any] = Field(default_factory=dict)


def _rates(key: str, rows: list[dict[str, Any]]) -> SignalRates:
    n = len(rows)
    bad = sum(bool(r["dissatisfied"]) for r in rows)
    signals: dict[str, float | None] = {}
    for name in SIGNAL_NAMES:
        computed = [r[name] for r in rows if r[name] is not None]
        signals[name] = sum(computed) / len(computed) if computed else None
    return SignalRates(key=key, turns=n, dissatisfied=bad, dissatisfied_rate=bad / n if n else None,
                       dissatisfied_ci=wilson_ci(bad, n) if n else None, signals=signals)


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
    return MiningReport(
        directory=str(out), conversations=len({r["conversation_id"] for r in rows}), assistant_turns=len(rows),
        dissatisfied_turns=sum(bool(r["dissatisfied"]) for r in rows),
        scenarios_from="agents" if by_conv else "none",
        by_scenario=sorted((_rates(k, v) for k, v in scenarios.items()), key=lambda s: (-s.turns, s.key)),
        by_day=[_rates(k, days[k]) for k in sorted(days)],
        patterns_from=source,  # type: ignore[arg-type]  # one of the two literals
        patterns=patterns,
        recovery=[OutcomeRow(outcome=o, count=outcomes[o], share=outcomes[o] / n_chains if n_chains else 0.0,
                             ci=wilson_ci(outcomes[o], n_chains)) for o in OUTCOMES],
        stage_counts=orjson.loads(counts_path.read_bytes()) if counts_path.exists() else {},
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def rate_cells(rates: SignalRates, short: bool = False) -> list[str]:
    """The cells of one rates row: key, turns, dissatisfied rate [CI], then `TABLE_SIGNALS` (``short``:
    whole percents, for narrow terminals)."""
    pct = (lambda v: "n/a" if v is None else f"{v:.0%}") if short else _pct
    ci = rates.dissatisfied_ci
    bad = pct(rates.dissatisfied_rate) + (f" [{ci[0]:.0%}, {ci[1]:.0%}]" if ci else "")
    return [rates.key, str(rates.turns), bad, *(pct(rates.signals[s]) for s in TABLE_SIGNALS)]


RATE_HEADER = ["", "turns", "dissatisfied [95% CI]", *TABLE_SIGNALS]
SHORT_HEADER = ["turns", "dissat. [95% CI]", "down", "regen", "compl", "repeat", "rephr", "dismiss", "skim",
                "topic", "up", "praise"]
"""Column names of `rate_cells(short=True)` after the key."""


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def report_markdown(report: MiningReport) -> str:
    """The report as Markdown."""
    lines = [
        f"# Mining report: {report.directory}", "",
        f"{report.conversations} conversations, {report.assistant_turns} assistant turns, "
        f"{report.dissatisfied_turns} dissatisfied ({_pct(report.dissatisfied_turns / report.assistant_turns if report.assistant_turns else None)}).",  # noqa: E501
        "",
        "## Signal rates per scenario" + ("" if report.scenarios_from == "agents" else " (no agents: unlabelled)"),
        "", *_md_table(["scenario", *RATE_HEADER[1:]], [rate_cells(r) for r in report.by_scenario]),
        "## Signal rates per day", "", *_md_table(["day", *RATE_HEADER[1:]], [rate_cells(r) for r in report.by_day]),
        "## Top failure patterns (" + ("dimension x signal" if report.patterns_from == "candidates"
                                       else "signal combinations on dissatisfied turns") + ")", "",
        *_md_table(["pattern", "count", "share"], [[p.pattern, str(p.count), _pct(p.share)] for p in report.patterns]),
        "## Recovery outcomes (chains from dissatisfied turns)", "",
        *_md_table(["outcome", "count", "share [95% CI]"],
                   [[o.outcome, str(o.count), f"{_pct(o.share)} [{o.ci[0]:.0%}, {o.ci[1]:.0%}]"]
                    for o in report.recovery]),
    ]
    return "\n".join(lines)
