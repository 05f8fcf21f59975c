"""`uxbench personas build --from MINE_RUN`: personas from the de-identified sessions of a mining output.

Per conversation (near-duplicates and conversations without a user message left out, counted):
1. the hold-out rule picks the turns to build from (`build_rules.Holdout`; recorded in the persona's `meta`);
2. facts: the de-identification's pseudonyms in the user's messages (`[PHONE_1]`: values are placeholders, never
   original data), plus, with a model, the facts it extracts; **every fact value must occur in the user's
   messages** (`sim.disclosure.mentions`), a fact that does not is dropped and counted; its disclosure mode
   comes from where it first appears;
3. profile and goal: from the schema-validated LLM extraction (`build_llm`), or by rule without a model;
4. reactions and patience: fitted from the reaction counts (`build_fit`), pulled toward the pool's;
5. the persona is validated by its schema; one that fails is counted with the field, never written.

Output: the personas as JSON Lines (atomic write) and a build report beside them (`<out>.build.json`): what was
read, built and skipped and why, the dropped facts (conversation digest and fact id, never a value), the
hold-out split, the extraction model and prompt digest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from uxbench.errors import ConfigError, DataError
from uxbench.fileio import atomic_write_bytes, atomic_write_lines
from uxbench.scoring.prompts.render import detect_lang
from uxbench.sim.build_fit import Pool, ReactionCounts, count_reactions, fit
from uxbench.sim.build_rules import (
    FactDraft,
    Holdout,
    derived_rubric,
    hide_values,
    place_facts,
    placeholder_facts,
    rule_goal,
    rule_profile,
)
from uxbench.sim.disclosure import mentions
from uxbench.sim.mined import MinedConversation, MinedTurn, iter_mined
from uxbench.sim.persona import Persona
from uxbench.sim.persona_io import field_path, personas_jsonl

Extractor = Callable[[list[str], str], Any]
"""(user texts, lang) -> an awaitable `mining.llm.Exchange[Extracted]`."""


@dataclass
class BuildOptions:
    holdout: Holdout = field(default_factory=lambda: Holdout("prefix", 0.5))
    min_user_turns: int = 1
    lang: str = "auto"
    limit: int | None = None
    extraction: str = "rules"
    """rules, or the extraction model's spec."""
    prompt_digest: str | None = None


@dataclass
class BuildReport:
    source: str
    options: dict[str, Any]
    read: int = 0
    built: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    held_out: list[str] = field(default_factory=list)
    facts: Counter[str] = field(default_factory=Counter)
    dropped_facts: list[dict[str, str]] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "uxbench.personas.build", "source": self.source, "options": self.options,
                "conversations_read": self.read, "personas_built": self.built, "skipped": dict(self.skipped),
                "held_out_conversations": self.held_out, "facts": dict(self.facts),
                "facts_not_in_source": self.dropped_facts, "failures": self.failures}


@dataclass
class _Candidate:
    conv: MinedConversation
    turns: list[MinedTurn]
    split: dict[str, object]
    lang: str
    counts: ReactionCounts


def _select(source: Path, options: BuildOptions, report: BuildReport) -> list[_Candidate]:
    out: list[_Candidate] = []
    for conv in iter_mined(source):
        report.read += 1
        if conv.duplicate_of is not None:
            report.skipped["near_duplicate"] += 1
            continue
        if options.holdout.held_out(conv):
            report.held_out.append(conv.digest)
            continue
        turns, split = options.holdout.build_turns(conv)
        users = [t.text for t in turns if t.role == "user" and t.text.strip()]
        if len(users) < max(1, options.min_user_turns):
            report.skipped["too_few_user_turns" if users else "no_user_message"] += 1
            continue
        lang = detect_lang(users)
        if options.lang in ("zh", "en") and lang != options.lang:
            report.skipped[f"not_{options.lang}"] += 1
            continue
        rows = [conv.signals[t.turn_index] for t in turns if t.role == "assistant" and t.turn_index in conv.signals]
        ends = len(turns) == len(conv.turns)
        out.append(_Candidate(conv, turns, split, lang, count_reactions(rows, ends_conversation=ends)))
    out.sort(key=lambda c: c.conv.digest)
    return out[: options.limit] if options.limit is not None else out


def _persona(cand: _Candidate, pool: Pool, options: BuildOptions, extracted: Any, report: BuildReport
             ) -> Persona | None:
    conv, lang = cand.conv, cand.lang
    users = [t.text for t in cand.turns if t.role == "user" and t.text.strip()]
    facts: list[FactDraft] = placeholder_facts(users, lang)
    profile = rule_profile(users, lang)
    goal = rule_goal(cand.turns, conv, facts, lang)
    if extracted is not None:
        joined = "\n".join(users)
        known = {f.value for f in facts}
        for i, fact in enumerate(extracted.facts, start=1):
            if fact.value in known:
                continue
            if not mentions(fact.value, joined):
                report.facts["dropped_not_in_source"] += 1
                report.dropped_facts.append({"conversation": conv.digest, "fact": f"fact_{i}"})
                continue
            facts.append(FactDraft(f"fact_{i}", fact.label, fact.value, (), "llm"))
            known.add(fact.value)
        profile.update(description=extracted.description, expertise=extracted.expertise, tone=extracted.tone)
    facts = [f for f in facts if f.value.strip()]
    place_facts(facts, cand.turns)
    if extracted is not None:
        goal = [{"id": f"item_{i}", "request": hide_values(g.request, facts),
                 "check": {"question": hide_values(g.check_question, facts)}}
                for i, g in enumerate(extracted.goal, start=1)]
    needs = [f.id for f in facts if f.disclose == "on_request"]
    if goal and needs:
        goal[0] = {**goal[0], "needs": needs}
    report.facts.update(f"kept_{f.origin}" for f in facts)
    reactions, patience = fit(cand.counts, pool)
    if "description" not in profile:
        n = len(users)
        profile["description"] = (f"A user mined from a real conversation ({n} user message{'s' * (n != 1)})."
                                  if lang == "en" else f"从一段真实对话中挖掘出的用户（{n} 条消息）。")
    data = {
        "id": f"mined-{conv.digest[:12]}", "lang": lang, "source": f"mined:{conv.digest}",
        "profile": profile, "goal": goal, "opener": users[0],
        "facts": [{"id": f.id, "label": f.label, "value": f.value, "disclose": f.disclose,
                   **({"ask_patterns": list(f.ask_patterns)} if f.ask_patterns else {})} for f in facts],
        "patience": patience.model_dump(), "reactions": reactions.model_dump(),
        "rubric": derived_rubric(profile, facts, lang),
        "meta": {"holdout": cand.split, "extraction": options.extraction,
                 **({"prompt_digest": options.prompt_digest} if options.prompt_digest else {}),
                 "reaction_counts": {"failure": dict(cand.counts.first), "failure_low": dict(cand.counts.later),
                                     "closing": dict(cand.counts.closing),
                                     "failed_replies": cand.counts.failed_replies}},
    }
    try:
        return Persona.model_validate(data)
    except ValueError as err:
        errors = getattr(err, "errors", None)
        where = field_path(errors()[0]["loc"]) if callable(errors) and errors() else ""
        report.skipped["invalid_persona"] += 1
        report.failures.append({"conversation": conv.digest, "why": f"invalid persona {where}".strip()})
        return None


async def _extract_all(cands: list[_Candidate], extractor: Extractor, width: int, tick: Callable[[int], None] | None,
                       report: BuildReport) -> list[Any]:
    from uxbench.mining.llm import map_bounded

    async def one(cand: _Candidate) -> Any:
        users = [t.text for t in cand.turns if t.role == "user" and t.text.strip()]
        exchange = await extractor(users, cand.lang)
        if exchange.ok:
            return exchange.value
        report.skipped["extraction_failed"] += 1
        report.failures.append({"conversation": cand.conv.digest, "why": exchange.failure()[:300]})
        return None

    return await map_bounded(cands, one, width, tick)


async def build_personas(source: Path, out: Path, options: BuildOptions, *, extractor: Extractor | None = None,
                         width: int = 8, tick: Callable[[int], None] | None = None,
                         on_selected: Callable[[int], None] | None = None) -> BuildReport:
    """Build personas from the mining output `source` into `out` (JSON Lines) and `<out>.build.json`; with
    `extractor`, the LLM extraction runs at most `width` at once on the caller's event loop."""
    report = BuildReport(str(source), {"holdout": f"{options.holdout.rule}:{options.holdout.value:g}",
                                       "min_user_turns": options.min_user_turns, "lang": options.lang,
                                       "limit": options.limit, "extraction": options.extraction,
                                       "prompt_digest": options.prompt_digest})
    cands = _select(source, options, report)
    if report.read == 0:
        raise DataError("holds no conversation that reached the signal stage", source=str(source))
    if on_selected is not None:
        on_selected(len(cands))
    pool = Pool.of([c.counts for c in cands])
    extracted: list[Any] = [None] * len(cands)
    if extractor is not None and cands:
        extracted = await _extract_all(cands, extractor, width, tick, report)
    personas: list[Persona] = []
    for cand, ext in zip(cands, extracted, strict=True):
        if extractor is not None and ext is None:
            continue  # extraction failed: counted
        persona = _persona(cand, pool, options, ext, report)
        if persona is not None:
            personas.append(persona)
    report.built = len(personas)
    if not personas:
        reasons = ", ".join(f"{k} {v}" for k, v in report.skipped.most_common()) or "none eligible"
        raise ConfigError(f"No persona was built from {source} ({report.read} conversations read; skipped: "
                          f"{reasons}). Nothing was written.")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_lines(out, personas_jsonl(personas))
    atomic_write_bytes(out.with_name(out.name + ".build.json"),
                       orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return report
