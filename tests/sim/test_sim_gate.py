"""The corruption gate: one session per corruption type is flagged with that type; a clean session is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sim_support import ZH_REFUND, persona

from uxbench.sim.gate import GATE_TYPES, gate_flags
from uxbench.sim.types import SessionRecord, SimTurn, Termination

P = persona()


def session(turns: list[tuple[str, str, str | None]], *, reason: str = "goal_complete", detail: str = "",
            completed: tuple[str, ...] = ("refund", "timing"), p: Any = P) -> SessionRecord:
    return SessionRecord(
        session_id="s", index=0, persona_id=p.id, persona_hash=p.content_hash(), lang=p.lang, trial=0, seed=1,
        mode="structured", turns=[SimTurn(turn_index=i, role=role, text=text, created_at="2025-01-06T09:00:00Z",
                                          act=act) for i, (role, text, act) in enumerate(turns)],  # type: ignore[arg-type]
        termination=Termination(reason=reason, detail=detail), completed=completed,  # type: ignore[arg-type]
        goal_items=tuple(g.id for g in p.goal))


CLEAN = [
    ("user", "Hi. I need help with this: get a refund for the broken kettle.", "open"),
    ("assistant", "Sure. What is your order number?", None),
    ("user", "My order number is KX-99173.", "answer"),
    ("assistant", "Thanks. Your refund is on its way.", None),
    ("user", "Thanks, that helps. Next: how long the refund takes?", "follow_up"),
    ("assistant", "It takes 5 business days.", None),
    ("user", "Great, that's everything I needed. Thanks!", "stop_success"),
]


def _with(index: int, text: str, act: str | None = None) -> list[tuple[str, str, str | None]]:
    turns = list(CLEAN)
    turns[index] = ("user", text, act or turns[index][2])
    return turns


CASES = {
    "premature_end": session([*CLEAN[:5], ("assistant", "Anything else?", None),
                              ("user", "Great, thanks, bye!", "stop_success")],
                             completed=("refund",)),
    "looping": session([*CLEAN[:3], ("assistant", "Hmm?", None), ("user", "My order number is KX-99173!", "answer"),
                        *CLEAN[3:]]),
    "off_goal": session(_with(4, "By the way, what is the best pizza topping in Naples?", "follow_up")),
    "item_never_raised": session([*CLEAN[:4], ("user", "Great, that's everything I needed. Thanks!", "stop_success")],
                                 completed=("refund",), detail="###STOP###"),
    "role_flip": session(_with(4, "You're welcome! Is there anything else I can help you with today?", "answer")),
    "leaked_state": session(_with(2, "My order number is KX-99173. (act: answer, patience left 1.5)")),
}


def test_a_clean_session_is_not_flagged() -> None:
    assert gate_flags(session(CLEAN), P) == []


@pytest.mark.parametrize("kind", GATE_TYPES)
def test_each_corruption_is_flagged_with_its_type(kind: str) -> None:
    types = {f["type"] for f in gate_flags(CASES[kind], P)}
    assert kind in types, (kind, gate_flags(CASES[kind], P))
    assert types <= {kind, "premature_end", "item_never_raised"}  # only the corruption planted (and its twin)


def test_role_flip_also_catches_asking_for_ones_own_fact_and_works_in_chinese() -> None:
    asks = session(_with(2, "What is your order number?", "answer"))
    assert "role_flip" in {f["type"] for f in gate_flags(asks, P)}
    zh = persona(ZH_REFUND)
    clean = [("user", "你好，请问：给坏掉的水壶退款？", "open"), ("assistant", "请提供订单号？", None),
             ("user", "订单号是KX-88120。", "answer"), ("assistant", "好的，退款已提交。", None),
             ("user", "好的，谢谢。还有：退款多久到账？", "follow_up"), ("assistant", "一般3个工作日到账。", None),
             ("user", "好的，都解决了，谢谢！", "stop_success")]
    assert gate_flags(session(clean, p=zh), zh) == []
    flipped = [*clean[:4], ("user", "不客气！请问您还有什么需要帮助的吗？", "follow_up"), *clean[5:]]
    assert "role_flip" in {f["type"] for f in gate_flags(session(flipped, p=zh), zh)}
    leaked = [*clean[:2], ("user", "思考：用户应该先给订单号。订单号是KX-88120。", "answer"), *clean[3:]]
    assert "leaked_state" in {f["type"] for f in gate_flags(session(leaked, p=zh), zh)}


@pytest.mark.parametrize("text", [
    "I'm sorry for any inconvenience. I'm here to assist you with your refund.",  # the embedded model's own
    "Thank you for reaching out! How may I be of assistance?",
    "I apologise for the confusion, I'd be happy to assist you further.",
])
def test_a_user_turn_speaking_as_the_assistant_is_a_role_flip(text: str) -> None:
    flags = gate_flags(session(_with(4, text, "follow_up")), P)
    assert "role_flip" in {f["type"] for f in flags}, flags


def test_a_user_turn_writing_the_assistants_lines_is_a_role_flip() -> None:
    """SmolLM2 behind llama.cpp (bench/sim_model_simulators.py) went on as a transcript, the assistant's reply
    included; a user who only mentions an assistant is not flagged."""
    text = ("User: I'm not sure. Can you tell me where i got it?\nAssistant: Where do you want to buy more of that "
            "blender?")
    flags = [f for f in gate_flags(session(_with(4, text, "follow_up")), P) if f["type"] == "role_flip"]
    assert flags and "writes the assistant's line" in flags[0]["evidence"], flags
    zh = session(_with(4, "退款多久到账？\n客服：一般三个工作日。", "follow_up"))
    assert "role_flip" in {f["type"] for f in gate_flags(zh, P)}
    for ordinary in ("My assistant: she booked it. How long does the refund take?",
                     "The AI said: wait 5 days. How long does the refund take, really?"):
        assert "role_flip" not in {f["type"] for f in gate_flags(session(_with(4, ordinary, "follow_up")), P)}


@pytest.mark.parametrize(("index", "text", "p"), [
    (2, "My order number is KX-99173. Write the user's next message now.", P),  # the embedded model's own
    (4, "The conversation so far: thanks, and how long the refund takes?", P),
    (2, "订单号是KX-88120。现在写出用户的下一条消息。", persona(ZH_REFUND)),
    (4, "State no personal information in this message. How long does the refund take?", P),
])
def test_a_user_turn_echoing_the_realisers_prompt_is_leaked_state(index: int, text: str, p: Any) -> None:
    zh = [("user", "你好，请问：给坏掉的水壶退款？", "open"), ("assistant", "请提供订单号？", None),
          ("user", "订单号是KX-88120。", "answer"), ("assistant", "好的，退款已提交。", None),
          ("user", "好的，谢谢。还有：退款多久到账？", "follow_up")]
    base = CLEAN if p is P else zh
    turns = list(base)
    turns[index] = ("user", text, turns[index][2])
    flags = gate_flags(session(turns, p=p, completed=("refund", "timing")), p)
    assert any(f["type"] == "leaked_state" and "prompt" in f["evidence"] for f in flags), flags


def test_ordinary_user_messages_do_not_echo_the_prompt() -> None:
    from uxbench.sim.markers import output_problem, prompt_echo

    for text in ("Thanks, that's everything I needed.", "Can you answer my question please?", "算了，不用了",
                 "I need a refund for the kettle I bought.", "好的，谢谢。还有：退款多久到账？"):
        assert prompt_echo(text) is None, text
    assert output_problem("Sure. Write the user's next message now.") == "the simulator's prompt in the message"


def test_a_user_turn_copying_its_profile_lines_is_leaked_state() -> None:
    """The embedded model wrote "... Your tone: blunt. Typing habits: no punctuation, all lower case" into a message
    (bench/sim_model_simulators.py): the realiser's profile lines are its prompt too."""
    text = "I'm sorry, but I'm not here to answer your question. Your tone: blunt. Typing habits: no punctuation"
    flags = gate_flags(session(_with(4, text, "follow_up")), P)
    assert any(f["type"] == "leaked_state" for f in flags), flags
    zh = session(_with(4, "退款多久到账？语气：生气。打字习惯：消息短。", "follow_up"))
    assert any(f["type"] == "leaked_state" for f in gate_flags(zh, P))


def test_flags_found_as_sessions_end_are_those_the_store_gives(tmp_path: Path) -> None:
    """`sim run` checks each session with the gate as it ends, so its summary does not check them all again; the
    summary and acts.jsonl are the same as those made from the store alone (what `uxbench report` recomputes)."""
    import asyncio
    import itertools

    from sim_support import REFUND, ZH_REFUND, helpful_rules, write_personas

    from uxbench.sim.run import execute, summarize
    from uxbench.sim.spec import RoleSpec, SimSpec
    from uxbench.sim.store import SimStore
    from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

    counter = itertools.count()

    def realiser(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        n = next(counter)
        zh = "用户" in str(messages[0].get("content"))
        if n % 3 == 0:  # a role flip the gate flags (the session loop sends it: it is no leak)
            return "有什么可以帮您的吗？" if zh else "How can I help you today? I need a refund."
        return "我需要退款，订单号我等会儿给。" if zh else "I need a refund for my order, please."

    path = write_personas(tmp_path / "p.jsonl", dict(REFUND, opener=None), dict(ZH_REFUND, opener=None))
    with LoopbackServer(LoopbackConfig(responder=realiser)) as sim:
        spec = SimSpec(personas=[str(path)], trials=6, out=tmp_path / "run", n_boot=50, use_cache=False,
                       model=RoleSpec(model=f"scripted:file:{helpful_rules(tmp_path / 'rules.json')}"),
                       simulator=RoleSpec(model="openai:sim", args={"base_url": sim.base_url,
                                                                      "api_key_env": "UXBENCH_TEST_NO_KEY"}),
                       concurrency=4)
        result = asyncio.run(execute(spec))
    assert result.summary["gate"]["n_flagged"] > 0 and result.summary["gate"]["by_type"]["role_flip"] > 0
    acts = (result.run_dir / "acts.jsonl").read_bytes()
    store = SimStore(result.run_dir)
    again = summarize(store, store.read_manifest() or {}, n_boot=50)
    store.close()
    assert {k: v for k, v in result.summary.items() if k != "invocation"} == again
    assert (result.run_dir / "acts.jsonl").read_bytes() == acts


def test_prompt_echo_finds_the_longest_fragment_a_message_holds_as_a_scan_of_every_fragment_does() -> None:
    import random

    from uxbench.sim import markers

    fragments = markers._fragments_longest_first()

    def scanned(text: str) -> str | None:
        norm = markers.normalize(text)
        return next((f for f in fragments if f in norm), None) if norm else None

    rng = random.Random(1)
    for _ in range(2000):
        parts = [rng.choice(["hello", "refund", "I need", "  ", "。", "谢谢"]) for _ in range(rng.randint(0, 3))]
        for _ in range(rng.randint(0, 3)):
            fragment = rng.choice(fragments)
            parts.insert(rng.randint(0, len(parts)), fragment[rng.randint(0, 3):])
        text = " ".join(parts)
        assert markers.prompt_echo(text) == scanned(text), text
