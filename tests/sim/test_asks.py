"""The simulator's ask detector (`uxbench.sim.asks`): plainly worded questions are recognised in en and zh, whatever
the persona's `ask_patterns` say; offers, rhetorical questions and questions inside content are not requests.

The wordings here are this project's own (a check of the rules, not a measurement); the measurement on real
assistant turns is `bench/asks_dev.py` (docs/SIMULATION.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uxbench.sim.asks import AskTarget, asked_facts, asks_anything, asks_for
from uxbench.sim.assess import check_fold, rules_assessment
from uxbench.sim.persona_io import load_personas
from uxbench.sim.projection import SessionView, project
from uxbench.sim.types import SimTurn

CITY_PATTERNS = ("where (do you live|are you|is the property)", "which (city|country)", "location")
ZH_CITY_PATTERNS = ("哪个城市", "在哪里", "所在地")


@pytest.mark.parametrize("reply", [
    "Could you tell me your city?",
    "What city are you in?",
    "Which city do you live in?",
    "Where do you live?",
    "To check the rules that apply, I need to know your city.",
    "Sure. Please let me know the city where the property is.",
    "Happy to help. First, what's your city, and how much was the deposit?",
    "Thanks! Can you share your location (city or town)?",
    "I'd be glad to help with that.\n\nWhich town is the flat in?",
])
def test_plain_english_questions_for_the_city_are_asks(reply: str) -> None:
    assert asks_for(reply, "city", CITY_PATTERNS)
    assert asks_for(reply, "city")  # without any ask_patterns too


@pytest.mark.parametrize("reply", [
    "请提供您的城市？",
    "请问您在哪个城市？",
    "您所在的城市是？",
    "麻烦告诉我您的城市。",
    "您现在住在哪里？",
    "能否告诉我您所在的城市，以及押金金额？",
    "好的，先确认一下：房子在哪座城市？",
])
def test_plain_chinese_questions_for_the_city_are_asks(reply: str) -> None:
    assert asks_for(reply, "城市", ZH_CITY_PATTERNS)
    assert asks_for(reply, "城市")


@pytest.mark.parametrize(("reply", "label"), [
    ("What's your order number?", "order number"),
    ("Can you send me the order ID?", "order number"),
    ("Please confirm the booking reference.", "booking reference"),
    ("How many people are travelling?", "number of travellers"),
    ("Could you give me the last 4 digits of the card?", "last four digits of the card"),
    ("How much was the deposit?", "deposit amount"),
    ("Which Excel version do you use?", "Excel version"),
    ("When did it happen?", "when it happened"),
    ("What is your policy number, please?", "policy number"),
    ("请提供订单号。", "订单号"),
    ("您的订单编号是多少？", "订单号"),
    ("押金是多少钱？", "押金金额"),
    ("您用的是什么型号的手机？", "手机型号"),
    ("孩子几岁了？", "猫的年龄"),
    ("您的pandas是哪个版本？", "pandas版本"),
    ("请问您高考考了多少分？", "高考分数"),
])
def test_other_facts_in_other_words(reply: str, label: str) -> None:
    assert asks_for(reply, label), (reply, label)


@pytest.mark.parametrize(("reply", "label"), [
    ("Would you like me to check the rules for your city?", "city"),
    ("Is there anything else I can help you with?", "city"),
    ("Are you tired of paying too much for your phone plan?", "budget"),
    ("Here are some questions you could ask in the interview:\n1. What is your name?\n2. Where do you live?",
     "city"),
    ('He turned to her and asked, "Where do you live?"', "city"),
    ("Interviewer: What is your order number?\nCandidate: I don't have one.", "order number"),
    ("```python\nname = input('What is your name?')\n```", "name"),
    ("The deposit must be returned within 10 days in most cities.", "city"),
    ("还有什么可以帮您？", "城市"),
    ("需要我帮您查一下城市的规定吗？", "城市"),
    ("Here's the revised email:\n\nHi Cindi,\nCould you please send me your order number?\nBest regards,\n[Your name]",
     "order number"),
])
def test_offers_rhetoric_and_content_are_not_asks(reply: str, label: str) -> None:
    assert not asks_for(reply, label), (reply, label)


def test_asked_facts_keeps_the_targets_order_and_reads_each_label() -> None:
    targets = [AskTarget("city", "city", CITY_PATTERNS), AskTarget("amount", "deposit amount", ("how much",)),
               AskTarget("pin", "PIN", (r"\bPIN\b",))]
    assert asked_facts("Which city is it in, and how much was the deposit?", targets) == ("city", "amount")
    assert asked_facts("The deposit in your city is usually a month's rent.", targets) == ()
    assert asks_anything("Could you tell me a bit more?")
    assert not asks_anything("Here is the answer. Hope this helps!")


def _deposit_view(reply: str, lang: str) -> object:
    persona = next(p.persona for p in load_personas(["demo"]) if p.persona.id == f"{lang}-deposit-tenant"
                   or p.persona.id == f"{lang}-deposit-rent")
    opener = persona.opener or persona.goal[0].request
    at = "2024-05-01T09:00:00+00:00"
    turns = [SimTurn(turn_index=0, role="user", text=opener, act="open", created_at=at),
             SimTurn(turn_index=1, role="assistant", text=reply, created_at=at)]
    return project("assessor", SessionView(persona=persona, turns=turns))


@pytest.mark.parametrize(("lang", "reply"), [("en", "Could you tell me your city?"), ("zh", "请提供您的城市？")])
def test_the_rules_assessor_reads_the_helpful_assistants_question(lang: str, reply: str) -> None:
    """The bundled helpful assistant's wording (bench/sim_validate_pool.py), which the personas' ask_patterns do
    not match: the rules assessor must still see that the city was asked for, not a failed reply."""
    assessment = rules_assessment(_deposit_view(reply, lang))  # type: ignore[arg-type]
    assert assessment.asked_facts == ("city",)
    assert assessment.failure is None


def test_goal_checks_ignore_spacing_hyphens_and_spelling_variants() -> None:
    assert check_fold("Try Small-Claims court") == check_fold("try small claims court")
    assert check_fold("an itemised list") == check_fold("an itemized list")
    assert check_fold("押 金 保 护") == check_fold("押金保护")


DEPOSIT_HELPFUL = [  # the bundled helpful assistant's wording (bench/sim_validate_pool.py) for the deposit personas
    ("Leeds", "Sure. Deposit protection."), ("杭州", "好的：投诉。"),
    ("(?i)letter|draft|send the landlord", "Sure. Dear landlord, I am writing about my deposit."),
    ("合同|条款", "好的：合同里看押金条款。"),
    ("(?i)deposit|landlord", "Could you tell me your city?"), ("押金|房东", "请提供您的城市？"),
]


def _deposit_run(tmp_path: Path, mode: str, *, assistant: list[tuple[str, str]] | None = None) -> Path:
    from sim_support import rules_file
    from typer.testing import CliRunner

    from uxbench.cli.main import app

    rules = rules_file(tmp_path / f"rules-{mode}.json", assistant or DEPOSIT_HELPFUL, "Sure. Deposit protection.")
    demo = [p.persona for p in load_personas(["demo"]) if p.persona.id in ("en-deposit-tenant", "zh-deposit-rent")]
    files = tmp_path / "deposit.jsonl"
    files.write_text("".join(p.model_dump_json() + "\n" for p in demo), encoding="utf-8")
    out = tmp_path / f"run-{mode}"
    result = CliRunner().invoke(app, ["sim", "run", "--personas", str(files), "--model", f"scripted:file:{rules}",
                                      "--simulator", "scripted:user", "--mode", mode, "--trials", "2", "--out",
                                      str(out), "--quiet", "--n-boot", "100"])
    assert result.exit_code in (0, 1), result.output
    return out


@pytest.mark.parametrize("mode", ["structured", "free"])
def test_a_user_who_answers_a_plain_question_is_neither_failed_nor_charged(tmp_path: Path, mode: str) -> None:
    """The README's helpful assistant asks "Could you tell me your city?" / "请提供您的城市？": the user answers,
    the sessions succeed, nothing is premature, and the UFS is that of a faithful user in both modes."""
    from uxbench.sim.fidelity import fidelity_report
    from uxbench.sim.store import SimStore

    run = _deposit_run(tmp_path, mode)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["headline"]["success_rate"]["value"] == 1.0
    store = SimStore.open_existing(run)
    try:
        records = list(store.iter_sessions())
        report = fidelity_report(store, records, store.personas(), None, store.read_manifest() or {}, n_boot=100,
                                 seed=0)
    finally:
        store.close()
    assert report["premature_disclosure_rate"]["value"] == 0.0
    assert report["ufs"]["value"] == 1.0
    assert all(any(t.role == "user" and ("Leeds" in t.text or "杭州" in t.text) for t in r.turns) for r in records)


def test_refusing_a_plainly_asked_question_is_a_violation() -> None:
    """A user asked plainly for its city who complains instead: fact_accuracy is violated (no reward for it)."""
    from uxbench.sim.fidelity_code import code_results
    from uxbench.sim.types import SessionRecord, Termination

    tenant = next(p.persona for p in load_personas(["demo"]) if p.persona.id == "en-deposit-tenant")
    at = "2024-05-01T09:00:00+00:00"
    texts = [("user", "My landlord kept my whole deposit, what can I do?", "open"),
             ("assistant", "Could you tell me your city?", None),
             ("user", "That's not what I asked. I need this: what I can do about my deposit.", "complain")]
    turns = [SimTurn(turn_index=i, role=role, text=text, act=act, created_at=at)  # type: ignore[arg-type]
             for i, (role, text, act) in enumerate(texts)]
    record = SessionRecord(session_id="s", index=0, persona_id=tenant.id, persona_hash="x", lang="en", trial=0,
                           seed=1, mode="structured", turns=turns, termination=Termination(reason="max_turns"),
                           goal_items=tuple(g.id for g in tenant.goal))
    by = {r.item: r for r in code_results(record, tenant)}
    assert by["fact_accuracy:city"].status == "violated"
    assert by["premature_disclosure:city"].status == "satisfied"


def test_a_line_with_no_sentence_end_before_its_last_character_is_split_as_the_pattern_splits_it() -> None:
    from uxbench.sim.asks_sentences import _SENTENCE_END_RE, _split

    lines = ["", "   ", ".", "  abc. ", "abc", "abc?  ", "您好。", "您好。 ", "\nabc", "abc\n", "a. b", "a.b",
             "您好。谢谢", "  Sorry, I am not sure what you mean.", "what? why?", "x;", "x; y", "e.g. this",
             "\u3000abc\u3000"]
    for line in lines:
        assert _split(line) == [s.strip() for s in _SENTENCE_END_RE.split(line) if s.strip()], line


def test_a_scripted_phrasing_is_the_first_unsaid_one_of_the_shuffle() -> None:
    import random

    from uxbench.sim.scripted import _pick

    options = ["A {request}", "B {request}", "C {request}"]
    for used in (frozenset(), frozenset({"A x"}), frozenset({"A x", "B x", "C x"}), frozenset({"B x", "C x"})):
        for seed in range(6):
            order = list(options)
            random.Random(seed).shuffle(order)
            texts = [o.replace("{request}", "x") for o in order]
            expected = next((t for t in texts if t not in used), texts[0])
            assert _pick(options, random.Random(seed), used, request="x") == expected


def test_a_gate_set_says_what_each_of_its_gates_says() -> None:
    import re

    from uxbench.sim.asks_sentences import _LINE_GATES, _SENTENCE_GATES
    from uxbench.sim.assess import _REPLY_GATES
    from uxbench.sim.literal_gate import GateSet, LiteralGate
    from uxbench.sim.markers import _OUTPUT_GATES

    shared = GateSet(LiteralGate(re.compile(r"\bplease (tell|give)\b", re.I)), LiteralGate(re.compile(r"tell me")),
                     LiteralGate(re.compile(r"\w+", re.I)))  # two share a literal's region; one has no literal
    texts = ["", "Sorry, I am not sure what you mean.", "Please tell me your order number.", "PLEASE GIVE",
             "Here's the revised email:", "To help you, I need a few details:", "Interview questions to ask:",
             "Would you like me to contact customer support? I cannot help.", "请提供订单号。", "需要我帮您吗？",
             "ſorry, pleaſe tell me", "Ｐｌｅａｓｅ ｔｅｌｌ", "transfer you to a human agent", "sorry, but i can't",
             "Thought: ask again", "<think>no</think> hi", "act: complain", "满意度：3", "Your tone: blunt"]
    for gates in (_LINE_GATES, _SENTENCE_GATES, _REPLY_GATES, _OUTPUT_GATES, shared):
        for text in texts:
            assert gates.could(text) == tuple(g.could_match(text) for g in gates.gates), text


def test_a_goal_check_read_once_per_check_meets_replies_as_its_phrases_and_pattern_say() -> None:
    from uxbench.sim.assess import check_met
    from uxbench.sim.persona import GoalCheck

    check = GoalCheck(any_of=("Itemised Receipt", "small-claims"), pattern=r"\b\d+ business days\b")
    assert check_met(check, "an itemized receipt") and check_met(check, "the small claims court")
    assert check_met(check, "in 5 business days") and not check_met(check, "in five days")
    edited = check.model_copy(update={"any_of": ("five days",), "pattern": None})
    assert check_met(edited, "in five days") and not check_met(edited, "in 5 business days")
