"""Endings: stop markers in free mode, empty simulator output, a stop with a goal item pending, the turn limit;
each recorded with its reason, none a crash. A bad output is discarded and regenerated once, never edited."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_support import helpful_rules, persona, rules_file, run

from uxbench.models.model import create_model
from uxbench.sim.assess import RulesAssessor
from uxbench.sim.gate import gate_flags
from uxbench.sim.realize import ModelRealiser
from uxbench.sim.scripted import ScriptedRealiser
from uxbench.sim.session import Parties, SessionPlan, run_session
from uxbench.sim.types import SessionRecord

OPENER = "I need a refund for my broken kettle."


def _session(tmp_path: Path, simulator_rules: list[tuple[str, str]], default: str, *, mode: str = "free",
             max_turns: int = 6, assistant: str | None = None) -> SessionRecord:
    sim = create_model(f"scripted:file:{rules_file(tmp_path / 'sim.json', simulator_rules, default)}")
    mut = create_model(assistant or f"scripted:file:{helpful_rules(tmp_path / 'mut.json')}")
    p = persona(patience={"session": 9})
    plan = SessionPlan("s", 0, p, p.content_hash(), 0, 11, mode, max_turns)  # type: ignore[arg-type]
    return run(run_session(plan, Parties(mut, ModelRealiser(sim), RulesAssessor())))


def test_stop_marker_inside_a_sentence_is_regenerated_then_an_error(tmp_path: Path) -> None:
    record = _session(tmp_path, [(r"has not started", OPENER)], "Thanks, that is all ###STOP### for today.")
    assert record.termination.reason == "error"
    assert "stop marker inside a message" in record.termination.detail
    assert len(record.user_turns) == 1  # the bad message was never sent, nor edited into something else


def test_an_empty_simulator_completion_is_retried_once_then_an_error(tmp_path: Path) -> None:
    for mode in ("free", "structured"):
        record = _session(tmp_path, [], "", mode=mode)
        assert record.termination.reason == "error" and "empty; empty" in record.termination.detail, mode
        assert record.turns == []


def test_a_stop_with_a_confirmation_while_an_item_is_pending_is_not_taken(tmp_path: Path) -> None:
    record = _session(tmp_path, [(r"has not started", OPENER)],
                      "Yes, my order number is KX-99173, please go ahead. ###STOP###")
    assert record.termination.reason == "error" and "stop marker inside a message" in record.termination.detail
    bare = _session(tmp_path, [(r"has not started", OPENER)], "###STOP###")
    assert bare.termination.reason == "error" and bare.termination.detail.startswith("premature stop")
    assert "premature_end" in {f["type"] for f in gate_flags(bare, persona())}


def test_a_stop_once_everything_is_done_completes_the_goal(tmp_path: Path) -> None:
    record = _session(tmp_path, [(r"has not started", OPENER), (r"5 business days", "Great, bye! ###STOP###"),
                                 (r"refund is on its way", "How long does the refund take?"),
                                 (r"order number\?", "It is KX-99173.")], "###STOP###")
    assert record.success and record.termination.reason == "goal_complete", record.turns
    leave = _session(tmp_path, [(r"has not started", OPENER)], "###LEAVE###")
    assert leave.termination.reason == "patience_exhausted"
    out = _session(tmp_path, [(r"has not started", OPENER)], " ###OUT_OF_SCOPE### ")
    assert out.termination.reason == "out_of_scope"


@pytest.mark.parametrize("mode", ["structured", "free"])
def test_the_turn_limit_ends_a_session(tmp_path: Path, mode: str) -> None:
    if mode == "free":
        record = _session(tmp_path, [(r"has not started", OPENER)], "Can you help me or not?", max_turns=3,
                          assistant="scripted:always-bad")
    else:
        p = persona(patience={"session": 50})
        plan = SessionPlan("s", 0, p, p.content_hash(), 0, 5, "structured", 3)
        record = run(run_session(plan, Parties(create_model("scripted:always-bad"), ScriptedRealiser(),
                                               RulesAssessor())))
    assert record.termination.reason == "max_turns" and record.assistant_turns == 3


def test_reasoning_or_state_in_a_structured_message_is_discarded_not_edited(tmp_path: Path) -> None:
    sim = create_model(f"scripted:file:{rules_file(tmp_path / 's.json', [], 'Thought: complain now. This is useless')}")
    p = persona()
    plan = SessionPlan("s", 0, p, p.content_hash(), 0, 1, "structured", 4)
    record = run(run_session(plan, Parties(create_model("scripted:always-bad"), ModelRealiser(sim), RulesAssessor())))
    assert record.termination.reason == "error" and "reasoning text; reasoning text" in record.termination.detail
