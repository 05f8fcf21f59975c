"""Whole sessions: the loop with a scripted assistant, and disclosure in structured mode (every realiser prompt and
every transcript searched)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sim_support import REFUND, ZH_REFUND, helpful_rules, persona, run

from uxbench.models.model import create_model
from uxbench.sim.assess import RulesAssessor
from uxbench.sim.realize import ModelRealiser
from uxbench.sim.scripted import ScriptedRealiser
from uxbench.sim.session import Parties, SessionPlan, run_session
from uxbench.sim.types import Decision
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer


def _plan(p: Any, seed: int = 3, max_turns: int = 8) -> SessionPlan:
    return SessionPlan("s", 0, p, p.content_hash(), 0, seed, "structured", max_turns)


def test_a_helpful_assistant_completes_every_goal_item_en_and_zh(tmp_path: Path) -> None:
    assistant = create_model(f"scripted:file:{helpful_rules(tmp_path / 'rules.json')}")
    for data in (REFUND, ZH_REFUND):
        p = persona(data)
        record = run(run_session(_plan(p), Parties(assistant, ScriptedRealiser(), RulesAssessor())))
        acts = [t.act for t in record.user_turns]
        assert record.success and record.termination.reason == "goal_complete", record.turns
        assert acts == ["open", "answer", "follow_up", "stop_success"]
        value = p.fact("order").value
        assert value in record.user_turns[1].text and record.user_turns[1].facts_stated == ("order",)
        assert value not in record.user_turns[0].text  # on_request: not in the opener
        assert [t.created_at for t in record.turns] == sorted(t.created_at for t in record.turns)
        assert record.usage["assistant"].calls == 3


def test_structured_mode_never_says_an_unrequested_fact(tmp_path: Path) -> None:
    prompts: list[str] = []

    def realiser(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        prompts.append(json.dumps(messages, ensure_ascii=False))
        system = str(messages[0]["content"])
        # a model that would say anything it was shown: it echoes every fact line of its prompt
        shown = [re.sub(r"^.*?(state|说出|fits|提到)\s*[:：]\s*", "", line.strip()) for line in system.splitlines()
                 if ("number" in line or "订单号" in line) and not line.lstrip().startswith("-")]
        return ("I still need help. " + " ".join(shown)).strip()

    with LoopbackServer(LoopbackConfig(responder=realiser)) as server:
        sim = create_model("openai:realiser", {"base_url": server.base_url, "api_key_env": "UXBENCH_NO_SUCH_KEY"})
        never_asks = create_model("scripted:always-bad")
        records = []
        for data in (REFUND, ZH_REFUND):
            for seed in range(5):
                p = persona(data, patience={"session": 6})
                parties = Parties(never_asks, ModelRealiser(sim, temperature=0.0), RulesAssessor())
                records.append(run(run_session(_plan(p, seed=seed, max_turns=6), parties)))
        run(sim.aclose())
    assert len(prompts) >= 20
    for value in ("KX-99173", "KX-88120", "4111 2222 3333 4444"):
        assert not any(value in prompt for prompt in prompts)
        assert not any(value in t.text for r in records for t in r.turns)
    assert all(r.termination.reason in ("patience_exhausted", "max_turns") for r in records)


def test_an_asked_fact_reaches_the_realiser_only_from_that_turn(tmp_path: Path) -> None:
    prompts: list[str] = []

    def realiser(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        prompts.append(str(messages[0]["content"]))
        return "Here you go." if "KX-99173" in prompts[-1] else "I need a refund for my broken kettle."

    with LoopbackServer(LoopbackConfig(responder=realiser)) as server:
        sim = create_model("openai:realiser", {"base_url": server.base_url, "api_key_env": "UXBENCH_NO_SUCH_KEY"})
        assistant = create_model(f"scripted:file:{helpful_rules(tmp_path / 'rules.json')}")
        record = run(run_session(_plan(persona()), Parties(assistant, ModelRealiser(sim), RulesAssessor())))
        run(sim.aclose())
    seen = ["KX-99173" in p for p in prompts]
    assert seen[0] is False and seen[1] is True  # the opener's prompt lacks it; the answer's (asked for) has it
    assert record.user_turns[1].act == "answer"


def test_the_assistant_reads_at_each_reply_the_projection_of_the_turns_so_far(tmp_path: Path) -> None:
    """The transcript kept per session (`AssistantTranscript`, extended as turns are added) is what
    `project("assistant", ...)` makes of the turns before each reply: nothing lost, repeated or reordered."""
    from uxbench.sim.projection import SessionView, project

    assistant = create_model(f"scripted:file:{helpful_rules(tmp_path / 'rules.json')}")
    seen: list[list[Any]] = []
    real = assistant.generate

    async def recording(messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        seen.append(list(messages))
        return await real(messages, *args, **kwargs)

    assistant.generate = recording  # type: ignore[method-assign]
    p = persona(REFUND)
    record = run(run_session(_plan(p), Parties(assistant, ScriptedRealiser(), RulesAssessor())))
    assert len(seen) == record.usage["assistant"].calls >= 3
    for messages in seen:
        upto = [t for t in record.turns][: len(messages)]
        assert messages == project("assistant", SessionView(persona=p, turns=upto))
        assert [m.role for m in messages][-1] == "user"


def test_the_assessor_view_made_once_per_persona_and_state_is_the_one_of_that_state() -> None:
    """Its goal items and facts are kept per persona and (completed, disclosed): each state still gets its own
    values, an edited persona (another object) its own facts, and a fact without patterns its label escaped."""
    from uxbench.sim.projection import FactView, SessionView, project

    p = persona(facts=[*REFUND["facts"], {"id": "city", "label": "city (home)", "value": "Leeds"}])
    turns: list[Any] = []
    before = project("assessor", SessionView(persona=p, turns=turns))
    said = project("assessor", SessionView(persona=p, turns=turns, completed=("refund",), disclosed=("order",)))
    again = project("assessor", SessionView(persona=p, turns=turns))
    assert before == again and [f.value for f in before.facts] == [None, None, None]
    assert [f.value for f in said.facts] == ["KX-99173", None, None]
    assert [g.done for g in said.goal] == [True, False] and [g.done for g in before.goal] == [False, False]
    assert said.facts[2] == FactView("city", "city (home)", None, patterns=(re.escape("city (home)"),))
    edited = p.model_copy(update={"facts": (p.facts[0].model_copy(update={"value": "ZZ-1"}),)})
    shown = project("assessor", SessionView(persona=edited, turns=turns, disclosed=("order",)))
    assert [f.value for f in shown.facts] == ["ZZ-1"]
    realiser = project("realiser", SessionView(persona=edited, turns=turns, decision=Decision(
        act="answer", item="refund", state_facts=("order",))))
    assert realiser.state_facts == (FactView("order", "order number", "ZZ-1"),)


def test_the_realiser_view_extends_the_sessions_lines_and_reads_as_without_them() -> None:
    from uxbench.sim.projection import Line, SessionView, project
    from uxbench.sim.types import SimTurn

    p = persona()
    turns = [SimTurn(turn_index=0, role="user", text="hi", created_at="t", act="open", item="refund"),
             SimTurn(turn_index=1, role="assistant", text="what?", created_at="t")]
    decision = Decision(act="rephrase", item="refund")
    kept: list[Line] = []
    first = project("realiser", SessionView(persona=p, turns=turns[:1], decision=decision, lines=kept))
    assert first.transcript == (Line("user", "hi"),) and kept == [Line("user", "hi")]
    second = project("realiser", SessionView(persona=p, turns=turns, decision=decision, lines=kept))
    assert second == project("realiser", SessionView(persona=p, turns=turns, decision=decision))
    assert kept == [Line("user", "hi"), Line("assistant", "what?")]
    counted = SessionView(persona=p, turns=turns, decision=decision, user_messages=1)
    assert project("realiser", counted) == second and second.turn == 2
    assert project("assessor", counted) == project("assessor", SessionView(persona=p, turns=turns))


def test_the_ledger_sums_each_call_as_usage_add_would() -> None:
    from uxbench.models.api import ModelOutput
    from uxbench.models.api import Usage as Tokens
    from uxbench.runtime.cost import Price
    from uxbench.sim.session import Ledger
    from uxbench.sim.types import Usage

    outs = [ModelOutput(text="a", usage=Tokens(input_tokens=3, output_tokens=5)),
            ModelOutput(text="b", usage=Tokens(input_tokens=7, output_tokens=1), cached=True),
            ModelOutput(text="c", usage=Tokens(input_tokens=2, output_tokens=9))]
    ledger = Ledger({"assistant": Price(0.5, 2.0), "judge": None})
    for party in ("assistant", "judge", "simulator"):
        expected = Usage()
        for out in outs:
            ledger.add(party, out)
            price = ledger.prices.get(party)
            u = out.usage
            one = Usage(calls=1, cached_calls=1, cached_input_tokens=u.input_tokens,
                        cached_output_tokens=u.output_tokens) if out.cached else Usage(
                calls=1, input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                cost_usd=None if price is None else price.cost(u.input_tokens, u.output_tokens))
            expected = expected.add(one)
            assert ledger.usage[party].model_dump_json() == expected.model_dump_json()
    price = Price(0.5, 2.0)
    assert ledger.usage["judge"].cost_usd is None
    assert ledger.usage["assistant"].cost_usd == price.cost(3, 5) + price.cost(2, 9)
