"""The judge half of the User Fidelity Score: one call per session decides what code left pending (paraphrased
disclosures and requests, hallucinated details, goal items raised, unprovoked reactions and early stops in free
mode).

The judge reads the persona (profile, goal items, facts with their rules) and the numbered transcript, and
nothing else: **never the session's success, termination reason, acts or the assessor's verdicts**, so its
verdicts cannot lean on the outcome. Its answer is one JSON object; an unusable one is sent back once with its
problems, a second leaves the session's judge items unchecked (counted)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from uxbench.data.schema import Message
from uxbench.mining.llm import Exchange, ask, correction_turns
from uxbench.models.api import GenerateConfig
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.sim.fidelity_code import ItemResult
from uxbench.sim.persona import Persona
from uxbench.sim.types import SessionRecord

TEMPLATES = PackageTemplates("uxbench.sim", "Fidelity judge")
MAX_TURN_CHARS = 1200
_OBJECT_RE = re.compile(r"\{.*\}", re.S)
_RULES = {
    "en": {"opening": "may say it from the first message", "on_request": "only once the assistant asks for it",
           "after_turn": "only from user message {k} on (or once asked)",
           "volunteer_if_adjacent": "only together with the request that needs it (or once asked)",
           "never": "must never say it, even when asked"},
    "zh": {"opening": "第一条消息起就可以说", "on_request": "只有助手问起时才能说",
           "after_turn": "从用户第 {k} 条消息起才能说（或被问起时）",
           "volunteer_if_adjacent": "只能在提出需要它的请求时一并说（或被问起时）",
           "never": "任何时候都不能说，即使被问起"},
}


@dataclass
class JudgeAnswer:
    facts: dict[str, dict[str, int | None]] = field(default_factory=dict)
    goals_raised: dict[str, bool] = field(default_factory=dict)
    hallucinated_turns: list[int] = field(default_factory=list)
    unprovoked_turns: list[int] = field(default_factory=list)
    stopped_early: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"facts": self.facts, "goals_raised": self.goals_raised,
                "hallucinated_turns": self.hallucinated_turns, "unprovoked_turns": self.unprovoked_turns,
                "stopped_early": self.stopped_early}


def _transcript(record: SessionRecord, lang: str) -> tuple[str, dict[int, int]]:
    """Numbered lines `[3] User: ...`, and number -> turn_index."""
    names = {"user": "用户", "assistant": "助手"} if lang == "zh" else {"user": "User", "assistant": "Assistant"}
    lines, index = [], {}
    for number, turn in enumerate([t for t in record.turns if t.text], start=1):
        index[number] = turn.turn_index
        lines.append(f"[{number}] {names[turn.role]}: {turn.text[:MAX_TURN_CHARS]}")
    return "\n".join(lines), index


def judge_messages(record: SessionRecord, persona: Persona) -> tuple[list[Message], dict[int, int]]:
    lang = persona.lang
    rules = _RULES[lang]
    facts = "\n".join(f"- {f.id}: {f.label} = {f.value} ({rules[f.mode].format(k=f.from_turn)})"
                      for f in persona.facts) or ("（无）" if lang == "zh" else "(none)")
    goal = "\n".join(f"- {g.id}: {g.request}" for g in persona.goal)
    transcript, index = _transcript(record, lang)
    values = {
        "profile": persona.profile.description or ("（无）" if lang == "zh" else "(none)"),
        "goal": goal, "facts": facts, "transcript": transcript,
        "fact_keys": ", ".join(f'"{f.id}": {{"conveyed_at": <n or null>, "asked_at": <n or null>}}'
                               for f in persona.facts),
        "goal_keys": ", ".join(f'"{g.id}": <true or false>' for g in persona.goal),
    }
    return [Message(role="user", content=TEMPLATES.text(f"fidelity/{lang}/judge.txt", values))], index


def _int_or_none(value: Any, what: str, problems: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) != int(value):
        problems.append(f"{what} must be a message number or null")
        return None
    return int(value)


def parse_answer(text: str, persona: Persona, index: dict[int, int]) -> tuple[JudgeAnswer | None, list[str]]:
    """Read the judge's JSON; message numbers become turn_index values. (answer, []) or (None, problems)."""
    from uxbench.scoring._text import strip_reasoning

    match = _OBJECT_RE.search(strip_reasoning(text or ""))
    if match is None:
        return None, ["no JSON object in the answer"]
    try:
        data = json.loads(match.group())
    except (ValueError, RecursionError) as err:  # a judge's answer nested past Python's recursion limit too
        return None, [f"the JSON does not parse: {err}"]
    if not isinstance(data, dict):
        return None, ["the answer must be a JSON object"]
    problems: list[str] = []
    out = JudgeAnswer()
    facts = data.get("facts") or {}
    for fact in persona.facts:
        entry = facts.get(fact.id) if isinstance(facts, dict) else None
        if not isinstance(entry, dict):
            problems.append(f"facts.{fact.id} is missing")
            continue
        out.facts[fact.id] = {key: _turn(_int_or_none(entry.get(key), f"facts.{fact.id}.{key}", problems), index)
                              for key in ("conveyed_at", "asked_at")}
    raised = data.get("goals_raised") or {}
    for goal in persona.goal:
        value = raised.get(goal.id) if isinstance(raised, dict) else None
        if not isinstance(value, bool):
            problems.append(f"goals_raised.{goal.id} must be true or false")
            continue
        out.goals_raised[goal.id] = value
    for key in ("hallucinated_turns", "unprovoked_turns"):
        values = data.get(key) or []
        if not isinstance(values, list):
            problems.append(f"{key} must be a list of message numbers")
            continue
        turns = [_turn(_int_or_none(v, key, problems), index) for v in values]
        setattr(out, key, sorted({t for t in turns if t is not None}))
    stopped = data.get("stopped_early")
    out.stopped_early = stopped if isinstance(stopped, bool) else None
    return (None, problems) if problems else (out, [])


def _turn(number: int | None, index: dict[int, int]) -> int | None:
    return None if number is None else index.get(number)


async def judge_session(record: SessionRecord, persona: Persona, model: Any, *, max_tokens: int = 600
                        ) -> Exchange[JudgeAnswer]:
    messages, index = judge_messages(record, persona)

    def correction(problems: list[str]) -> str:
        return TEMPLATES.text(f"fidelity/{persona.lang}/judge_retry.txt", {"problems": "; ".join(problems)})

    config = GenerateConfig(temperature=0.0, max_tokens=max_tokens, seed=record.seed)
    return await ask(model, messages, config, lambda text: parse_answer(text, persona, index),
                     correction_turns(correction))


def apply_answer(results: list[ItemResult], answer: JudgeAnswer, persona: Persona, record: SessionRecord
                 ) -> list[ItemResult]:
    """The items with a question for the judge decided (pending) or refined (code verdicts) by its answer."""
    user_turns = {t.turn_index for t in record.turns if t.role == "user"}
    return [_decide(r, answer, persona, record, user_turns) if r.question else r for r in results]


def _decide(r: ItemResult, a: JudgeAnswer, persona: Persona, record: SessionRecord, user_turns: set[int]
            ) -> ItemResult:
    from uxbench.sim.disclosure import allowed_from

    judged = replace(r, by="code+judge" if r.by.startswith("code") else "judge")
    if r.family in ("premature_disclosure", "never_disclose") and r.target is not None:
        entry = a.facts.get(r.target, {})
        conveyed, asked = entry.get("conveyed_at"), entry.get("asked_at")
        if r.question == "asked_before":  # code saw the value said before any request it could see
            said = r.turn
            ok = asked is not None and said is not None and asked < said
            return replace(judged, status="satisfied" if ok else "violated",
                           evidence=r.evidence + ("; the judge found a request before it" if ok else ""))
        if conveyed is None:
            return replace(judged, status="satisfied")
        if r.family == "never_disclose":
            return replace(judged, status="violated", turn=conveyed, evidence="conveyed in other words (judge)")
        fact = persona.fact(r.target)
        lines = [(t.role, t.text) for t in record.turns]
        pos = {t.turn_index: i for i, t in enumerate(record.turns)}
        asked_pos = pos.get(asked) if asked is not None else None
        allowed = allowed_from(fact.disclose, lines, asked_pos)
        ok = allowed is not None and pos.get(conveyed, -1) >= allowed
        return replace(judged, status="satisfied" if ok else "violated", turn=conveyed,
                       evidence="" if ok else "conveyed in other words before it was allowed (judge)")
    if r.family == "goal_pursuit" and r.target is not None:
        raised = a.goals_raised.get(r.target)
        return replace(judged, status="satisfied" if raised else "violated",
                       evidence="" if raised else "no user message asks for it (judge)")
    if r.family == "hallucination":
        bad = [t for t in a.hallucinated_turns if t in user_turns]
        return replace(judged, status="violated" if bad else "satisfied", turn=bad[0] if bad else None,
                       evidence=f"invented details in turn(s) {', '.join(map(str, bad))}" if bad else "")
    if r.family == "reaction_consistency":
        bad = [t for t in a.unprovoked_turns if t in user_turns]
        return replace(judged, status="violated" if bad else "satisfied", turn=bad[0] if bad else None,
                       evidence="a reaction without a failed reply (judge)" if bad else "")
    if r.family == "termination":
        if a.stopped_early is None:
            return r
        return replace(judged, status="violated" if a.stopped_early else "satisfied",
                       evidence="stopped while a goal item was pending (judge)" if a.stopped_early else "")
    return r
