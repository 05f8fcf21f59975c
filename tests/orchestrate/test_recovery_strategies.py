"""Recovery strategies on Task 3 runs: the rules label every recovery at generation time; a strategy model
(`--strategy-model`, here a loopback server) labels them in a resumable step; the summary gives each
classifier's distribution and the judge's Recovery Rate per strategy, equal to hand-computed values."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from run_support import write_jsonl

from uxbench.errors import ConfigError
from uxbench.orchestrate.relabel import label_run
from uxbench.orchestrate.runner import JudgeSpec, RunSpec, execute
from uxbench.orchestrate.spec import StrategySpec
from uxbench.testing.loopback import LoopbackConfig, LoopbackServer

# complaint -> the recovery the model under test writes; [[SAY:x]] scripts the judge's verdict
REPLIES = {
    "c1": "Sorry, I got that wrong. The fastest train takes 4.5 hours. [[SAY:good]]",
    "c2": "You're right, it is 4.5 hours. [[SAY:bad]]",
    "c3": "Which city are you leaving from? [[SAY:good]]",
    "c4": "Here is the shorter note: I need tomorrow off. [[SAY:good]]",
    "c5": "I'm sorry for the confusion. It opens at nine. [[SAY:bad]]",
    "c6": "",  # an empty reply: generated, scored, but no strategy to read
}


class StrategyServer:
    """The strategy model: answers by the reply opening it is shown, in the ways a real model goes wrong."""

    def __init__(self) -> None:
        self.failed_once = False
        self.requests = 0

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        self.requests += 1
        prompt, retry = str(messages[0]["content"]), len(messages) > 1
        if "Sorry, I got that wrong" in prompt:
            return '{"strategy": "apology"}'
        if "You're right" in prompt:  # prose first; the retry gets JSON
            return '{"strategy": "agreement"}' if retry else "I would call this agreement."
        if "Which city" in prompt:  # never readable
            return "hmm, hard to say"
        if "Here is the shorter note" in prompt and not self.failed_once:
            self.failed_once = True
            raise RuntimeError("the server breaks on its first try at this one")  # HTTP 500
        if "Here is the shorter note" in prompt:
            return '{"strategy": "direct_fix"}'
        return 'Sure.\n```json\n{"strategy": "Apology"}\n```'


def _data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "task3.jsonl", [
        {"cid": cid, "history": [{"role": "user", "content": f"question {cid}"}], "failed_response": "wrong",
         "user_complaint": f"complaint {cid}"} for cid in REPLIES
    ])


def _model_reply(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    return REPLIES[str(messages[-1]["content"]).split()[-1]]


def _spec(tmp_path: Path, model: LoopbackServer, strategy: LoopbackServer | None) -> RunSpec:
    return RunSpec(
        task="recovery", model="openai:loopback", model_args={"base_url": model.base_url}, data=str(_data(tmp_path)),
        judge=JudgeSpec(model="scripted:always-good"), out=tmp_path / "run", concurrency=4, max_attempts=1,
        strategy_model=None if strategy is None else StrategySpec(model="openai:labeller",
                                                                   args={"base_url": strategy.base_url}),
    )


def _cell(block: dict[str, Any], name: str) -> tuple[int, int]:
    return block["distribution"][name]["k"], block["distribution"][name]["n"]


def _rate(block: dict[str, Any], judge: str, name: str) -> tuple[int, int]:
    cell = block["recovery_rate"][judge][name]
    return cell["n_good"], cell["n_scored"]


def test_rules_and_a_strategy_model_with_unparseable_answers_and_a_failed_call(tmp_path: Path) -> None:
    labeller = StrategyServer()
    with LoopbackServer(LoopbackConfig(responder=_model_reply)) as model, \
            LoopbackServer(LoopbackConfig(responder=labeller)) as strategy:
        first = asyncio.run(execute(_spec(tmp_path, model, strategy))).summary
        generated = model.stats.requests
        requests_before = labeller.requests
        second = asyncio.run(execute(_spec(tmp_path, model, strategy))).summary  # the same command again
        assert model.stats.requests == generated  # nothing regenerated
        assert labeller.requests - requests_before == 1  # only the failed label is asked again

    (judge,) = second["judges"]  # the classifier is not a judge
    block = second["recovery_strategies"]
    assert block["n_replies"] == 5  # the empty reply has no strategy
    rules = block["classifiers"]["rules"]
    assert {s: _cell(rules, s) for s in block["strategies"]} == {
        "apology": (2, 5), "agreement": (1, 5), "error_diagnosis": (0, 5), "humor": (0, 5),
        "direct_fix": (1, 5), "clarification": (1, 5)}
    assert _rate(rules, judge, "apology") == (1, 2)  # c1 good, c5 bad
    assert _rate(rules, judge, "agreement") == (0, 1)
    assert _rate(rules, judge, "clarification") == (1, 1)
    ci = rules["distribution"]["apology"]
    assert ci["ci_low"] == pytest.approx(0.1176, abs=1e-3) and ci["ci_high"] == pytest.approx(0.7693, abs=1e-3)

    (key,) = (k for k in block["classifiers"] if k != "rules")
    assert key.startswith("strategy-openai-labeller-")
    before = first["recovery_strategies"]["classifiers"][key]
    assert (before["n_unparseable"], before["n_not_labelled"]) == (1, 1)  # c3 never readable, c4's call failed
    assert _cell(before, "not_labelled") == (1, 5)
    model_block = block["classifiers"][key]
    assert {s: _cell(model_block, s)[0] for s in [*block["strategies"], "unparseable", "not_labelled"]} == {
        "apology": 2, "agreement": 1, "error_diagnosis": 0, "humor": 0, "direct_fix": 1, "clarification": 0,
        "unparseable": 1, "not_labelled": 0}
    assert _rate(model_block, judge, "unparseable") == (1, 1)  # counted, never dropped
    assert _rate(model_block, judge, "direct_fix") == (1, 1)
    assert model_block["spec"] == "openai:labeller"
    assert f"strategy:{key}" in second["usage"]

    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert list(manifest["strategy_classifiers"]) == [key] and key not in manifest["judges"]
    db = sqlite3.connect(run / "samples.sqlite")
    stored = {cid: (label, note) for cid, label, note in (
        (json.loads(b)["case_id"], json.loads(b)["label"], json.loads(b)["parse_note"])
        for (b,) in db.execute("SELECT body FROM scores WHERE judge = ?", (key,)))}
    assert stored["c2"][0] == "agreement" and "after a retry" in stored["c2"][1]
    assert stored["c3"][0] is None and stored["c3"][1].startswith("unparseable")
    records = {json.loads(b)["case_id"]: json.loads(b)["extra"] for (b,) in db.execute("SELECT body FROM records")}
    assert (records["c1"]["strategy"], records["c1"]["strategy_cue"]) == ("apology", "sorry")
    assert (records["c3"]["strategy"], records["c3"]["strategy_cue"]) == ("clarification", None)
    assert "strategy" not in records["c6"]


def test_label_an_existing_run_with_another_strategy_model(tmp_path: Path) -> None:
    rules_file = tmp_path / "labels.json"
    rules_file.write_text(json.dumps({"rules": [], "default": '{"strategy": "humor"}'}))
    with LoopbackServer(LoopbackConfig(responder=_model_reply)) as model:
        asyncio.run(execute(_spec(tmp_path, model, None)))
    summary = asyncio.run(label_run(tmp_path / "run", StrategySpec(model=f"scripted:file:{rules_file}"))).summary
    block = summary["recovery_strategies"]["classifiers"]
    (key,) = (k for k in block if k != "rules")
    assert _cell(block[key], "humor") == (5, 5)
    assert len(summary["judges"]) == 1 and summary["strategy_labelling"]["labelled_now"] == 5
    again = asyncio.run(label_run(tmp_path / "run", StrategySpec(model=f"scripted:file:{rules_file}"))).summary
    assert again["strategy_labelling"]["labelled_now"] == 0 and again["strategy_labelling"]["already_labelled"] == 5


def test_strategy_model_is_for_recovery_runs_only(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "t2.jsonl", [{"cid": "a", "query": "q"}])
    spec = RunSpec(task="eval", model="scripted:echo", data=str(data), out=tmp_path / "run",
                   strategy_model=StrategySpec(model="scripted:echo"))
    with pytest.raises(ConfigError, match="--task recovery"):
        asyncio.run(execute(spec))
    asyncio.run(execute(spec.model_copy(update={"strategy_model": None})))
    with pytest.raises(ConfigError, match="this run's task is eval"):
        asyncio.run(label_run(tmp_path / "run", StrategySpec(model="scripted:echo")))
