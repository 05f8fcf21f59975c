"""UserProxyBench over tau2 (the tau2 extra): tau2's tasks, environments and evaluator with this project's user
proxies and scripted agents served by a real OpenAI-compatible loopback server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("tau2")

from uxbench.errors import ConfigError, DataError  # noqa: E402
from uxbench.sim.persona import Fact  # noqa: E402
from uxbench.sim.run import execute  # noqa: E402
from uxbench.sim.spec import RoleSpec, SimSpec  # noqa: E402
from uxbench.sim.store import SimStore  # noqa: E402
from uxbench.sim.task_compile import check_facts, compile_persona  # noqa: E402
from uxbench.sim.task_sources import task_source  # noqa: E402
from uxbench.testing import LoopbackConfig, LoopbackServer  # noqa: E402
from uxbench.testing.agents import plan_agent_responder  # noqa: E402

AIRLINE_SOME = "tau2:airline:0,1,3,4,5,7,10,12"
RETAIL_SOME = "tau2:retail:0,1,2,3,4,5,6,7,8,9"


@pytest.fixture(scope="module")
def agent() -> Iterator[LoopbackServer]:
    with LoopbackServer(LoopbackConfig(responder=plan_agent_responder("reference"))) as srv:
        yield srv


def spec(tmp: Path, server: LoopbackServer, tasks: str, *, simulator: str = "scripted:user",
         mode: str = "structured", trials: int = 1, **kw: Any) -> SimSpec:
    return SimSpec(tasks=[tasks], agent_prompt="oracle", model=RoleSpec(model="openai:agent",
                                                                          args={"base_url": server.base_url}),
                   simulator=RoleSpec(model=simulator), mode=mode, trials=trials, max_turns=30,  # type: ignore[arg-type]
                   out=tmp, use_cache=False, n_boot=200, **kw)


def run(s: SimSpec) -> dict[str, Any]:
    return asyncio.run(execute(s)).summary


def sessions(path: Path) -> list[Any]:
    with SimStore(path) as store:
        return list(store.iter_sessions())


@pytest.mark.slow
def test_reference_agent_and_faithful_proxy_reach_the_gold_reward(tmp_path: Path, agent: LoopbackServer) -> None:
    """Every mock task and airline tasks: the session's reward is what tau2's evaluator gives the gold trajectory."""
    source = task_source("tau2")
    for selector, out in (("tau2:mock", tmp_path / "mock"), (AIRLINE_SOME, tmp_path / "airline")):
        run(spec(out, agent, selector))
        records = sessions(out)
        tasks = {t.id: t for t in source.load(selector.split(":", 1)[1])}
        assert len(records) == len(tasks) >= 5
        for record in records:
            gold = source.gold_reward(tasks[record.task_id])
            assert record.reward == gold.reward, (record.task_id, record.reward_detail, record.termination)
            assert record.termination.reason == "goal_complete"
        assert any(r.tool_calls for r in records)
        # what the agent's server received: tau2's tools in the OpenAI format, and the oracle prompt
        body = agent.stats.last_body
        assert body["tools"] and body["tools"][0]["type"] == "function"
        assert "<resolution_steps>" in body["messages"][0]["content"]


@pytest.mark.slow
def test_the_reward_is_what_tau2s_own_evaluator_gives(tmp_path: Path, agent: LoopbackServer) -> None:
    """The session's reward (its own environment, the gold database hashed once per task) equals tau2's
    `evaluate_simulation` on the recorded trajectory (fresh environments, replayed calls), whether the session
    wrote (its own database), only read (the shared one), or was cut short; the shared databases stay pristine."""
    from uxbench.sim.tau2_env import digests
    from uxbench.sim.tooltask import trajectory

    source: Any = task_source("tau2")
    selector = "tau2:mock"
    runs = [("faithful", "scripted:user", "structured"), ("uncooperative", "scripted:user-uncooperative",
                                                           "structured"), ("leaky", "scripted:user-leaky", "free")]
    records = []
    for name, simulator, mode in runs:
        for sel in (selector, "tau2:airline:0,2,4", "tau2:retail:0,3"):
            out = tmp_path / f"{name}-{sel.replace(':', '_').replace(',', '_')}"
            run(spec(out, agent, sel, simulator=simulator, mode=mode))
            records += sessions(out)
    tasks = {t.id: t for sel in ("mock", "airline:0,2,4", "retail:0,3") for t in source.load(sel)}
    rewards = set()
    for record in records:
        task = tasks[record.task_id]
        steps = trajectory(record.turns, source.greeting())
        ending = record.reward_detail["ending"]
        if record.reward is None:  # tau2's evaluator raised (an assertion on a task the session never created)
            assert record.reward_detail["note"].startswith("evaluation failed")
            with pytest.raises(Exception, match=record.reward_detail["note"].split(": ", 2)[-1][:40]):
                source.reference_reward(task, steps, ending)
            continue
        reference = source.reference_reward(task, steps, ending)
        assert record.reward == reference.reward, (record.task_id, record.reward_detail, reference)
        assert record.reward_breakdown == reference.breakdown, record.task_id
        kept = {k: v for k, v in record.reward_detail.items() if k not in ("note", "ending")}
        assert kept == reference.detail, record.task_id
        rewards.add(record.reward)
    assert rewards == {0.0, 1.0}  # both verdicts were compared
    for domain in ("mock", "airline", "retail"):
        shared = source._domain(domain)
        assert digests(shared.shared) == shared.shared_digests, domain


def test_a_session_copies_the_database_at_its_first_write_and_a_mislabelled_read_is_caught() -> None:
    from uxbench.sim.tau2_env import digests

    source: Any = task_source("tau2")
    task = source.load("airline:2")[0]
    domain = source._domain("airline")
    pristine = domain.shared_digests
    env = source.environment(task)
    env.call("get_user_details", {"user_id": "mia_li_3668"}, "c1")
    assert env.own is None  # reads go to the shared environment
    env.call("send_certificate", {"user_id": "mia_li_3668", "amount": 50}, "c2")
    assert env.own is not None and env.digests() != pristine  # the write went to the session's own copy
    assert digests(domain.shared) == pristine
    # a tool tau2 types as a read that changes the database is caught at its first use: the session keeps the
    # changed environment, the shared one is rebuilt, and the tool counts as a write from then on
    domain.writes.discard("send_certificate")
    domain.checked.discard("send_certificate")
    try:
        other = source.environment(task)
        other.call("send_certificate", {"user_id": "mia_li_3668", "amount": 75}, "c3")
        assert other.own is not None and other.digests() != pristine
        assert digests(domain.shared) == pristine and "send_certificate" in domain.writes
    finally:
        domain.writes.add("send_certificate")


def test_mock_end_to_end_records_tools_and_rewards(tmp_path: Path, agent: LoopbackServer) -> None:
    summary = run(spec(tmp_path, agent, "tau2:mock:create_task_1,update_task_1"))
    assert summary["n_sessions"] == 2 and summary["metrics"]["success_rate"]["value"] == 1.0
    for record in sessions(tmp_path):
        calls = [c for t in record.turns for step in t.tool_steps for c in step.calls]
        assert calls and not any(c.error for c in calls)
        assert record.reward == 1.0 and record.reward_breakdown
        assert record.usage["assistant"].calls >= len(calls) + 1
        asked = [t for t in record.turns if t.role == "assistant" and "?" in t.text]
        assert asked  # the reference agent asked for the values (the structured user gave them when asked)
    manifest = SimStore(tmp_path).read_manifest() or {}
    assert manifest["tool_tasks"]["n"] == 2 and manifest["tool_tasks"]["sources"]["tau2"]
    # the view's session page shows each tool call with the environment's answer, and the reward
    from fastapi.testclient import TestClient

    from uxbench.web.app import create_app
    from uxbench.web.catalog import build_catalog

    catalog = build_catalog([str(tmp_path)])
    client = TestClient(create_app(catalog, index_dir=tmp_path / "index"), base_url="http://127.0.0.1")
    sim_id = next(iter(catalog.sims))
    record = sessions(tmp_path)[0]
    page = client.get(f"/sims/{sim_id}/sessions/{record.session_id}")
    assert page.status_code == 200 and "tool call" in page.text and "reward <b>1.0</b>" in page.text
    call = next(c for t in record.turns for step in t.tool_steps for c in step.calls)
    assert call.name in page.text


@pytest.mark.slow
def test_leaky_proxy_disclosure_is_caught_and_the_tool_call_difference_reported(tmp_path: Path,
                                                                              agent: LoopbackServer) -> None:
    """The leaky proxy is the faithful one except that it opens with every fact: the same reward, its
    disclosures caught, and the reference agent asks less and leaves out lookups the volunteered values make
    unnecessary. Task 54's user has an e-mail address that holds her name: giving the address is not the name."""
    from uxbench.report.proxies import render_proxies
    from uxbench.sim.proxies import proxies_report

    faithful, leaky = tmp_path / "faithful", tmp_path / "leaky"
    run(spec(faithful, agent, RETAIL_SOME + ",54"))
    run(spec(leaky, agent, RETAIL_SOME + ",54", simulator="scripted:user-leaky"))
    assert not any(r.termination.reason == "error" for r in sessions(faithful) + sessions(leaky))
    report = proxies_report([faithful, leaky], n_boot=500)
    by = {p["label"]: p for p in report["proxies"]}
    f, lk = by["scripted:user (structured)"], by["scripted:user-leaky (structured)"]
    assert f["premature_disclosure_rate"]["value"] == 0.0
    assert lk["premature_disclosure_rate"]["value"] == 1.0
    assert f["mean_reward"]["value"] == lk["mean_reward"]["value"] == 1.0 and lk["vs_first"]["diff"] == 0.0
    assert lk["questions_vs_first"]["diff"] < 0 and lk["questions_vs_first"]["significant"]
    calls = lk["tool_calls_vs_first"]
    assert calls["diff"] < 0 and calls["ci_high"] < 0 and calls["n_pairs"] == 11
    within = report["tool_calls_success_pooled"]["within_task"]
    assert within["diff"] == calls["diff"] and within["n_clusters"] == 11
    assert report["largest_difference"] is not None and "retail" in report["statement"]
    text = render_proxies(report, "md")
    assert "premature" in text and "tool calls per successful session" in text and "within a task" in text


def test_a_compiled_fact_must_occur_in_the_scenario() -> None:
    source = task_source("tau2")
    task = source.load("airline:1")[0]
    persona = compile_persona(task)
    assert {f.id for f in persona.facts} >= {"name", "user_id", "confirm"}
    check_facts(task.id, persona.facts, task.scenario.text())  # what the code compiled is there
    made_up = Fact(id="phone", label="phone", value="555-0199")
    with pytest.raises(DataError, match="does not occur in the task's user scenario"):
        check_facts(task.id, [*persona.facts, made_up], task.scenario.text())


def test_every_airline_and_retail_scenario_compiles() -> None:
    source = task_source("tau2")
    for domain in ("airline", "retail"):
        for task in source.load(domain):
            persona = compile_persona(task)  # raises on a value that is not in the scenario
            hidden = [f for f in persona.facts if f.disclose == "on_request"]
            for item in persona.goal:
                assert not any(f.value in item.request for f in hidden)


def test_dual_control_and_unknown_domains_are_refused() -> None:
    source = task_source("tau2")
    with pytest.raises(ConfigError, match="dual-control"):
        source.load("telecom")
    with pytest.raises(ConfigError, match="Did you mean 'airline'"):
        source.load("airlines")
    with pytest.raises(ConfigError, match="no task nope"):
        source.load("mock:nope")


def _command(out: Path, base_url: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "uxbench", "sim", "run", "--tasks", "tau2:mock", "--trials", "6",
            "--agent-prompt", "oracle", "-m", "openai:agent", "-M", f"base_url={base_url}",
            "--simulator", "scripted:user", "--max-turns", "30", "--concurrency", "6", "--out", str(out),
            "--n-boot", "200", "--quiet", "--format", "json", "--no-cache"]


@pytest.mark.slow
def test_kill_during_a_tau2_run_loses_and_repeats_no_session(tmp_path: Path) -> None:
    import json
    import os
    import signal
    import sqlite3
    import subprocess
    import time

    def stored(db: Path) -> int:
        try:
            with sqlite3.connect(db, timeout=5) as conn:
                return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
        except sqlite3.Error:
            return 0

    env = {**os.environ, "UXBENCH_CACHE_DIR": str(tmp_path / "cache")}
    with LoopbackServer(LoopbackConfig(responder=plan_agent_responder("reference"), latency_ms=30)) as srv:
        killed = tmp_path / "killed"
        proc = subprocess.Popen(_command(killed, srv.base_url), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 240
        while stored(killed / "sim.sqlite") < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        partial = stored(killed / "sim.sqlite")
        assert 0 < partial < 42 and not (killed / "summary.json").exists()
        resumed = subprocess.run(_command(killed, srv.base_url), env=env, capture_output=True, text=True,
                                 timeout=600, check=False)
        assert resumed.returncode == 0, resumed.stderr
        straight = subprocess.run(_command(tmp_path / "straight", srv.base_url), env=env, capture_output=True,
                                  text=True, timeout=600, check=False)
        assert straight.returncode == 0, straight.stderr
    with sqlite3.connect(killed / "sim.sqlite") as conn:
        ids = [row[0] for row in conn.execute("SELECT session_id FROM sessions")]
    assert len(ids) == len(set(ids)) == 42  # the 7 runnable mock tasks x 6 trials, each once
    a = json.loads((killed / "summary.json").read_text())
    b = json.loads((tmp_path / "straight" / "summary.json").read_text())
    for key in ("metrics", "gate", "n_sessions"):
        assert a[key] == b[key], key
    # Usage is the same but for the requests the kill left unanswered (sent, paid for, never recorded: counted)
    unanswered = ("requests_sent", "unanswered_requests", "unanswered_cost_usd_max")
    for party, used in a["usage"].items():
        assert {k: v for k, v in used.items() if k not in unanswered} == \
            {k: v for k, v in b["usage"][party].items() if k not in unanswered}, party
        assert used["requests_sent"] - used["unanswered_requests"] == b["usage"][party]["requests_sent"], party
    assert a["invocation"]["resumed_sessions"] == partial
    rewards = {r.session_id: r.reward for r in sessions(killed)}
    assert rewards == {r.session_id: r.reward for r in sessions(tmp_path / "straight")}


def _blind_judge(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A judge over loopback that checks it is blind to the outcome and finds nothing said in other words (every
    detail and goal item of its prompt answered: no detail conveyed or asked in other words, every item raised)."""
    import json
    import re

    prompt = " ".join(str(m.get("content") or "") for m in messages).lower()
    assert not any(word in prompt for word in ("reward", "goal_complete", "db_match", "patience", "termination"))
    goals, facts = prompt.split("[details the user knows", 1)[0], prompt.split("[details the user knows", 1)[1]
    facts = facts.split("[the conversation", 1)[0]
    return json.dumps({"facts": {f: {"conveyed_at": None, "asked_at": None} for f in re.findall(r"^- (\w+):", facts,
                                                                                                  re.M)},
                       "goals_raised": {g: True for g in re.findall(r"^- (\w+):", goals, re.M)},
                       "hallucinated_turns": [], "unprovoked_turns": [], "stopped_early": False})


def test_the_proxies_report_reads_a_blind_judge_pass_and_its_agreement(tmp_path: Path,
                                                                       agent: LoopbackServer) -> None:
    import json

    from typer.testing import CliRunner

    from uxbench.cli.main import app

    faithful, leaky = tmp_path / "faithful", tmp_path / "leaky"
    run(spec(faithful, agent, "tau2:mock"))
    run(spec(leaky, agent, "tau2:mock", simulator="scripted:user-leaky"))
    runner = CliRunner()
    with LoopbackServer(LoopbackConfig(responder=_blind_judge)) as judge:
        for out in (faithful, leaky):
            done = runner.invoke(app, ["sim", "fidelity", str(out), "--judge", "openai:loopback", "-J",
                                       f"base_url={judge.base_url}", "--quiet", "--format", "json", "--no-cache"])
            assert done.exit_code == 0, done.output
        assert judge.stats.requests == 14  # one answer per session of the two runs
    result = runner.invoke(app, ["sim", "proxies", str(faithful), str(leaky), "--judge", "openai:loopback",
                                 "--format", "json", "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    by = {p["label"]: p for p in report["proxies"]}
    leaky_entry = by["scripted:user-leaky (structured)"]
    assert leaky_entry["ufs_by"] == "code + judge" and leaky_entry["judge_agreement"]["n_items"] > 0
    assert leaky_entry["judge_agreement"]["agreement"] == 1.0  # it found no request the code missed
    assert leaky_entry["premature_disclosure_rate"]["value"] == 1.0
    assert report["judge"] == "openai:loopback"


def _tau2_style_user(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A model playing the user from tau2's own user-simulator prompt (the free-mode baseline proxy): the
    conversation arrives with the roles flipped, after tau2's greeting; it ends with ###STOP### in its message."""
    system = str(messages[0]["content"])
    assert messages[0]["role"] == "system" and system.startswith("# User Simulation Guidelines")
    assert "###STOP###" in system and "<scenario>" in system and "Instructions:" in system
    assert messages[1] == {"role": "user", "content": "Hi! How can I help you today?"}
    last = str(messages[-1]["content"]) if len(messages) > 2 else ""
    if len(messages) == 2:
        return "Hello, I need help with a task in my task list."
    if last.startswith("Please give me your confirmation"):
        return "Yes, go ahead."
    if last.startswith("All done"):
        return "Great, thanks for your help! ###STOP###"
    return "I don't have that, sorry."


def test_the_baseline_proxy_plays_from_tau2s_own_user_prompt(tmp_path: Path, agent: LoopbackServer) -> None:
    with LoopbackServer(LoopbackConfig(responder=_tau2_style_user)) as user:
        s = spec(tmp_path, agent, "tau2:mock:create_task_1,update_task_1", mode="free").model_copy(
            update={"simulator": RoleSpec(model="openai:tau2-user", args={"base_url": user.base_url})})
        run(s)
        assert user.stats.requests >= 6
    for record in sessions(tmp_path):
        assert record.termination.reason == "goal_complete" and record.termination.detail == "###STOP###"
        assert record.turns[-1].role == "user" and "###STOP###" not in record.turns[-1].text  # the words before it
        assert record.reward == 1.0 and record.tool_calls >= 1


def test_the_command_points_a_tool_task_run_at_fidelity_and_proxies(tmp_path: Path, agent: LoopbackServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """After a tool-task run the next steps are the proxy's own (fidelity, proxies), not the persona runs'."""
    from typer.testing import CliRunner

    from uxbench.cli.main import app

    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["sim", "run", "--tasks", "tau2:mock:create_task_1", "--agent-prompt", "oracle",
                                      "--model", "openai:agent", "-M", f"base_url={agent.base_url}",
                                      "--simulator", "scripted:user", "--out", str(out), "--no-cache", "--quiet"])
    assert result.exit_code == 0, result.output
    said = "".join(result.output.split())  # the console wraps long lines
    assert f"`uxbenchsimfidelity{out}`" in said and "uxbenchsimproxies" in said and "simsignals" not in said
