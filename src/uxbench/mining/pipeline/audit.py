"""`uxbench mine audit`: which recovery strategies replies use after a complaint, and how they end.

For every assistant turn whose next user message is a complaint (the signal stage's ``complaint``), the
assistant's next reply is labelled with one of the six strategies of the method (`strategies`): by rules
over its opening sentence, or by a model (then the rules stand in for an output that cannot be read
after one retry, and are counted as such). Each strategy gets its count, its share with a Wilson 95%
interval, and the outcomes of the recovery chains that start at the complained-about reply (recovered,
failed, user gave up, unknown), with the recovered rate and its interval.

The texts are read from the finished signal stage (``OUT/work/04-signals``): de-identified already.
Nothing of the texts goes into the result.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import orjson
from pydantic import BaseModel, Field

from uxbench.data.schema import Message
from uxbench.errors import DataError
from uxbench.metrics.proportions import wilson_ci
from uxbench.mining.llm import Exchange, Tick, ask, map_bounded
from uxbench.mining.pipeline import registry
from uxbench.mining.pipeline.progress import StageProgress, StageTick
from uxbench.mining.pipeline.store import StageDir, read_json, read_with_sessions
from uxbench.models.api import GenerateConfig
from uxbench.scoring.strategies import STRATEGIES, Strategy, classify_opening

if TYPE_CHECKING:
    from uxbench.models.model import Model

SIGNALS_STAGE = registry.dirname(registry.get("signals"))
OUTCOMES = ("recovered", "failed", "user_gave_up", "unknown")
_MAX_TEXT = 600


class ComplaintReply(BaseModel):
    """One complaint and the reply after it (texts kept in memory only, for the classifier)."""

    conversation_id: str
    failed_turn: int
    complaint_turn: int
    reply_turn: int | None
    complaint: str
    reply: str | None
    outcome: str | None


class StrategyRow(BaseModel):
    strategy: str
    count: int
    share: float
    ci: tuple[float, float]
    outcomes: dict[str, int]
    recovered_rate: float | None
    """recovered / replies whose chain outcome is known (unknown excluded)."""
    recovered_ci: tuple[float, float] | None


class AuditReport(BaseModel):
    directory: str
    method: Literal["rules", "model"]
    model: str | None = None
    complaints: int
    with_reply: int
    without_reply: int
    """Complaints the conversation ended on (no reply to label)."""
    model_fallbacks: int = 0
    """Replies whose model output could not be read (labelled by the rules instead)."""
    strategies: list[StrategyRow] = Field(default_factory=list)
    cues: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Per strategy, how often each cue decided it (rules only; '(none)' for the fallback)."""


def collect(out_dir: str | Path) -> list[ComplaintReply]:
    """Every complaint in a finished mining run, with the assistant's next reply."""
    work = Path(out_dir) / "work" / SIGNALS_STAGE
    marker = work / "_DONE"
    if not marker.exists():
        raise DataError("no finished signal stage here; run `uxbench mine run` first", source=str(out_dir))
    info = read_json(marker)
    stage = StageDir(work.parent, SIGNALS_STAGE, info["key"])
    found: list[ComplaintReply] = []
    for path in stage.shards(int(info["batches"])):
        table = read_with_sessions(path, ["conversation_id", "session", "signals"])
        for cid, session, signals in zip(*(table.column(i).to_pylist() for i in range(3)), strict=True):
            turns = orjson.loads(session)["turns"]
            for ts in orjson.loads(signals):
                if not ts["complaint"]["fired"] or ts["next_user_turn"] is None:
                    continue
                position = next(i for i, t in enumerate(turns) if t["turn_index"] == ts["next_user_turn"])
                reply = next((t for t in turns[position + 1:] if t["role"] == "assistant"), None)
                found.append(ComplaintReply(
                    conversation_id=cid, failed_turn=ts["turn_index"], complaint_turn=ts["next_user_turn"],
                    reply_turn=reply["turn_index"] if reply else None, complaint=turns[position]["content"],
                    reply=reply["content"] if reply else None,
                    outcome=(ts.get("recovery") or {}).get("outcome"),
                ))
    return found


_SYSTEM = """You label how an AI assistant opens its reply after the user complained about its previous answer.
Judge only the opening (the first one or two sentences). Strategies:
- apology: apologises or admits a fault.
- agreement: agrees with or validates the user's complaint.
- error_diagnosis: explains what went wrong, or states a limit of what it knows or can do.
- humor: de-escalates with a joke or a light remark.
- direct_fix: goes straight to the corrected answer or the next step.
- clarification: asks what was wrong or what information it needs.
If several apply, choose the one the reply opens with.
Answer with one JSON object and nothing else: {"strategy": "<one of the six names>"}"""
_RETRY = ("Your previous answer could not be read. "
          "Reply with only the JSON object, e.g. {\"strategy\": \"apology\"}.\n\n")
_OBJECT = re.compile(r"\{[^{}]*\}")


def parse_strategy(text: str) -> Strategy | None:
    for chunk in _OBJECT.findall(text):
        try:
            value = json.loads(chunk)
        except (json.JSONDecodeError, RecursionError):
            continue
        name = str(value.get("strategy", "")).strip().lower().replace(" ", "_") if isinstance(value, dict) else ""
        if name in STRATEGIES:
            return name
    return None


async def _label(item: ComplaintReply, model: Model) -> Strategy | None:
    body = (f"User's complaint:\n<<<{item.complaint[:_MAX_TEXT]}>>>\n\n"
            f"Opening of the assistant's reply:\n<<<{(item.reply or '')[:_MAX_TEXT]}>>>")

    def request(retry: bool) -> list[Message]:
        return [Message(role="system", content=_SYSTEM), Message(role="user", content=(_RETRY if retry else "") + body)]

    def parse(text: str) -> tuple[Strategy | None, list[str]]:
        label = parse_strategy(text)
        return label, [] if label is not None else ["no strategy name"]

    ex: Exchange[Strategy] = await ask(model, request(False), GenerateConfig(temperature=0.0, max_tokens=40),
                                       parse, lambda *_: request(True))
    return ex.value  # None (the rules stand in) on an unreadable output or a model error


async def label_with_model(items: list[ComplaintReply], model: Model,
                           tick: Tick | None = None) -> list[Strategy | None]:
    return await map_bounded(items, lambda item: _label(item, model), model.limiter.max_concurrency, tick)


def summarise(out_dir: str | Path, items: list[ComplaintReply], labels: list[Strategy | None] | None = None,
              model: str | None = None) -> AuditReport:
    """The audit table from the complaints and (optionally) the model's labels, one per item."""
    answered = [i for i in items if i.reply is not None]
    per: dict[str, list[str | None]] = {name: [] for name in STRATEGIES}
    cues: dict[str, Counter[str]] = {name: Counter() for name in STRATEGIES}
    fallbacks = 0
    for n, item in enumerate(answered):
        rule, cue = classify_opening(item.reply or "")
        chosen: str = rule
        if labels is not None:
            label = labels[n]
            fallbacks += label is None
            chosen = label or rule
        else:
            cues[rule][cue or "(none)"] += 1
        per[chosen].append(item.outcome)
    rows = []
    for name in STRATEGIES:
        outcomes = Counter(o or "unknown" for o in per[name])
        known = sum(outcomes[o] for o in OUTCOMES if o != "unknown")
        rows.append(StrategyRow(
            strategy=name, count=len(per[name]),
            share=len(per[name]) / len(answered) if answered else 0.0,
            ci=wilson_ci(len(per[name]), len(answered)),
            outcomes={o: outcomes[o] for o in OUTCOMES},
            recovered_rate=outcomes["recovered"] / known if known else None,
            recovered_ci=wilson_ci(outcomes["recovered"], known) if known else None,
        ))
    return AuditReport(
        directory=str(out_dir), method="rules" if labels is None else "model", model=model,
        complaints=len(items), with_reply=len(answered), without_reply=len(items) - len(answered),
        model_fallbacks=fallbacks, strategies=rows,
        cues={k: dict(v.most_common()) for k, v in cues.items() if v},
    )


def audit(out_dir: str | Path) -> AuditReport:
    """The rules' audit of a finished mining run."""
    return summarise(out_dir, collect(out_dir))


async def audit_with_model(out_dir: str | Path, model: Model, *, spec: str | None = None,
                           ticks: StageTick | None = None) -> AuditReport:
    """The audit with each opening labelled by ``model`` (the rules stand in for unreadable outputs);
    ``ticks`` hears how many replies are labelled."""
    items = collect(out_dir)
    answered = [i for i in items if i.reply is not None]

    def tick(done: int) -> None:
        if ticks is not None:
            ticks(StageProgress("audit", "replies", done, len(answered), model.limiter.current_limit))

    tick(0)
    labels = await label_with_model(answered, model, tick)
    return summarise(out_dir, items, labels, model=spec)


def audit_markdown(report: AuditReport) -> str:
    """The audit as a Markdown table."""
    lines = [
        f"# Recovery strategies after complaints ({report.method}{': ' + report.model if report.model else ''})",
        "",
        f"{report.complaints} complaints; {report.with_reply} answered, {report.without_reply} ended the "
        "conversation." + (f" {report.model_fallbacks} model outputs unreadable (rules used)."
                           if report.model_fallbacks else ""),
        "",
        "| strategy | n | share [95% CI] | recovered / known [95% CI] | recovered | failed | gave up | unknown |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for row in report.strategies:
        rate = "n/a" if row.recovered_rate is None or row.recovered_ci is None else (
            f"{row.recovered_rate:.0%} [{row.recovered_ci[0]:.0%}, {row.recovered_ci[1]:.0%}]")
        o = row.outcomes
        lines.append(f"| {row.strategy} | {row.count} | {row.share:.0%} [{row.ci[0]:.0%}, {row.ci[1]:.0%}] | "
                     f"{rate} | {o['recovered']} | {o['failed']} | {o['user_gave_up']} | {o['unknown']} |")
    return "\n".join(lines) + "\n"
