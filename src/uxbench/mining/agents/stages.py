"""The three agent stages for one session and one kind of case: miner, judge, QA.

Each stage is one model call covering the whole session (candidates are indexed), checked by code and
asked again once when unusable. Anything without a valid answer after that is `failed` and never kept:
the QA pass fails closed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from uxbench.data.schema import Message
from uxbench.data.taxonomy import TaxonomyKind, map_failure_dimension, map_success_dimension
from uxbench.mining.agents.calls import ask_agent
from uxbench.mining.agents.models import BAD_SIGNALS, AgentConfig, AgentReport, Candidate, CaseKind
from uxbench.mining.agents.prompting import Lang, render, taxonomy_list
from uxbench.mining.agents.proposals import Proposal, is_good_turn, parse_proposals, query_block
from uxbench.mining.agents.render import clip, fired_signals, render_dialogue, signal_summary, turn_text
from uxbench.mining.agents.reviews import (
    UNSAFE_ISSUES,
    Review,
    Scores,
    keep_decision,
    parse_reviews,
    parse_scores,
)
from uxbench.mining.records import MinedSession
from uxbench.mining.signals.results import TurnSignals
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model

_MARK = {"bad": "DISSATISFIED", "good": "LIKED"}
_CONTEXT_MESSAGES = 4
_CONTEXT_CHARS = 300


@dataclass
class Ctx:
    """What every stage of one session needs."""

    item: MinedSession
    kind: CaseKind
    lang: Lang
    model: Model
    config: AgentConfig
    gen: GenerateConfig
    report: AgentReport

    @property
    def dim_kind(self) -> TaxonomyKind:
        return "failure_dimensions" if self.kind == "bad" else "success_dimensions"

    def raw(self, text: str | None) -> str | None:
        limit = self.config.max_raw_chars
        return None if text is None or limit == 0 else text[:limit]

    def dialogue(self, marks: dict[int, str]) -> str:
        return render_dialogue(
            self.item, marks, max_chars_per_turn=self.config.max_chars_per_turn,
            max_total_chars=self.config.max_dialogue_chars,
        )


def target_turns(item: MinedSession, kind: CaseKind, config: AgentConfig) -> list[TurnSignals]:
    """Assistant turns the miner may pick: dissatisfied ones (bad), liked ones (good)."""
    if kind == "bad":
        return [ts for ts in item.signals if ts.dissatisfied]
    return [ts for ts in item.signals if is_good_turn(ts, config.good_signals)]


def _candidate(ctx: Ctx, p: Proposal, ts: TurnSignals, raw: str | None) -> Candidate:
    return Candidate(
        conversation_id=ctx.item.conversation_id,
        kind=ctx.kind,
        turn_index=p.turn_index,
        query_turn_index=p.query_turn_index,
        next_user_turn=ts.next_user_turn,
        failure_dimension=p.dimension if ctx.kind == "bad" else None,
        success_dimension=p.dimension if ctx.kind == "good" else None,
        scenario=p.scenario,
        signal=p.signal,
        signal_evidence=ts.signal(p.signal).evidence,
        fired_signals=[name for name, _ in fired_signals(ts)],
        explanation=p.explanation,
        lang=ctx.lang,
        stage="judge",
        miner_raw=ctx.raw(raw),
    )


async def mine(ctx: Ctx, targets: list[TurnSignals]) -> list[Candidate]:
    """The miner's validated cases, or one `failed` candidate (on the first target turn)."""
    cfg = ctx.config
    allowed = BAD_SIGNALS if ctx.kind == "bad" else cfg.good_signals
    system = render(
        ctx.lang, f"miner_{ctx.kind}", max_cases=cfg.max_candidates_per_session,
        dimensions=taxonomy_list(ctx.dim_kind, ctx.lang), scenarios=taxonomy_list("scenarios", ctx.lang),
        signals=", ".join(allowed),
    )
    user = render(
        ctx.lang, "miner_user", summary=signal_summary(ctx.item),
        candidates=", ".join(str(ts.turn_index) for ts in targets),
        dialogue=ctx.dialogue({ts.turn_index: _MARK[ctx.kind] for ts in targets}),
    )

    def parse(text: str) -> tuple[list[Proposal] | None, list[str]]:
        return parse_proposals(
            text, ctx.item, ctx.kind, good_signals=cfg.good_signals,
            require_dissatisfied=cfg.require_dissatisfied, max_cases=cfg.max_candidates_per_session,
        )

    stage = f"miner_{ctx.kind}"
    messages = [Message(role="system", content=system), Message(role="user", content=user)]
    ex = await ask_agent(ctx.model, messages, ctx.gen, parse, lang=ctx.lang, stage=stage, report=ctx.report)
    proposals = ex.values[-1] if ex.ok else None
    if proposals is None:
        first = targets[0]
        block = query_block(ctx.item, first.turn_index)
        return [Candidate(
            conversation_id=ctx.item.conversation_id, kind=ctx.kind, turn_index=first.turn_index,
            query_turn_index=block[0] if block else None, next_user_turn=first.next_user_turn,
            fired_signals=[name for name, _ in fired_signals(first)], lang=ctx.lang,
            status="failed", stage="miner", error=f"miner: {ex.failure()}", miner_raw=ctx.raw(ex.last_raw),
        )]
    if not proposals:
        ctx.report.empty_miner += 1
    by_turn = {ts.turn_index: ts for ts in ctx.item.signals}
    out = [_candidate(ctx, p, by_turn[p.turn_index], ex.last_raw) for p in proposals]
    return sorted(out, key=lambda c: c.turn_index)


def _case_json(c: Candidate, i: int) -> dict[str, object]:
    return {
        "index": i, "turn_index": c.turn_index, "query_turn_index": c.query_turn_index,
        "dimension": c.dimension, "scenario": c.scenario, "signal": c.signal,
        "signal_evidence": c.signal_evidence, "explanation": c.explanation,
    }


async def judge(ctx: Ctx, cands: list[Candidate]) -> None:
    """Score `cands` (in place) and apply the keep rule; survivors move to stage qa."""
    if not cands:
        return
    cases = json.dumps([_case_json(c, i) for i, c in enumerate(cands)], ensure_ascii=False, indent=1)
    user = render(ctx.lang, "judge_user", cases=cases,
                  dialogue=ctx.dialogue({c.turn_index: f"CASE {i}" for i, c in enumerate(cands)}))
    messages = [Message(role="system", content=render(ctx.lang, f"judge_{ctx.kind}")),
                Message(role="user", content=user)]
    n = len(cands)
    ex = await ask_agent(ctx.model, messages, ctx.gen, lambda t: parse_scores(t, n), lang=ctx.lang,
                   stage=f"judge_{ctx.kind}", report=ctx.report)
    merged: dict[int, Scores] = {}
    for value in ex.values:
        merged.update(value or {})
    for i, c in enumerate(cands):
        c.judge_raw = ctx.raw(ex.last_raw)
        scores = merged.get(i)
        if scores is None:
            c.status, c.stage, c.error = "failed", "judge", f"judge: {ex.failure()}"
            continue
        c.scores, c.mean_score, c.judge_notes = dict(scores.values), scores.mean, scores.notes
        reason = keep_decision(scores, ctx.config.keep_mean, ctx.config.keep_min)
        if reason is not None:
            c.status, c.stage, c.reject_reason = "rejected", "judge", reason
        else:
            c.stage = "qa"


def _qa_json(ctx: Ctx, c: Candidate, i: int) -> dict[str, object]:
    turns = ctx.item.session.turns
    qpos = next((p for p, t in enumerate(turns) if t.turn_index == c.query_turn_index), 0)
    earlier = turns[max(0, qpos - _CONTEXT_MESSAGES) : qpos]
    before = [f"{t.role}: {clip(t.content, _CONTEXT_CHARS)}" for t in earlier]
    limit = ctx.config.max_chars_per_turn
    return {
        "index": i, "earlier_turn_count": qpos, "last_earlier_turns": before,
        "user_request": clip(turn_text(ctx.item, c.query_turn_index), limit),
        "assistant_reply": clip(turn_text(ctx.item, c.turn_index), limit),
        "user_next_message": clip(turn_text(ctx.item, c.next_user_turn), _CONTEXT_CHARS) or None,
        "dimension": c.dimension, "scenario": c.scenario, "signal": c.signal,
        "signal_evidence": c.signal_evidence, "explanation": c.explanation, "judge_mean": c.mean_score,
    }


def _apply_review(c: Candidate, r: Review) -> None:
    c.qa, c.needs_context, c.stage = r.as_dict(), r.needs_context, "done"
    unsafe = sorted(UNSAFE_ISSUES.intersection(r.issues))
    if r.verdict == "reject" or unsafe:
        c.status = "rejected"
        c.reject_reason = f"qa: {'unsafe (' + ', '.join(unsafe) + ')' if unsafe else 'reject'}"
        if r.issues and not unsafe:
            c.reject_reason += f" ({', '.join(r.issues)})"
        return
    if r.corrected_dimension is not None and r.corrected_dimension != c.dimension:
        c.dimension_original = c.dimension
        if c.kind == "bad":
            c.failure_dimension = r.corrected_dimension
        else:
            c.success_dimension = r.corrected_dimension
    c.status, c.kept, c.quality = "kept", True, "high" if r.verdict == "keep" else "medium"


async def qa(ctx: Ctx, cands: list[Candidate]) -> None:
    """Review the judge's survivors (in place). No valid review means not kept."""
    if not cands:
        return
    mapper = map_failure_dimension if ctx.kind == "bad" else map_success_dimension
    cases = json.dumps([_qa_json(ctx, c, i) for i, c in enumerate(cands)], ensure_ascii=False, indent=1)
    system = render(ctx.lang, f"qa_{ctx.kind}", dimensions=taxonomy_list(ctx.dim_kind, ctx.lang))
    messages = [Message(role="system", content=system),
                Message(role="user", content=render(ctx.lang, "qa_user", cases=cases))]
    n = len(cands)
    ex = await ask_agent(ctx.model, messages, ctx.gen, lambda t: parse_reviews(t, n, mapper), lang=ctx.lang,
                   stage=f"qa_{ctx.kind}", report=ctx.report)
    merged: dict[int, Review] = {}
    for value in ex.values:
        merged.update(value or {})
    for i, c in enumerate(cands):
        c.qa_raw = ctx.raw(ex.last_raw)
        review = merged.get(i)
        if review is None:
            c.status, c.stage, c.error = "failed", "qa", f"qa: {ex.failure()}"
        else:
            _apply_review(c, review)


def keep_without_qa(cands: list[Candidate]) -> None:
    """QA switched off: the judge's survivors are kept, unaudited (quality None)."""
    for c in cands:
        c.status, c.kept, c.stage = "kept", True, "done"
