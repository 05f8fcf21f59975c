"""`uxbench sim fidelity`: items compiled from the persona, the code checks, the judge pass over a real loopback
server (blind to success, resumable, refining code verdicts), and the leaky free-mode realiser caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sim_support import REFUND, ZH_REFUND, helpful_rules, persona, write_personas
from typer.testing import CliRunner, Result

from uxbench.cli.main import app
from uxbench.sim.fidelity_code import code_results
from uxbench.sim.fidelity_items import compile_items
from uxbench.sim.types import Assessment, SessionRecord, SimTurn, Termination
from uxbench.testing import LoopbackConfig, LoopbackServer

EN_DIGITS = {**REFUND, "id": "en-digits", "facts": [
    {"id": "order", "label": "order number", "value": "20240517", "disclose": "on_request",
     "ask_patterns": ["order number"]},
    {"id": "card", "label": "card number", "value": "4111 2222 3333 4444", "disclose": "never"}]}
ZH_NEVER = {**ZH_REFUND, "id": "zh-never", "facts": [
    *ZH_REFUND["facts"], {"id": "phone", "label": "手机号", "value": "13812345678", "disclose": "never"}]}


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def _run(tmp_path: Path, *extra: object, name: str = "run", personas: tuple[dict[str, Any], ...] = ()) -> Path:
    files = write_personas(tmp_path / f"{name}.jsonl", *(personas or (REFUND, ZH_REFUND, EN_DIGITS, ZH_NEVER)))
    out = tmp_path / name
    result = invoke("sim", "run", "--personas", files, "--out", out, "--quiet", "--n-boot", "100", *extra)
    assert result.exit_code in (0, 1), result.output
    return out


def _fidelity(run: Path, *extra: object, code: int = 0) -> dict[str, Any]:
    result = invoke("sim", "fidelity", run, "--format", "json", "--n-boot", "200", "--quiet", *extra)
    assert result.exit_code == code, result.output
    if code:  # the judge failed on some sessions: said, with its first error, and the figures still written
        assert "The judge failed on" in result.stderr and "First error" in result.stderr
    return dict(json.loads(result.stdout))


def test_items_are_compiled_from_the_persona_by_code() -> None:
    items = compile_items(persona())
    ids = [i.id for i in items]
    assert ids == ["premature_disclosure:order", "never_disclose:card", "fact_accuracy:order", "hallucination",
                   "goal_pursuit:refund", "goal_pursuit:timing", "termination", "reaction_consistency", "language",
                   "length"]
    assert compile_items(persona()) == items  # the same persona, the same rubric


def test_leaky_free_mode_realiser_is_caught(tmp_path: Path) -> None:
    run = _run(tmp_path, "--model", "scripted:always-good", "--simulator", "scripted:user-leaky", "--mode", "free")
    summary = _fidelity(run)
    families = summary["by_family"]
    assert families["premature_disclosure"]["value"] == 0.0 and families["premature_disclosure"]["n_items"] == 4
    assert families["never_disclose"]["value"] == 0.0 and families["never_disclose"]["n_items"] == 3
    assert summary["premature_disclosure_rate"]["value"] == 1.0
    assert summary["premature_disclosure_rate"]["n_sessions"] == 4
    assert summary["ufs"]["value"] < 1.0
    rows = [json.loads(line) for line in (run / "fidelity_sessions.jsonl").read_text().splitlines()]
    assert all(any(v["item"].startswith("premature_disclosure") for v in r["violations"]) for r in rows)


def test_a_simulator_that_stops_early_is_scored_not_stopped(tmp_path: Path) -> None:
    # Every leaky session ends in a premature ###STOP###: the simulator's behaviour, counted, not a broken setup
    # (the guard that stops a run whose first sessions all fail must let it finish, so the UFS can rank it).
    out = tmp_path / "leaky"
    result = invoke("sim", "run", "--personas", "demo", "--model", "scripted:always-good", "--simulator",
                    "scripted:user-leaky", "--mode", "free", "--out", out, "--quiet", "--n-boot", "50")
    summary = json.loads((out / "summary.json").read_text())
    assert result.exit_code == 1 and "ended with an error" in result.output
    assert summary["n_sessions"] == 24 and summary["n_errors"] == 24
    assert summary["errors"] and all("premature stop" in str(e) for e in summary["errors"])
    disclosure = _fidelity(out)["premature_disclosure_rate"]
    assert disclosure["n_sessions"] == 24 and disclosure["value"] > 0.5  # authored openers are sent as written


def test_structured_mode_keeps_the_facts_back_and_gives_them_when_asked(tmp_path: Path) -> None:
    rules = helpful_rules(tmp_path / "rules.json")
    run = _run(tmp_path, "--model", f"scripted:file:{rules}", "--simulator", "scripted:user",
               personas=(REFUND, ZH_REFUND))
    summary = _fidelity(run)
    families = summary["by_family"]
    assert families["premature_disclosure"]["value"] == 1.0 and families["premature_disclosure"]["n_items"] == 2
    assert families["fact_accuracy"]["value"] == 1.0 and families["fact_accuracy"]["n_items"] == 2
    assert summary["premature_disclosure_rate"]["value"] == 0.0
    assert summary["by_success"]["success"]["n_sessions"] == 2
    assert any("No --judge" in w for w in summary["warnings"])


def _session(persona_data: dict[str, Any], texts: list[tuple[str, str]], *, failure_at: set[int] = frozenset(),
             asked: dict[int, tuple[str, ...]] | None = None, acts: dict[int, str] | None = None) -> SessionRecord:
    turns = []
    for i, (role, text) in enumerate(texts):
        assessment = None
        if role == "assistant":
            assessment = Assessment(failure="wrong" if i in failure_at else None,
                                    asked_facts=(asked or {}).get(i, ()))
        turns.append(SimTurn(turn_index=i, role=role, text=text, created_at="2025-01-01T00:00:00Z",
                             act=(acts or {}).get(i, "follow_up") if role == "user" else None,
                             assessment=assessment))
    return SessionRecord(session_id="s1", index=0, persona_id=persona_data["id"], persona_hash="x", lang="en",
                         trial=0, seed=1, mode="structured", turns=turns,
                         termination=Termination(reason="max_turns"), goal_items=("refund", "timing"))


def test_code_checks_language_length_reactions_and_accuracy() -> None:
    p = persona(profile={"message_chars": [5, 80]})
    record = _session(REFUND, [
        ("user", "I need a refund for my kettle."), ("assistant", "Sure, what is your order number?"),
        ("user", "我不知道订单号在哪里可以找到"), ("assistant", "It is on the receipt."),
        ("user", "That's wrong, you are not helping at all"), ("assistant", "Sorry."),
        ("user", "x" * 200),
    ], asked={1: ("order",)}, acts={0: "open", 2: "answer", 4: "follow_up"})
    by = {r.item: r for r in code_results(record, p)}
    assert by["language"].status == "violated" and by["language"].turn == 2
    assert by["length"].status == "violated" and by["length"].turn == 6  # 200 characters, outside 5-80
    assert by["reaction_consistency"].status == "violated" and by["reaction_consistency"].turn == 4
    # asked plainly, and the user (who holds the order number) did not give it: a violation in either mode, even
    # when the policy did not mark the fact as stated (a refusal is never rewarded)
    assert by["fact_accuracy:order"].status == "violated" and by["fact_accuracy:order"].turn == 2
    assert by["premature_disclosure:order"].status == "satisfied" and by["premature_disclosure:order"].question
    assert by["hallucination"].status == "pending"


def _judge(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    prompt = messages[-1]["content"]
    assert "goal_complete" not in prompt and "patience" not in prompt.lower() and "success" not in prompt.lower()
    if "refund-user" in prompt or "kettle" in prompt:
        return json.dumps({"facts": {"order": {"conveyed_at": None, "asked_at": 2},
                                     "card": {"conveyed_at": 3, "asked_at": None}},
                           "goals_raised": {"refund": True, "timing": False}, "hallucinated_turns": [3],
                           "unprovoked_turns": [], "stopped_early": False})
    return "not json"


def test_judge_pass_is_blind_resumable_and_refines_code(tmp_path: Path) -> None:
    rules = helpful_rules(tmp_path / "rules.json")
    run = _run(tmp_path, "--model", f"scripted:file:{rules}", "--simulator", "scripted:user",
               personas=(REFUND, ZH_REFUND))
    with LoopbackServer(LoopbackConfig(responder=_judge)) as server:
        args = ("--judge", "openai:loopback", "-J", f"base_url={server.base_url}")
        summary = _fidelity(run, *args, code=1)  # one session's answer unusable twice: a failure, exit 1
        first = server.stats.requests
        again = _fidelity(run, *args, code=1)
        assert server.stats.requests == first  # every answer was kept: nothing asked twice
    assert again["ufs"] == summary["ufs"]
    assert summary["n_judged"] == 1 and summary["judge_failures"] == 1  # the zh session's answer was unusable twice
    rows = {json.loads(line)["persona_id"]: json.loads(line) for line in
            (run / "fidelity_sessions.jsonl").read_text().splitlines()}
    violated = {v["item"] for v in rows["refund-user"]["violations"]}
    assert {"never_disclose:card", "hallucination", "goal_pursuit:timing"} <= violated  # said in other words
    assert rows["zh-refund-user"]["unchecked"]  # no usable answer: its judge items stay unchecked
    assert summary["by_family"]["hallucination"]["n_items"] == 1
    assert json.loads((run / "fidelity.json").read_text())["latest"] == "fidelity:openai:loopback"


def test_warning_when_the_judge_is_the_simulator(tmp_path: Path) -> None:
    from uxbench.sim.fidelity import warnings_for

    manifest = {"simulator": {"spec": "openai:gpt-x"}}
    assert any("simulator's own model" in w for w in warnings_for(manifest, "openai:gpt-x"))
    assert not warnings_for(manifest, "anthropic:claude-y")


@pytest.mark.parametrize("target", ["no-such-dir", "file"])
def test_fidelity_of_something_that_is_no_run(tmp_path: Path, target: str) -> None:
    path = tmp_path / target
    if target == "file":
        path.write_text("{}")
    result = invoke("sim", "fidelity", path)
    assert result.exit_code == 2 and "not a `uxbench sim run` directory" in result.output
    assert "Traceback" not in result.output
