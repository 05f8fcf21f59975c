"""The policy alone (no model): acts, patience, satisfaction, endings and recovery chains are pure, seeded code."""

from __future__ import annotations

from sim_support import REFUND, persona

from uxbench.sim.policy import initial_state, open_session, react
from uxbench.sim.spec import session_seed
from uxbench.sim.types import Assessment

FAIL = Assessment(failure="irrelevant")
HELP_REFUND = Assessment(completed=("refund",))


def drive(p, assessments, seed=7, max_turns=20):  # type: ignore[no-untyped-def]
    """The acts of a session whose replies are read as `assessments` in turn (the opener first)."""
    state, decision = open_session(p, initial_state(p), seed)
    acts = [decision.act]
    decisions = [decision]
    for i, assessment in enumerate(assessments, start=1):
        state, decision = react(p, state, assessment, seed, reply_turn=2 * i - 1, replies=i, max_turns=max_turns)
        acts.append(decision.act)
        decisions.append(decision)
        if decision.end is not None:
            break
    return acts, state, decisions


def test_patience_two_against_a_never_helping_assistant_rephrases_complains_then_gives_up_by_turn_four() -> None:
    acts, state, decisions = drive(persona(), [FAIL] * 10)
    assert acts == ["open", "rephrase", "complain", "dismiss"]  # the 4th user message ends it
    assert decisions[-1].end == "patience_exhausted"
    assert state.ended == "patience_exhausted"
    assert [c.outcome for c in state.chains] == ["user_gave_up"]
    sat = [d for d in decisions]  # satisfaction falls with every failure
    assert state.satisfaction < 3.0 and len(sat) == 4


def test_leaving_silently_is_the_other_way_to_give_up() -> None:
    p = persona(reactions={**REFUND["reactions"], "exhausted": {"dismiss": 0, "leave": 1}})
    acts, state, _ = drive(p, [FAIL] * 10)
    assert acts == ["open", "rephrase", "complain", "leave"] and state.ended == "patience_exhausted"


def test_helping_after_one_complaint_is_a_recovery() -> None:
    p = persona(reactions={**REFUND["reactions"], "failure": {"complain": 1}})
    acts, state, decisions = drive(p, [FAIL, HELP_REFUND, Assessment(completed=("timing",))])
    assert acts == ["open", "complain", "follow_up", "stop_success"]
    assert [c.outcome for c in state.chains] == ["recovered"]
    assert state.ended == "goal_complete" and decisions[-1].end == "goal_complete"
    assert decisions[2].item == "timing"  # the dependent item is raised once its dependency is complete


def test_same_seed_same_acts_other_trial_other_seed() -> None:
    mixed = persona(reactions={"failure": {"rephrase": 1, "repeat": 1, "complain": 1},
                               "failure_low": {"complain": 1, "dismiss": 1, "repeat": 1}, "like": 0.5,
                               "dislike": 0.5, "skim": 0.5}, patience={"session": 6})
    script = [FAIL, FAIL, FAIL, FAIL, FAIL, HELP_REFUND, FAIL]
    seeds = [session_seed(0, mixed, trial) for trial in range(12)]
    assert len(set(seeds)) == 12  # each trial its own seed
    runs = [drive(mixed, script, seed=s)[2] for s in seeds]
    assert runs[0] == drive(mixed, script, seed=seeds[0])[2]  # same seed: identical decisions
    assert len({tuple((d.act, d.feedback, d.skim) for d in r) for r in runs}) > 1


def test_disclosure_rules_in_the_decisions() -> None:
    p = persona()
    state, opening = open_session(p, initial_state(p), 1)
    assert opening.state_facts == () and "order" not in opening.allowed_facts  # on_request: not before asked
    state, answer = react(p, state, Assessment(asked_facts=("order", "card")), 1, reply_turn=1, replies=1,
                          max_turns=8)
    assert answer.act == "answer" and answer.state_facts == ("order",)
    assert answer.declined_facts == ("card",) and "card" not in answer.allowed_facts  # never: declined
    state, again = react(p, state, Assessment(asked_facts=("order",)), 1, reply_turn=3, replies=2, max_turns=8)
    assert again.act in ("rephrase", "complain")  # asking again for a given fact costs patience
    assert state.patience_left == 2 - 0.5


def test_max_turns_ends_after_the_last_reply_and_the_chain_without_a_retry_is_no_recovery() -> None:
    acts, state, decisions = drive(persona(patience={"session": 9}), [FAIL] * 3, max_turns=1)
    assert acts == ["open", "leave"] and decisions[-1].end == "max_turns"
    assert [c.outcome for c in state.chains] == ["no_recovery"]
    _, state, decisions = drive(persona(patience={"session": 9}), [FAIL] * 3, max_turns=2)
    assert decisions[-1].end == "max_turns" and [c.outcome for c in state.chains] == ["failed_recovery"]


def test_handoff_is_out_of_scope_and_per_item_budget_abandons_the_item() -> None:
    _, state, decisions = drive(persona(), [Assessment(handoff=True)])
    assert decisions[-1].end == "out_of_scope"
    p = persona(patience={"session": 9, "per_item": 1},
                goal=[{"id": "a", "request": "first thing", "check": {"any_of": ["done a"]}},
                      {"id": "b", "request": "second thing", "check": {"any_of": ["done b"]}}], facts=[])
    acts, state, decisions = drive(p, [FAIL, FAIL, Assessment(completed=("b",))])
    assert acts == ["open", "rephrase", "abandon_topic", "leave"]
    assert state.abandoned == ("a",) and decisions[2].item == "b"
    assert decisions[-1].end == "patience_exhausted"  # an item was given up on: not goal_complete


def test_replaced_is_model_copy_with_an_update() -> None:
    from uxbench.sim.policy import PolicyState
    from uxbench.sim.types import Chain, replaced

    state = PolicyState(patience_left=2.0, disclosed=("order",))
    chain = Chain(start_turn=3, actions=("repeat",))
    for model, update in [(state, {"satisfaction": 2.5, "chain": chain}), (state, {}),
                          (chain, {"outcome": "recovered", "retries": 1})]:
        mine, theirs = replaced(model, update), model.model_copy(update=update)
        assert type(mine) is type(theirs) and mine == theirs
        assert list(mine.__dict__.items()) == list(theirs.__dict__.items())  # field order kept
        assert mine.model_fields_set == theirs.model_fields_set
        assert mine.__pydantic_extra__ is theirs.__pydantic_extra__ is None
        assert mine.__pydantic_private__ is theirs.__pydantic_private__ is None
        assert mine.model_dump_json() == theirs.model_dump_json()
    assert replaced(state, {"satisfaction": 1.0}).satisfaction == 1.0 and state.satisfaction == 3.0
