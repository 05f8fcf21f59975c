"""`run_agents`: miner -> judge -> QA over a batch of mined sessions, bad cases and good cases.

Per session: sessions marked as near-duplicates are skipped; a session with a dissatisfied assistant turn
gets the bad-case path, one with a liked turn (and `good_cases` on) the good-case path. The result holds
every candidate, kept or not, in input-session order, bad before good, by turn within a kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from uxbench.mining.agents.models import AgentConfig, AgentReport, Candidate, CaseKind
from uxbench.mining.agents.prompting import session_lang
from uxbench.mining.agents.stages import Ctx, judge, keep_without_qa, mine, qa, target_turns
from uxbench.mining.llm import Tick, map_bounded
from uxbench.mining.records import MinedSession
from uxbench.models.api import GenerateConfig
from uxbench.models.model import Model


async def _path(ctx: Ctx) -> list[Candidate]:
    targets = target_turns(ctx.item, ctx.kind, ctx.config)
    if not targets:
        return []
    cands = await mine(ctx, targets)
    scored = [c for c in cands if c.stage == "judge"]
    await judge(ctx, scored)
    survivors = [c for c in scored if c.stage == "qa"]
    if ctx.config.qa:
        await qa(ctx, survivors)
    else:
        keep_without_qa(survivors)
    return cands


async def agents_for_session(
    item: MinedSession, model: Model, config: AgentConfig, report: AgentReport | None = None
) -> list[Candidate]:
    """Every candidate of one session (empty for duplicates and sessions without target turns)."""
    report = report if report is not None else AgentReport()
    report.sessions += 1
    if item.duplicate_of is not None:
        report.skipped_duplicate += 1
        return []
    kinds: list[CaseKind] = ["bad", "good"] if config.good_cases else ["bad"]
    if not any(target_turns(item, kind, config) for kind in kinds):
        report.no_candidates_turns += 1
        return []
    lang = session_lang(item.session, config.lang)
    gen = GenerateConfig(temperature=config.temperature, max_tokens=config.max_tokens)
    out: list[Candidate] = []
    for kind in kinds:
        ctx = Ctx(item=item, kind=kind, lang=lang, model=model, config=config, gen=gen, report=report)
        out.extend(await _path(ctx))
    return out


async def run_agents(
    items: Sequence[MinedSession],
    model: Model,
    config: AgentConfig | None = None,
    *,
    report: AgentReport | None = None,
    tick: Tick | None = None,
) -> list[Candidate]:
    """All candidates of the batch, kept or not, in a deterministic order (see the module docstring).

    As many sessions run at once as the model's concurrency ceiling allows; its adaptive limiter decides
    how many calls are really in flight. Pass `report` to get call, retry and failure counts, and `tick`
    to hear how many sessions are done."""
    cfg = config or AgentConfig()
    rep = report if report is not None else AgentReport()
    results = await map_bounded(items, lambda item: agents_for_session(item, model, cfg, rep),
                                model.limiter.max_concurrency, tick)
    return [c for batch in results for c in batch]
