"""`sim validate` reports a verdict per assistant against the split-half control, never a pooled mixture; warns
or refuses, with counts, when the sides are not comparable (language, task vs chit-chat, mining drops); refuses a
replay that measures nothing; gives a length-only baseline beside the discriminator; leans on the real users' own
thumbs where the logs have them; and gives identical intervals for identical inputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sim_support import REFUND, ZH_REFUND, rules_file, write_personas
from typer.testing import CliRunner, Result

from uxbench.cli.main import app

OPENERS = ["Hello, my kettle broke and I want a refund.", "I'd like my money back for a broken kettle, please.",
           "The kettle I bought arrived cracked. Refund?", "hi, kettle came broken, need a refund asap",
           "Good morning. Could you refund a kettle that arrived damaged?"]
EN_ONLY = [REFUND, *({**REFUND, "id": f"en-refund-{i}", "opener": o} for i, o in enumerate(OPENERS))]
ZH_OPENERS = ["水壶坏了，我要退款", "买的水壶收到就坏了，能退钱吗？", "你好，水壶有裂缝，申请退款",
              "水壶不能用，退款怎么弄", "请帮我把坏水壶的钱退了"]
ZH_ALL = [ZH_REFUND, *({**ZH_REFUND, "id": f"zh-refund-{i}", "opener": o} for i, o in enumerate(ZH_OPENERS))]


def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def _sim(tmp: Path, name: str, personas: list[dict[str, Any]], rules: list[tuple[str, str]], default: str,
         *extra: object) -> Path:
    files = write_personas(tmp / f"{name}.jsonl", *personas)
    model = rules_file(tmp / f"{name}-rules.json", rules, default)
    out = tmp / name
    result = invoke("sim", "run", "--personas", files, "--model", f"scripted:file:{model}", "--simulator",
                    "scripted:user", "--trials", "2", "--out", out, "--quiet", "--n-boot", "100", *extra)
    assert result.exit_code in (0, 1), result.output
    return out


HELPFUL = [(r"KX-99173", "Thanks. Your refund is on its way."), (r"KX-88120", "好的，退款已提交。"),
           (r"(?i)how long|long until|money back|many days", "It takes 5 business days."),
           (r"到账|多久", "一般3个工作日到账。"),
           (r"(?i)refund|kettle|money", "Sure. What is your order number?"),
           (r"退款|水壶|退钱", "好的，请提供订单号？")]


def _real_log(tmp: Path, name: str, openers: list[str], *, follow: str = "thanks, and how long does it take?",
              thumbs: list[str | None] | None = None, n: int = 30) -> Path:
    rows = []
    for i in range(n):
        cid = f"{name}-{i}"
        feedback = (thumbs or [None])[i % len(thumbs or [None])]
        rows += [{"conversation_id": cid, "turn_index": 0, "role": "user", "content": openers[i % len(openers)]},
                 {"conversation_id": cid, "turn_index": 1, "role": "assistant",
                  "content": f"Here is what you can do, option {i}: contact support with your receipt.",
                  **({"feedback": feedback} if feedback else {})},
                 {"conversation_id": cid, "turn_index": 2, "role": "user", "content": f"{follow} ({i})"},
                 {"conversation_id": cid, "turn_index": 3, "role": "assistant", "content": "Usually five days."}]
    path = tmp / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _validate(*args: object) -> dict[str, Any]:
    result = invoke("sim", "validate", *args, "--format", "json", "--n-boot", "200", "--quiet")
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("validate-checks")
    with pytest.MonkeyPatch.context() as mp:  # the module's runs get a private cache too (conftest's is per test)
        mp.setenv("UXBENCH_CACHE_DIR", str(tmp / "cache"))
        mp.setenv("UXBENCH_DEID_SALT", "sim-tests-deid-salt-0123456789")
        yield _runs(tmp)


def _runs(tmp: Path) -> dict[str, Path]:
    return {
        "helpful": _sim(tmp, "helpful", EN_ONLY, HELPFUL, "Sorry, I am not sure."),
        "never": _sim(tmp, "never", EN_ONLY, [], "Sorry, I am not sure."),
        "mixed": _sim(tmp, "mixed", [*EN_ONLY, *ZH_ALL], HELPFUL, "Sorry, I am not sure."),
        "zh_only": _sim(tmp, "zh-only", ZH_ALL[:2], [], "抱歉，我不太清楚。"),
        "zh_good": _sim(tmp, "zh-good", ZH_ALL[:2], [], "好"),
        "real": _real_log(tmp, "real", ["I need a refund for my kettle, how do I get it?",
                                        "My order never arrived, can you help?"]),
        "chat": _real_log(tmp, "chat", ["hi how are you", "hello!", "hey, what's up"], follow="haha nice"),
        "thumbs": _real_log(tmp, "thumbs", ["I need a refund for my kettle, how do I get it?"],
                            thumbs=["dislike", "like", None, "like"]),
        "tmp": tmp,
    }


@pytest.mark.extra("learn")  # the discriminator needs scikit-learn
def test_two_assistants_are_judged_apart_and_never_pooled(runs: dict[str, Path]) -> None:
    report = _validate(runs["helpful"], runs["never"], "--real", runs["real"])
    assert "pooled" not in report
    assert len(report["by_assistant"]) == 2
    for entry in report["by_assistant"].values():
        verdict = entry["verdict"]
        assert verdict["status"] in ("differs", "undetermined", "no_difference_found")
        assert "faithful" not in verdict["summary"].lower()
        assert {c["criterion"] for c in verdict["criteria"]} >= {"wording", "reaction_mix", "dissatisfaction",
                                                                 "session_length"}
        disc = entry["discriminator"]
        assert disc["length_baseline"]["value"] is not None and "length" in disc["reading"]
        assert disc["ci_low"] > 0.5 and verdict["status"] == "differs"  # told apart: never called alike
        wording = next(c for c in verdict["criteria"] if c["criterion"] == "wording")
        assert wording["status"] == "differs" and "length alone" in wording["evidence"]
    text = invoke("sim", "validate", runs["helpful"], runs["never"], "--real", runs["real"], "--quiet",
                  "--n-boot", "100").output
    assert "Verdict for" in text and "Length-only baseline AUC" in text


def test_a_language_mismatch_is_warned_with_counts_and_no_common_language_is_refused(runs: dict[str, Path]) -> None:
    report = _validate(runs["mixed"], "--real", runs["real"])
    (warning,) = [c for c in report["checks"] if c["check"] == "language"]
    assert "zh 12 of 24" in warning["message"] and "en 30 of 30" in warning["message"]
    result = invoke("sim", "validate", runs["zh_only"], "--real", runs["real"], "--quiet")
    assert result.exit_code == 2 and "share no language" in result.output and "zh 4 of 4" in result.output
    result = invoke("sim", "validate", runs["zh_good"], "--real", runs["real"], "--quiet")  # every reply "好"
    assert result.exit_code == 2 and "nothing of" in result.output and "all_interrupted 4" in result.output


def test_chit_chat_logs_against_task_personas_are_warned(runs: dict[str, Path]) -> None:
    report = _validate(runs["helpful"], "--real", runs["chat"], "--no-discriminator")
    (warning,) = [c for c in report["checks"] if c["check"] == "task"]
    assert "0 of 30 real ones" in warning["message"] and "chit-chat" in warning["message"]


def test_sessions_the_mining_prefilter_dropped_are_counted_by_language(runs: dict[str, Path]) -> None:
    """The never-helping Chinese assistant replies "好": every such session is dropped as all_interrupted."""
    mixed_never = _sim(runs["tmp"], "mixed-never", [*EN_ONLY, *ZH_ALL], [(r"[a-z]", "Sorry, I am not sure.")],
                       "好")
    report = _validate(mixed_never, "--real", runs["real"], "--no-discriminator")
    drops = [c for c in report["checks"] if c["check"] == "mining_drops"]
    assert drops and "all_interrupted 12" in drops[0]["message"] and "zh 12" in drops[0]["message"]
    assert "en" not in drops[0]["message"].split("by language:")[1]


def test_replay_with_rule_built_personas_and_the_rules_assessor_is_refused(tmp_path: Path,
                                                                            runs: dict[str, Path]) -> None:
    mined = tmp_path / "mined"
    assert invoke("mine", "run", runs["real"], "--out", mined, "--no-llm", "--quiet").exit_code == 0
    personas = tmp_path / "personas.jsonl"
    built = invoke("personas", "build", "--from", mined, "--out", personas, "--holdout", "prefix:0.5")
    assert built.exit_code == 0, built.output
    result = invoke("sim", "validate", "--real", mined, "--replay", "--personas", personas, "--quiet")
    assert result.exit_code == 2 and "built by rules" in result.output and "--assessor PROVIDER:MODEL" in result.output


def test_thumbs_are_the_yardstick_where_the_logs_have_them(runs: dict[str, Path]) -> None:
    report = _validate(runs["helpful"], "--real", runs["thumbs"], "--no-discriminator")
    stick = report["yardstick"]
    assert stick["primary"] == "thumbs"
    assert stick["thumbs"]["recall_of_dislikes"]["n"] == 8 and stick["thumbs"]["auc"]["n_positive"] == 8
    (entry,) = report["by_assistant"].values()
    assert any(c["criterion"] == "thumbs" for c in entry["verdict"]["criteria"])
    # every real follow-up here reads as satisfied, liked or not: the labels do not track the thumbs, and it says so
    assert "do not track" in stick["caveat"] and entry["verdict"]["caveat"] == stick["caveat"]
    plain = _validate(runs["helpful"], "--real", runs["real"], "--no-discriminator")
    assert plain["yardstick"]["primary"] == "mined labels" and "no thumbs" in plain["yardstick"]["note"]


def test_identical_inputs_give_identical_intervals(runs: dict[str, Path]) -> None:
    first = _validate(runs["helpful"], runs["never"], "--real", runs["real"])
    second = _validate(runs["helpful"], runs["never"], "--real", runs["real"])
    assert first == second
    a = invoke("sim", "compare", runs["helpful"], runs["never"], "--format", "json", "--n-boot", "300").stdout
    b = invoke("sim", "compare", runs["helpful"], runs["never"], "--format", "json", "--n-boot", "300").stdout
    assert a == b and json.loads(a)["metrics"]
