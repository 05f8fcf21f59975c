"""`uxbench sim frontier | sensitivity | rubric-agreement` and `uxbench personas build` as a user types them, with
scripted simulators and loopback servers; bad input refused with one clear line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from build_support import write_log
from sim_support import REFUND, ZH_REFUND, helpful_rules, rules_file, write_personas
from typer.testing import CliRunner, Result

from uxbench.cli.main import app
from uxbench.testing import LoopbackConfig, LoopbackServer


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def clean_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)


def _sim(tmp: Path, name: str, *args: object) -> Path:
    personas = write_personas(tmp / "personas.jsonl", REFUND, ZH_REFUND)
    out = tmp / name
    result = invoke("sim", "run", "--personas", personas, "--out", out, "--trials", "2", "--quiet", "--n-boot", "100",
                    *args)
    assert result.exit_code in (0, 1), result.output
    return out


def _user(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A model realiser on a loopback server: a plain follow-up that names the goal."""
    return "Could you help me with the refund please?" if "kettle" in json.dumps(messages) else "请帮我处理退款"


def test_frontier_pareto_set_and_cheapest_with_target(tmp_path: Path) -> None:
    rules = helpful_rules(tmp_path / "rules.json")
    model = ("--model", f"scripted:file:{rules}")
    structured = _sim(tmp_path, "structured", *model, "--simulator", "scripted:user")
    leaky = _sim(tmp_path, "leaky", "--model", "scripted:always-good", "--simulator", "scripted:user-leaky",
                 "--mode", "free")
    with LoopbackServer(LoopbackConfig(responder=_user)) as server:
        llm = _sim(tmp_path, "llm", *model, "--simulator", "openai:loopback", "-S", f"base_url={server.base_url}")
    result = invoke("sim", "frontier", structured, leaky, llm, "--target", "0.9", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["cost_unit"] == "tokens"  # the loopback model has no price
    by = {e["label"]: e for e in report["entries"]}
    assert by["openai:loopback (structured)"]["cost"]["simulator"]["tokens"] > 0
    assert by["scripted:user (structured)"]["cost"]["simulator"]["tokens"] == 0
    assert by["scripted:user-leaky (free)"]["ufs"]["value"] < by["scripted:user (structured)"]["ufs"]["value"]
    assert "scripted:user (structured)" in report["pareto"] and "scripted:user-leaky (free)" not in report["pareto"]
    assert report["cheapest_meeting_target"] == "scripted:user (structured)"
    assert all("code-only pass" in e["note"] for e in report["entries"])
    table = invoke("sim", "frontier", structured, leaky, llm, "--target", "0.9")
    assert "Cheapest simulator with UFS >= 0.90: scripted:user (structured)" in table.stdout
    clean_error(invoke("sim", "frontier", structured), "two or more")


def test_sensitivity_reports_paired_changes_and_rankings(tmp_path: Path) -> None:
    rules = helpful_rules(tmp_path / "rules.json")
    direct = rules_file(tmp_path / "direct.json", [  # helps at once, without asking: it completes in free mode too
        (r"(?i)how long|long until|money back|many days", "It takes 5 business days."),
        (r"到账|多久", "一般3个工作日到账。"),
        (r"(?i)refund|kettle|money", "Done, your refund is on its way."), (r"退款|水壶|退钱", "好的，退款已提交。")],
        "Sorry, I am not sure.")
    runs = []
    for assistant, name in ((f"scripted:file:{rules}", "helpful"), (f"scripted:file:{direct}", "direct")):
        for mode in ("structured", "free"):
            runs.append(_sim(tmp_path, f"{name}-{mode}", "--model", assistant, "--simulator", "scripted:user",
                             "--mode", mode))
    result = invoke("sim", "sensitivity", *runs, "--format", "json", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["baseline"] == "scripted:user (structured)" and len(report["changes"]) == 2
    change = report["changes"][0]
    assert change["n_pairs"] == 4 and "success_rate" in change["metrics"]
    turns = report["rankings"]["assistant_turns"]["versus_baseline"]["scripted:user (free)"]
    assert turns["n_assistants"] == 2 and turns["kendall_tau"]["tau"] is not None  # the asking one takes longer
    assert "dissatisfied_per_100_turns" in change["not_measured"]  # free mode has no acts
    assert "order" in invoke("sim", "sensitivity", *runs).stdout
    clean_error(invoke("sim", "sensitivity", runs[0], runs[2]), "two or more simulator configurations")
    clean_error(invoke("sim", "sensitivity", *runs, "--baseline", "scripted:user (structure)"), "Did you mean")


def test_a_changed_order_says_whether_it_reversed_or_tied() -> None:
    """A simulator under which neither assistant succeeds ties what the baseline told apart: the order changed,
    but nothing was reversed (bench/sim_model_simulators.py with SmolLM2 as the user)."""
    from uxbench.sim.sensitivity import _how

    base = {"helpful": 1.0, "never": 0.0, "other": 0.5}
    assert _how(base, {"helpful": 0.0, "never": 0.0, "other": 0.0}, sorted(base)) == "tied"
    assert _how(base, {"helpful": 0.0, "never": 1.0, "other": 0.5}, sorted(base)) == "reversed"
    assert _how({"a": 0.5, "b": 0.5}, {"a": 0.7, "b": 0.2}, ["a", "b"]) == "split"


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("mine")
    log = write_log(tmp / "log.jsonl")
    result = invoke("mine", "run", log, "--out", tmp / "mined", "--no-llm", "--workers", "1", "--quiet")
    assert result.exit_code == 0, result.output
    return tmp / "mined"


def _extraction(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    return json.dumps({"description": "A user.", "goal": [{"request": "get help", "check_question": "Helped?"}],
                       "facts": [{"label": "order number", "value": "ZZ-404"}]})  # never in any message


def test_personas_build_cli_counts_a_fact_not_in_the_source(mined: Path, tmp_path: Path) -> None:
    out = tmp_path / "personas.jsonl"
    result = invoke("personas", "build", "--from", mined, "--out", out, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["personas_built"] == 4 and "by rule" in result.stderr
    assert invoke("personas", "validate", out).exit_code == 0
    with LoopbackServer(LoopbackConfig(responder=_extraction)) as server:
        result = invoke("personas", "build", "--from", mined, "--out", tmp_path / "llm.jsonl", "--model",
                        "openai:loopback", "-M", f"base_url={server.base_url}", "--quiet")
    assert result.exit_code == 0, result.output
    assert "facts: dropped not in source" in result.stdout and "4 extracted facts were dropped" in result.stdout
    assert "ZZ-404" not in (tmp_path / "llm.jsonl").read_text()
    clean_error(invoke("personas", "build", "--from", tmp_path), "is not a mining output")
    clean_error(invoke("personas", "build", "--from", mined, "--holdout", "half"), "prefix:F")
    clean_error(invoke("personas", "build", "--from", mined, "-M", "x=1"), "add --model")


def _rubric_judge(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Scores every general dimension 3 (uninformative); the persona's own items 5 when the reply is short."""
    prompt = messages[-1]["content"]
    keys = re.findall(r'"(\w+)": <\d+-\d+', prompt)
    reply = prompt.split("[The assistant's reply (to be judged)]")[-1].split("Score the reply")[0]
    personal = "this user's own rubric" in prompt
    score = (5 if len(reply.strip()) < 60 else 1) if personal else 3
    return json.dumps({k: score for k in keys})


def test_rubric_agreement_cli(mined: Path, tmp_path: Path) -> None:
    personas = tmp_path / "p.jsonl"
    assert invoke("personas", "build", "--from", mined, "--out", personas, "--holdout", "prefix:0.3").exit_code == 0
    with LoopbackServer(LoopbackConfig(responder=_rubric_judge)) as server:
        result = invoke("sim", "rubric-agreement", "--real", mined, "--personas", personas, "--judge",
                        "openai:loopback", "-J", f"base_url={server.base_url}", "--format", "json", "--n-boot", "200",
                        "--quiet")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n_items"] >= 2 and report["general"]["auc"]["value"] == 0.5  # every reply scored alike
    assert report["general_rubric"] == "ux_general" and report["n_unscored"] == 0
    assert report["auc_difference"]["value"] == pytest.approx(report["personal"]["auc"]["value"] - 0.5)
    none = tmp_path / "none.jsonl"
    assert invoke("personas", "build", "--from", mined, "--out", none, "--holdout", "none").exit_code == 0
    clean_error(invoke("sim", "rubric-agreement", "--real", mined, "--personas", none, "--judge", "scripted:echo"),
                "No held-out real reply")
