"""`uxbench sim rubric-agreement`: does a persona's own rubric predict the real user's reaction better than the
general one? (§3.7 of SIMULATORS.md, PALATE's claim test.)

Items: the held-out assistant replies of the real conversations personas were built from (`personas build
--holdout prefix:F`): the persona, and so its rubric, saw only the turns before them. Each reply is scored by the
judge twice, with the general rubric (`ux_general`, or `--general`) and with the personalised one (the persona's
rubric items as 1-5 dimensions), through Task 1's rubric formulation (`scoring.rubric`). The outcome is the real
user's: the thumbs where the log has them, else the next message's reaction by the mining rules (dissatisfied:
repeat, rephrase, complaint, dismissal).

Reported per rubric: AUC of the rubric score for a satisfied outcome and accuracy of its good / bad verdict, and
the paired difference personalised - general, all with cluster-bootstrap intervals over conversations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from uxbench.data.schema import Message
from uxbench.metrics.auc import auc, auc_and_placements
from uxbench.metrics.proportions import finite_or_none, percentile_interval
from uxbench.scoring.prompts import JudgeInput
from uxbench.scoring.rubric import Localised, Rubric, RubricDimension
from uxbench.sim.mined import MinedConversation
from uxbench.sim.persona import Persona
from uxbench.sim.reactions import DISSATISFIED, reaction_of, thumbs_of

Outcome = Literal["good", "bad"]


@dataclass(frozen=True)
class Item:
    """One held-out real reply, its context, and the real user's outcome."""

    conversation: str
    """The conversation digest (the bootstrap's cluster)."""
    persona: Persona
    judge_input: JudgeInput
    outcome: Outcome
    source: Literal["thumbs", "reaction"]


def personal_rubric(persona: Persona) -> Rubric | None:
    """The persona's rubric items as a rubric of 1-5 dimensions (how far the reply meets each); None without items."""
    if not persona.rubric:
        return None
    dims = tuple(RubricDimension(
        key=_key(item.id), low=1, high=5,
        name=Localised(en=item.id.replace("_", " "), zh=item.id.replace("_", " ")),
        description=Localised(en=f"How far the reply meets this: {item.text} (1: not at all, 5: fully)",
                              zh=f"回复在多大程度上做到了：{item.text}（1：完全没有，5：完全做到）"),
    ) for item in persona.rubric)
    return Rubric(id=f"persona-{_key(persona.id)}-{persona.content_hash()[:8]}",
                  title=Localised(en="this user's own rubric", zh="这位用户自己的评分表"),
                  source=f"persona {persona.id} ({persona.content_hash()})", dimensions=dims)


def _key(text: str) -> str:
    import re

    key = re.sub(r"[^a-z0-9_]", "_", text.lower()).strip("_") or "item"
    return key if key[0].isalpha() else f"i_{key}"


def held_out_items(persona: Persona, conv: MinedConversation) -> tuple[list[Item], str | None]:
    """The held-out replies of the persona's conversation with a real outcome; or ([], why not)."""
    split = persona.meta.get("holdout") if isinstance(persona.meta, dict) else None
    if not isinstance(split, dict) or split.get("rule") != "prefix":
        return [], "not built with --holdout prefix:F (its rubric may have seen the outcomes)"
    start = split.get("held_out_from_turn_index")
    if start is None:
        return [], "no held-out turns"
    items: list[Item] = []
    seen: list[Message] = []
    for turn in conv.turns:
        row = conv.signals.get(turn.turn_index)
        if (turn.role == "assistant" and seen and seen[-1].role == "user" and turn.turn_index >= int(start)
                and row is not None):
            context = JudgeInput(tuple(seen[:-1]), seen[-1].content, turn.text, persona.lang)
            thumbs, reaction = thumbs_of(row), reaction_of(row)
            if thumbs is not None:
                items.append(Item(conv.digest, persona, context, "good" if thumbs == "like" else "bad", "thumbs"))
            elif reaction != "end":
                items.append(Item(conv.digest, persona, context, "bad" if reaction in DISSATISFIED else "good",
                                  "reaction"))
        seen.append(Message(role="user" if turn.role == "user" else "assistant", content=turn.text))
    return items, None if items else "no held-out reply with a real outcome"


def _paired_auc_diff(a: list[float], b: list[float], y: list[bool], clusters: list[str], n_boot: int, seed: int
                     ) -> dict[str, Any]:
    """AUC(a) - AUC(b) on the same items, percentile interval from a bootstrap over clusters."""
    sa, sb, ya = np.asarray(a, float), np.asarray(b, float), np.asarray(y, bool)
    if ya.all() or not ya.any():
        return {"value": None, "ci_low": None, "ci_high": None}
    value = auc_and_placements(sa[ya], sa[~ya])[0] - auc_and_placements(sb[ya], sb[~ya])[0]
    ids, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    members = [np.flatnonzero(inverse == c) for c in range(ids.size)]
    rng = np.random.default_rng(seed)
    reps = np.full(n_boot, np.nan)
    for i in range(n_boot):
        idx = np.concatenate([members[c] for c in rng.integers(0, ids.size, size=ids.size)])
        yb = ya[idx]
        if yb.all() or not yb.any():
            continue
        reps[i] = (auc_and_placements(sa[idx][yb], sa[idx][~yb])[0]
                   - auc_and_placements(sb[idx][yb], sb[idx][~yb])[0])
    low, high = percentile_interval(reps, 0.95)
    return {"value": float(value), "ci_low": finite_or_none(low), "ci_high": finite_or_none(high),
            "n_boot": n_boot, "seed": seed}


def _accuracy(labels: list[str | None], y: list[bool], clusters: list[str], n_boot: int, seed: int
              ) -> dict[str, Any]:
    from uxbench.metrics.session import cluster_ratio

    by: dict[str, list[float]] = {}
    for label, good, c in zip(labels, y, clusters, strict=True):
        acc = by.setdefault(c, [0.0, 0.0])
        acc[0] += float(label == ("good" if good else "bad"))
        acc[1] += 1.0
    keys = sorted(by)
    return cluster_ratio(np.array([by[k][0] for k in keys]), np.array([by[k][1] for k in keys]),
                         n_boot=n_boot, seed=seed)


def compare(scored: list[tuple[Item, float | None, str | None, float | None, str | None]], *, n_boot: int = 2000,
            seed: int = 0) -> dict[str, Any]:
    """Figures over items scored by both rubrics: (item, general score, general label, personal score, its label).
    Items either rubric could not score are left out and counted."""
    both = [s for s in scored if s[1] is not None and s[3] is not None]
    y = [s[0].outcome == "good" for s in both]
    clusters = [s[0].conversation for s in both]
    general = [float(s[1]) for s in both if s[1] is not None]
    personal = [float(s[3]) for s in both if s[3] is not None]
    return {
        "n_items": len(both), "n_unscored": len(scored) - len(both), "n_conversations": len(set(clusters)),
        "n_good": sum(y), "n_bad": len(y) - sum(y),
        "outcome_sources": {src: sum(1 for s in both if s[0].source == src) for src in ("thumbs", "reaction")},
        "general": {"auc": auc(general, y, clusters=clusters, n_boot=n_boot, seed=seed),
                    "accuracy": _accuracy([s[2] for s in both], y, clusters, n_boot, seed)},
        "personal": {"auc": auc(personal, y, clusters=clusters, n_boot=n_boot, seed=seed),
                     "accuracy": _accuracy([s[4] for s in both], y, clusters, n_boot, seed)},
        "auc_difference": {**_paired_auc_diff(personal, general, y, clusters, n_boot, seed),
                           "definition": "AUC(personalised) - AUC(general), paired over the same replies"},
    }


Scorer = Callable[[JudgeInput, Rubric], Any]
"""(item, rubric) -> awaitable (score in [0, 1] or None, good / bad / None)."""


async def rubric_agreement(source: Any, personas: list[Persona], model: Any, *, general: str = "ux_general",
                           strategy: str = "zero_shot", n_boot: int = 2000, seed: int = 0, width: int = 8,
                           tick: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Score the held-out replies of `source` (a mining output) with both rubrics and compare (module docstring)."""
    from collections import Counter

    from uxbench.errors import ConfigError, ModelError, UxbenchError
    from uxbench.mining.llm import map_bounded
    from uxbench.orchestrate.progress import FailureGuard
    from uxbench.scoring.pointwise import PointwiseJudge
    from uxbench.scoring.prompts import PromptOptions
    from uxbench.scoring.rubric import load_rubric
    from uxbench.sim.mined import iter_mined

    general_rubric = load_rubric(general)
    by_digest = {p.source.split(":", 1)[1]: p for p in personas if p.source.startswith("mined:")}
    skipped: Counter[str] = Counter()
    skipped["not_mined"] = len(personas) - len(by_digest)
    items: list[Item] = []
    found: set[str] = set()
    for conv in iter_mined(source):
        persona = by_digest.get(conv.digest)
        if persona is None:
            continue
        found.add(conv.digest)
        if personal_rubric(persona) is None:
            skipped["no_rubric_items"] += 1
            continue
        got, why = held_out_items(persona, conv)
        if why:
            skipped[why] += 1
        items.extend(got)
    skipped["source_conversation_not_found"] = len(set(by_digest) - found)
    if not items:
        reasons = ", ".join(f"{k}: {v}" for k, v in skipped.items() if v) or "no persona"
        raise ConfigError(f"No held-out real reply to score ({len(personas)} personas; {reasons}). Build the personas "
                          "from this mining output with `uxbench personas build --from MINE_RUN --holdout prefix:0.5`.")

    def judge_for(rubric: Rubric, lang: str) -> PointwiseJudge:
        options = PromptOptions.model_validate({"formulation": "rubric", "rubric": general, "strategy": strategy,
                                                "lang": lang})
        return PointwiseJudge(options, rubric=rubric, max_tokens=400)  # the rubric object wins over the name

    done = 0
    # a judge whose first answers all fail (a wrong key or URL, answers never in the rubric's format) stops the
    # pass early, as `uxbench run` does; answers are in the response cache, so a rerun does not pay for them again
    guard = FailureGuard("rubric judgements", None, "Check the judge's model name, base_url and API key, and that "
                         "it answers in the rubric's format", kept="answers so far are in the response cache: rerun "
                         "the same command once the judge works")
    errors: list[str] = []

    async def one(item: Item) -> tuple[Item, float | None, str | None, float | None, str | None]:
        nonlocal done
        out: list[Any] = [item]
        for rubric in (general_rubric, personal_rubric(item.persona)):
            assert rubric is not None
            try:
                judgement = await judge_for(rubric, item.persona.lang).judge(item.judge_input, model)
            except ModelError as err:
                out += [None, None]
                errors.append(f"model error: {err}")
                guard.failure(errors[-1])
                continue
            out += [judgement.score, judgement.label]
            if judgement.score is None:
                guard.failure(f"an answer not in the rubric's format ({judgement.note})")
            else:
                guard.success()
        done += 1
        if tick is not None:
            tick(done, len(items))
        return out[0], out[1], out[2], out[3], out[4]

    scored = await map_bounded(items, one, width)
    figures = compare(scored, n_boot=n_boot, seed=seed)
    if not figures["n_items"]:
        first = errors[0] if errors else (guard.first_errors[0] if guard.first_errors else "no answer")
        raise UxbenchError(f"The judge scored none of the {len(items)} held-out replies on both rubrics, so there is "
                           f"nothing to compare. First problem: {first.rstrip('.')}. Check the judge's model name, "
                           "base_url and API key, and that it answers in the rubric's format.")
    return {"kind": "uxbench.sim.rubric_agreement", "general_rubric": general_rubric.id,
            "general_digest": general_rubric.digest(), "strategy": strategy, "n_personas": len(personas),
            "skipped_personas": {k: v for k, v in skipped.items() if v}, "judge_errors": len(errors),
            "first_judge_error": errors[0] if errors else None, **figures}
