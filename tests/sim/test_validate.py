"""`uxbench sim validate` on two synthetic "real" log sets, replay and free run.

Set A is written to match the simulator (its users say what the simulator says: found by replaying until the texts
stop changing), set B to be less cooperative than it (every follow-up a complaint, as real users are found to be
next to LLM simulators). The documented values (docs/SIM_VALIDATION.md): on A, kappa = 1, every rate ratio = 1,
JS distance = 0, cooperativeness gap = 0; on B, kappa = 0 and a positive gap."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sim_support import write_personas
from typer.testing import CliRunner, Result

from uxbench.cli.main import app
from uxbench.mining.pipeline.mined import mined_run
from uxbench.sim.assess import RulesAssessor
from uxbench.sim.persona_io import load_personas
from uxbench.sim.scripted import ScriptedRealiser
from uxbench.sim.validate_replay import run_replay

COMPLAINT = {"en": "That's wrong, it still doesn't work.", "zh": "不对，还是不行。"}


def digest(cid: str) -> str:
    return hashlib.sha256(cid.encode()).hexdigest()[:16]


def _persona(cid: str, lang: str, request: str, check: str) -> dict[str, Any]:
    return {"id": f"p-{cid}", "lang": lang, "source": f"mined:{digest(cid)}",
            "goal": [{"id": "item", "request": request, "check": {"any_of": [check]}}],
            "patience": {"session": 3}, "reactions": {"failure": {"rephrase": 1, "complain": 1},
                                                      "failure_low": {"complain": 1, "dismiss": 1}},
            "meta": {"holdout": {"rule": "prefix", "held_out_from_turn_index": 1}}}


CONVS: dict[str, tuple[str, str, str, list[str]]] = {  # cid -> lang, request, success phrase, replies
    "c1": ("en", "get a refund for the double charge", "refund has been processed",
           ["Please contact your bank.", "I cannot do that.", "Your refund has been processed."]),
    "c2": ("en", "fix the wifi that keeps dropping", "restart the router",
           ["Try to restart the router and wait a minute."]),
    "c3": ("en", "change my flight to Friday", "flight is now on friday",
           ["Which airline?", "Sorry, no idea.", "Done: your flight is now on Friday."]),
    "c4": ("zh", "查一下快递什么时候到", "明天送达",
           ["请稍等。", "我不太清楚。", "您的快递预计明天送达。"]),
}


def _rows(users: dict[str, list[str | None]]) -> list[dict[str, Any]]:
    rows = []
    for cid, (_lang, request, _check, replies) in CONVS.items():
        texts = [request]
        for reply, user in zip(replies, users[cid], strict=True):
            texts.append(reply)
            if user is None:
                break
            texts.append(user)
        rows += [{"conversation_id": cid, "turn_index": i, "role": "user" if i % 2 == 0 else "assistant",
                  "content": t} for i, t in enumerate(texts)]
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def matching_users(tmp: Path, personas: Path) -> dict[str, list[str | None]]:
    """The users' follow-ups that the simulator itself would write (replayed until they no longer change)."""
    users: dict[str, list[str | None]] = {cid: ["ok"] * len(c[3]) for cid, c in CONVS.items()}
    loaded = [p.persona for p in load_personas([personas])]
    for round_ in range(6):
        log = _write(tmp / f"round{round_}.jsonl", _rows(users))
        mined = mined_run(log, tmp / f"mined{round_}", workers=1)
        result = asyncio.run(run_replay(mined, loaded, ScriptedRealiser("scripted:user"), RulesAssessor()))
        by_digest = {digest(cid): cid for cid in CONVS}
        new = {cid: list(v) for cid, v in users.items()}
        for step in result.steps:
            cid = by_digest[step.conversation]
            k = (step.turn_index - 1) // 2
            new[cid][k] = step.sim_text
            if step.sim_text is None or step.act in ("stop_success", "dismiss"):
                new[cid] = new[cid][: k + 1] + [None] * (len(new[cid]) - k - 1)
        if new == users:
            return users
        users = new
    raise AssertionError("the replay did not reach a fixed point")


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("validate")
    personas = write_personas(tmp / "personas.jsonl", *(_persona(cid, *c[:3]) for cid, c in CONVS.items()))
    users = matching_users(tmp, personas)
    b_users = {cid: [None if u is None else COMPLAINT[CONVS[cid][0]] for u in us] for cid, us in users.items()}
    return {"personas": personas, "A": _write(tmp / "A.jsonl", _rows(users)),
            "B": _write(tmp / "B.jsonl", _rows(b_users))}


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def _validate(*args: object) -> dict[str, Any]:
    result = invoke("sim", "validate", *args, "--format", "json", "--n-boot", "300", "--quiet")
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_replay_on_the_matching_set_gives_the_documented_values(sets: dict[str, Path]) -> None:
    report = _validate("--real", sets["A"], "--replay", "--personas", sets["personas"])
    assert report["mode"] == "replay" and report["n_steps"] >= 8
    assert report["agreement"]["kappa"]["value"] == pytest.approx(1.0)
    reactions = report["reactions"]
    assert reactions["js_distance"]["value"] == pytest.approx(0.0, abs=1e-9)
    assert reactions["cooperativeness_gap"]["value"] == pytest.approx(0.0)
    ratios = [r["ratio_sim_over_real"]["value"] for r in reactions["rates"].values()
              if r["ratio_sim_over_real"]["value"] is not None]
    assert ratios and all(v == pytest.approx(1.0) for v in ratios)


def test_replay_on_the_less_cooperative_set_shows_a_positive_gap(sets: dict[str, Path]) -> None:
    report = _validate("--real", sets["B"], "--replay", "--personas", sets["personas"])
    reactions = report["reactions"]
    gap = reactions["cooperativeness_gap"]
    assert gap["value"] > 0.3 and gap["ci_low"] > 0
    assert reactions["dissatisfied"]["real"]["value"] == 1.0
    assert report["agreement"]["kappa"]["value"] == pytest.approx(0.0, abs=1e-9)
    assert reactions["js_distance"]["value"] > 0.3


@pytest.mark.extra("learn")  # the discriminator (scikit-learn) is part of what it checks
def test_free_run_against_a_copy_of_the_run_and_a_less_cooperative_one(tmp_path: Path, sets: dict[str, Path]
                                                                       ) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": "(?i)refund|charge", "response": "Please contact your bank."}],
                                 "default": "Sorry, no idea."}), encoding="utf-8")
    run = tmp_path / "run"
    result = invoke("sim", "run", "--personas", sets["personas"], "--model", f"scripted:file:{rules}",
                    "--simulator", "scripted:user", "--trials", "3", "--out", run, "--quiet", "--n-boot", "100")
    assert result.exit_code in (0, 1), result.output
    same = tmp_path / "same.jsonl"
    shutil.copy(run / "sessions.jsonl", same)
    report = _validate(run, "--real", same)
    (entry,) = report["by_assistant"].values()
    assert entry["reactions"]["js_distance"]["value"] == pytest.approx(0.0, abs=1e-9)
    assert entry["reactions"]["cooperativeness_gap"]["value"] == pytest.approx(0.0)
    assert entry["session_length"]["statistic"] == pytest.approx(0.0)
    disc = entry["discriminator"]
    assert disc["value"] is not None and disc["ci_low"] <= 0.5 <= disc["ci_high"]  # indistinguishable
    assert disc["length_baseline"]["value"] is not None
    assert entry["verdict"]["status"] != "differs", entry["verdict"]
    rows = [json.loads(line) for line in same.read_text().splitlines()]
    for row in rows:
        if row["role"] == "user" and row["turn_index"] > 0:
            row["content"] = COMPLAINT["en"]
    worse = _write(tmp_path / "worse.jsonl", rows)
    report = _validate(run, "--real", worse, "--no-discriminator")
    (entry,) = report["by_assistant"].values()
    gap = entry["reactions"]["cooperativeness_gap"]
    assert gap["value"] > 0 and gap["ci_low"] > 0
    assert entry["verdict"]["status"] == "differs"
    assert any(c["criterion"] == "dissatisfaction" and c["status"] == "differs" for c in entry["verdict"]["criteria"])
    assert report["split_half_control"]["reactions"]["n_sessions"]["real"] > 0


def test_bad_input_is_refused_clearly(tmp_path: Path, sets: dict[str, Path]) -> None:
    for args, needle in [
        (("--real", tmp_path / "missing.jsonl", tmp_path), "no such file"),
        (("--real", sets["A"]), "Pass one or more sim run directories"),
        (("--real", sets["A"], "--replay"), "--replay needs --personas"),
        (("--real", sets["A"], tmp_path, "--personas", sets["personas"]), "apply to --replay only"),
    ]:
        result = invoke("sim", "validate", *args)
        assert result.exit_code == 2 and needle in result.output, result.output
        assert "Traceback" not in result.output
