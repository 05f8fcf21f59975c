"""The user policy: pure, seeded code that turns an assessment of the last reply into the next act.

`open_session` decides the first message; `react` decides every later one. Both are pure functions of
(persona, state, assessment, seed): the random draws of a turn come from `Random("<seed>:<turn>")`, so the same
seed gives the same acts in any process, and a session can be replayed turn by turn in a test without a model.

The rules, in order of precedence for a reply:
1. it hands the user off elsewhere (and completes nothing): the user leaves, `out_of_scope`;
2. it completes goal items: satisfaction rises (more after a complaint: a recovery); the next item whose
   dependencies are complete is raised, or the session ends `goal_complete` (thank-you message);
3. it asks for facts: the user answers with those it may say (`on_request` facts unlock here; `never` facts are
   declined; unknown ones, and `after_turn` facts asked before their turn, get "I don't know");
4. it fails (the assessor's failure kind, or a question for facts already given): the failure's cost comes off
   the patience. Beyond the session budget the user gives up (`exhausted` weights: a short dismissal or leaving
   silently), `patience_exhausted`. Beyond the item budget the item is abandoned for the next one. Otherwise
   the reaction is drawn from `reactions.failure`, or `failure_low` once less than `low_below` of the patience
   is left (a `dismiss` ends the session, an `abandon` drops the item);
5. otherwise (partial progress) the user follows up on the same item.
After the reply that reaches `max_turns`, the session ends `max_turns` unless it ended by rule 1 or 2.

Satisfaction s in [1, 5] starts at 3; a completed item adds 0.75 (0.5 more when it ends a recovery chain), an
answered question or partial progress 0.1, a failure takes 0.6 per unit of cost.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from uxbench.sim.persona import FailureKind, Persona
from uxbench.sim.types import Act, Assessment, Chain, ChainOutcome, Decision, Feedback, Reason, replaced

START_SATISFACTION = 3.0
GAIN_ITEM = 0.75
GAIN_RECOVERY = 0.5
GAIN_PROGRESS = 0.1
LOSS_PER_COST = 0.6


class PolicyState(BaseModel):
    """Everything the policy remembers between turns (immutable: each step returns a new one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_turns: int = 0
    """User messages decided so far (the opener is 1)."""
    satisfaction: float = START_SATISFACTION
    patience_left: float
    item_cost: dict[str, float] = Field(default_factory=dict)
    completed: tuple[str, ...] = ()
    abandoned: tuple[str, ...] = ()
    raised: tuple[str, ...] = ()
    active: str | None = None
    disclosed: tuple[str, ...] = ()
    """Facts stated so far."""
    requested: tuple[str, ...] = ()
    """Facts the assistant has asked for (an `on_request` fact may be said from then on)."""
    chain: Chain | None = None
    """The open recovery chain, if a failure is waiting for a good reply."""
    chains: tuple[Chain, ...] = ()
    """Closed chains, in order."""
    ended: Reason | None = None


def initial_state(persona: Persona) -> PolicyState:
    return PolicyState(patience_left=persona.patience.session)


def rng_for(seed: int, turn: int) -> random.Random:
    """The random source of one user turn: a stable function of (seed, turn), the same in every process."""
    return random.Random(f"{seed}:{turn}")


def open_session(persona: Persona, state: PolicyState, seed: int) -> tuple[PolicyState, Decision]:
    """The first message: raise the first goal item, with its `volunteer_if_adjacent` facts."""
    item = _next_item(persona, (), ())
    assert item is not None  # a persona has at least one item and no dependency cycle
    turn = state.user_turns + 1
    stated = _volunteered(persona, item, (), turn)
    decision = Decision(act="open", item=item, state_facts=stated,
                        allowed_facts=_allowed(persona, state, stated, turn))
    return _advance(state, decision, raised=item), decision


def react(persona: Persona, state: PolicyState, assessment: Assessment, seed: int, *, reply_turn: int,
          replies: int, max_turns: int) -> tuple[PolicyState, Decision]:
    """The next user message after the assistant reply `reply_turn` (its turn_index), the `replies`-th reply."""
    if state.ended is not None:
        raise ValueError(f"the session already ended ({state.ended})")
    turn = state.user_turns + 1
    rng = rng_for(seed, turn)
    draws = {name: rng.random() for name in ("feedback", "skim", "act", "close")}
    skim = draws["skim"] < persona.reactions.skim
    new_items = tuple(i for i in assessment.completed if i not in state.completed and i in _ids(persona))

    if assessment.handoff and not new_items:
        chain = None if state.chain is None else _close(
            state.chain, "failed_recovery" if state.chain.retries else "no_recovery")
        return _end(state, Decision(act="leave", item=state.active, skim=skim, end="out_of_scope"), chain)

    if new_items:
        return _progress(persona, state, assessment, new_items, draws, skim, turn, replies, max_turns)

    asked = tuple(f for f in assessment.asked_facts if f in {x.id for x in persona.facts})
    fresh = tuple(f for f in asked if f not in state.disclosed)
    if (fresh or (assessment.asked_other and not asked)) and assessment.failure is None:
        return _answer(persona, state, assessment, fresh, skim, turn, replies, max_turns)
    failure: FailureKind | None = assessment.failure
    if failure is None and asked and not fresh:
        failure = "redundant_question"
    if failure is not None:
        return _failure(persona, state, failure, draws, skim, turn, reply_turn, replies, max_turns)
    # partial progress: keep going on the same item
    state = replaced(state, {"satisfaction": _clamp(state.satisfaction + GAIN_PROGRESS)})
    stated = _volunteered(persona, state.active, state.disclosed, turn)
    decision = Decision(act="follow_up", item=state.active, state_facts=stated, skim=skim,
                        allowed_facts=_allowed(persona, state, stated, turn))
    return _finish(state, decision, replies, max_turns)


def _progress(persona: Persona, state: PolicyState, assessment: Assessment, new_items: tuple[str, ...],
              draws: dict[str, float], skim: bool, turn: int, replies: int,
              max_turns: int) -> tuple[PolicyState, Decision]:
    gain = GAIN_ITEM * len(new_items) + (GAIN_RECOVERY if state.chain is not None else 0.0)
    chains = state.chains + ((_close(state.chain, "recovered"),) if state.chain is not None else ())
    completed = state.completed + new_items
    state = replaced(state, {"satisfaction": _clamp(state.satisfaction + gain), "chain": None,
                                      "chains": chains, "completed": completed})
    feedback: Feedback | None = "like" if draws["feedback"] < persona.reactions.like else None
    abandoned = _cascade(persona, completed, state.abandoned)
    state = replaced(state, {"abandoned": abandoned})
    nxt = _next_item(persona, completed, abandoned)
    if nxt is None:
        if set(completed) >= _ids(persona):
            return _end(state, Decision(act="stop_success", item=None, feedback=feedback, skim=skim,
                                        allowed_facts=_allowed(persona, state, (), turn), end="goal_complete"))
        return _end(state, Decision(act="leave", feedback=feedback, skim=skim, end="patience_exhausted"))
    asked = tuple(f for f in assessment.asked_facts if f not in state.disclosed and _sayable(persona, f, turn))
    stated = tuple(dict.fromkeys(asked + _volunteered(persona, nxt, state.disclosed + asked, turn)))
    decision = Decision(act="follow_up", item=nxt, state_facts=stated, feedback=feedback, skim=skim,
                        allowed_facts=_allowed(persona, state, stated, turn),
                        declined_facts=_declined(persona, assessment.asked_facts))
    state = replaced(state, {"requested": _union(state.requested, assessment.asked_facts)})
    return _finish(state, decision, replies, max_turns, raised=nxt)


def _answer(persona: Persona, state: PolicyState, assessment: Assessment, fresh: tuple[str, ...], skim: bool,
            turn: int, replies: int, max_turns: int) -> tuple[PolicyState, Decision]:
    state = replaced(state, {"requested": _union(state.requested, fresh),
                                     "satisfaction": _clamp(state.satisfaction + GAIN_PROGRESS)})
    sayable = tuple(f for f in fresh if _sayable(persona, f, turn))
    declined = _declined(persona, fresh)
    unknown = assessment.asked_other or any(f not in sayable and f not in declined for f in fresh)
    stated = tuple(dict.fromkeys(sayable + _volunteered(persona, state.active, state.disclosed + sayable, turn)))
    decision = Decision(act="answer", item=state.active, state_facts=stated, declined_facts=declined,
                        unknown_asked=unknown, skim=skim, allowed_facts=_allowed(persona, state, stated, turn))
    return _finish(state, decision, replies, max_turns)


def _failure(persona: Persona, state: PolicyState, failure: FailureKind, draws: dict[str, float], skim: bool,
             turn: int, reply_turn: int, replies: int, max_turns: int) -> tuple[PolicyState, Decision]:
    cost = persona.patience.costs.of(failure)
    item = state.active
    item_cost = dict(state.item_cost)
    if item is not None:
        item_cost[item] = item_cost.get(item, 0.0) + cost
    chain = state.chain or Chain(start_turn=reply_turn)
    if state.chain is not None:
        chain = replaced(chain, {"retries": chain.retries + 1, "actions": (*chain.actions, "retry")})
    patience_left = state.patience_left - cost
    # the failure's own changes, applied with the next step's (one copy of the state, not three)
    update: dict[str, Any] = {"patience_left": patience_left, "item_cost": item_cost, "chain": chain,
                              "satisfaction": _clamp(state.satisfaction - LOSS_PER_COST * cost)}
    feedback: Feedback | None = "dislike" if draws["feedback"] < persona.reactions.dislike else None
    reactions = persona.reactions
    if patience_left < 0:
        state = replaced(state, update)
        closing = reactions.exhausted
        act: Act = "dismiss" if draws["close"] * (closing.dismiss + closing.leave) < closing.dismiss else "leave"
        return _end(state, Decision(act=act, item=item, feedback=feedback, skim=skim, end="patience_exhausted",
                                    allowed_facts=_allowed(persona, state, (), turn)),
                    _close(_acted(chain, act), "user_gave_up"))
    over_item = persona.patience.per_item is not None and item is not None and \
        item_cost[item] > persona.patience.per_item
    if over_item:
        choice = "abandon"
    else:
        budget = persona.patience.session
        share = patience_left / budget if budget > 0 else 0.0
        weights = (reactions.failure_low if share < reactions.low_below else reactions.failure).items()
        choice = _draw(weights, draws["act"])
    if choice in ("dismiss", "abandon"):
        state = replaced(state, update)
    if choice == "dismiss":
        return _end(state, Decision(act="dismiss", item=item, feedback=feedback, skim=skim, end="patience_exhausted",
                                    allowed_facts=_allowed(persona, state, (), turn)),
                    _close(_acted(chain, "dismiss"), "user_gave_up"))
    if choice == "abandon":
        return _abandon(persona, state, _acted(chain, "abandon_topic"), feedback, skim, turn, replies, max_turns)
    update["chain"] = _acted(chain, choice)
    act = "repeat" if choice == "repeat" else "rephrase" if choice == "rephrase" else "complain"
    decision = Decision(act=act, item=item, feedback=feedback, skim=skim,
                        allowed_facts=_allowed(persona, state, (), turn))  # reads state.disclosed: not in update
    return _finish(state, decision, replies, max_turns, update=update)


def _abandon(persona: Persona, state: PolicyState, chain: Chain, feedback: Feedback | None, skim: bool, turn: int,
             replies: int, max_turns: int) -> tuple[PolicyState, Decision]:
    abandoned = state.abandoned + ((state.active,) if state.active and state.active not in state.abandoned else ())
    abandoned = _cascade(persona, state.completed, abandoned)
    closed = _close(chain, "user_gave_up")
    state = replaced(state, {"abandoned": abandoned})
    nxt = _next_item(persona, state.completed, abandoned)
    if nxt is None:
        return _end(state, Decision(act="leave", item=state.active, feedback=feedback, skim=skim,
                                    end="patience_exhausted"), closed)
    state = replaced(state, {"chain": None, "chains": (*state.chains, closed)})
    stated = _volunteered(persona, nxt, state.disclosed, turn)
    decision = Decision(act="abandon_topic", item=nxt, state_facts=stated, feedback=feedback, skim=skim,
                        allowed_facts=_allowed(persona, state, stated, turn))
    return _finish(state, decision, replies, max_turns, raised=nxt)


def _finish(state: PolicyState, decision: Decision, replies: int, max_turns: int,
            raised: str | None = None, update: dict[str, Any] | None = None) -> tuple[PolicyState, Decision]:
    """Apply a non-final decision, unless this reply was the last one allowed (then: `max_turns`). `update`: changes
    to the state not applied yet (none of the fields `_advance` sets)."""
    if replies >= max_turns:
        if update:
            state = replaced(state, update)
        chain = state.chain
        outcome: ChainOutcome = "failed_recovery" if chain is not None and chain.retries else "no_recovery"
        ending = Decision(act="leave", item=state.active, feedback=decision.feedback, skim=decision.skim,
                          end="max_turns")
        return _end(state, ending, _close(chain, outcome) if chain is not None else None)
    return _advance(state, decision, raised=raised, update=update), decision


def _end(state: PolicyState, decision: Decision, closed: Chain | None = None) -> tuple[PolicyState, Decision]:
    chains = state.chains + ((closed,) if closed is not None else ())
    state = replaced(state, {"chain": None, "chains": chains})
    return replaced(_advance(state, decision), {"ended": decision.end}), decision


def _advance(state: PolicyState, decision: Decision, raised: str | None = None,
             update: dict[str, Any] | None = None) -> PolicyState:
    changes: dict[str, Any] = dict(update) if update else {}
    changes["user_turns"] = state.user_turns + (0 if decision.act == "leave" else 1)
    changes["disclosed"] = _union(state.disclosed, decision.state_facts)
    if raised is not None:
        changes["raised"] = _union(state.raised, (raised,))
        changes["active"] = raised
    return replaced(state, changes)


def _acted(chain: Chain, act: str) -> Chain:
    return replaced(chain, {"actions": (*chain.actions, act)})


def _close(chain: Chain | None, outcome: ChainOutcome) -> Chain:
    assert chain is not None
    return replaced(chain, {"outcome": outcome})


def _draw(weights: dict[Any, float], u: float) -> str:
    total = sum(weights.values())
    acc = 0.0
    for name, weight in weights.items():
        acc += weight
        if u * total < acc:
            return str(name)
    return str(next(name for name, w in reversed(list(weights.items())) if w > 0))


def _ids(persona: Persona) -> set[str]:
    return {g.id for g in persona.goal}


def _next_item(persona: Persona, completed: tuple[str, ...], abandoned: tuple[str, ...]) -> str | None:
    """The first goal item, in order, that is open and whose dependencies are complete."""
    for item in persona.goal:
        if item.id in completed or item.id in abandoned:
            continue
        if all(dep in completed for dep in item.after):
            return item.id
    return None


def _cascade(persona: Persona, completed: tuple[str, ...], abandoned: tuple[str, ...]) -> tuple[str, ...]:
    """Abandoned items plus every open item that depends (transitively) on one."""
    out = list(abandoned)
    changed = True
    while changed:
        changed = False
        for item in persona.goal:
            if item.id not in out and item.id not in completed and any(d in out for d in item.after):
                out.append(item.id)
                changed = True
    return tuple(out)


def _sayable(persona: Persona, fact_id: str, turn: int) -> bool:
    fact = persona.fact(fact_id)
    if fact.mode == "never":
        return False
    if fact.mode == "after_turn":
        return turn >= (fact.from_turn or 0)
    return True


def _declined(persona: Persona, asked: tuple[str, ...]) -> tuple[str, ...]:
    ids = {f.id: f for f in persona.facts}
    return tuple(f for f in asked if f in ids and ids[f].mode == "never")


def _volunteered(persona: Persona, item: str | None, disclosed: tuple[str, ...], turn: int) -> tuple[str, ...]:
    """Facts the user says unasked this turn: an item's `volunteer_if_adjacent` facts when it is raised, and
    `after_turn:K` facts from turn K."""
    out: list[str] = []
    needs = persona.goal_item(item).needs if item is not None else ()
    for fact in persona.facts:
        if fact.id in disclosed:
            continue
        if fact.mode == "volunteer_if_adjacent" and fact.id in needs:
            out.append(fact.id)
        elif fact.mode == "after_turn" and turn >= (fact.from_turn or 0):
            out.append(fact.id)
    return tuple(out)


def _allowed(persona: Persona, state: PolicyState, stated: tuple[str, ...], turn: int) -> tuple[str, ...]:
    """What the realiser may mention: facts already said, opening facts, and what this turn states."""
    out = [f.id for f in persona.facts
           if f.id in state.disclosed or f.id in stated or f.mode == "opening"]
    return tuple(out)


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a + b))


def _clamp(value: float) -> float:
    return round(min(5.0, max(1.0, value)), 4)
