"""`sim.build`: personas from a real mining output, by rule and with an LLM extraction over a loopback server;
a fact whose value never occurs in the source is dropped and counted; hold-out splits are recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from build_support import mined_output

from uxbench.errors import ConfigError
from uxbench.mining.llm import open_model
from uxbench.sim.build import BuildOptions, build_personas
from uxbench.sim.build_llm import extract, prompt_digest
from uxbench.sim.build_rules import Holdout
from uxbench.sim.persona_io import load_personas
from uxbench.testing import LoopbackConfig, LoopbackServer


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mined_output(tmp_path_factory.mktemp("mined"))


def _by_id(path: Path) -> dict[str, Any]:
    return {p.persona.opener or "": p.persona for p in load_personas([path])}


def test_rule_build_facts_holdout_and_reactions(mined: Path, tmp_path: Path) -> None:
    out = tmp_path / "personas.jsonl"
    report = asyncio.run(build_personas(mined, out, BuildOptions(holdout=Holdout("none"))))
    assert report.read == 4 and report.built == 4
    personas = _by_id(out)
    refund = personas["My blender arrived cracked and I want a refund."]
    assert refund.source.startswith("mined:") and refund.lang == "en"
    (phone,) = refund.facts
    assert phone.value == "[PHONE_1]" and phone.disclose == "on_request"  # the assistant had asked for it
    assert refund.goal[0].needs == ("phone_1",)
    assert refund.patience.session == 1.5  # gave up after two failed replies
    assert refund.reactions.provenance.startswith("fitted:")
    assert refund.meta["reaction_counts"]["failure"] == {"complain": 1}
    assert refund.meta["reaction_counts"]["failure_low"] == {"dismiss": 1}
    zh = next(p for o, p in personas.items() if o.startswith("我的快递"))
    assert zh.lang == "zh" and zh.facts[0].disclose == "opening"  # the phone number is in the first message
    build = json.loads((tmp_path / "personas.jsonl.build.json").read_text())
    assert build["personas_built"] == 4 and build["options"]["holdout"] == "none:0"
    assert "415-555-0199" not in out.read_text() and "13812345678" not in out.read_text()  # placeholders only


def test_prefix_and_conversation_holdout(mined: Path, tmp_path: Path) -> None:
    asyncio.run(build_personas(mined, tmp_path / "p.jsonl", BuildOptions(holdout=Holdout("prefix", 0.5))))
    refund = _by_id(tmp_path / "p.jsonl")["My blender arrived cracked and I want a refund."]
    split = refund.meta["holdout"]
    assert split["rule"] == "prefix" and split["user_turns_built"] == 2 and split["user_turns_held_out"] == 2
    assert refund.patience.session > 1.5  # the give-up is in the held-out part, so it is not seen
    report = asyncio.run(build_personas(mined, tmp_path / "q.jsonl", BuildOptions(holdout=Holdout("conversation", 50))))
    assert report.built + len(report.held_out) == 4 and report.held_out
    with pytest.raises(ConfigError, match="prefix:F"):
        Holdout.parse("prefix:2")
    with pytest.raises(ConfigError, match="No persona was built"):
        asyncio.run(build_personas(mined, tmp_path / "r.jsonl", BuildOptions(min_user_turns=9)))
    assert not (tmp_path / "r.jsonl").exists()


def _extraction(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    prompt = messages[-1]["content"]
    if "Your answer could not be used" in prompt or "你的回答无法使用" in prompt:
        return "still not JSON"
    if "router" in prompt:
        return "I think this user is nice."  # never valid: the extraction fails after one retry
    if "blender" in prompt:
        return json.dumps({"description": "Busy buyer of a broken blender.", "expertise": "novice",
                           "tone": "blunt", "goal": [{"request": "get a refund", "check_question": "Refunded?"}],
                           "facts": [{"label": "phone", "value": "[PHONE_1]"},
                                     {"label": "order number", "value": "A7-58213"}]})  # not in the source
    return json.dumps({"description": "用户",
                       "goal": [{"request": "查快递什么时候到", "check_question": "说了送达时间吗？"}],
                       "facts": [{"label": "订单号", "value": "２０２４０５１７"}]})  # full-width: still found


async def _run_llm(mined: Path, out: Path, base_url: str) -> Any:
    async with open_model("openai:loopback", {"base_url": base_url}, cache_path=out.parent / "c.sqlite") as model:
        async def extractor(texts: list[str], lang: str) -> Any:
            return await extract(model, texts, lang)

        return await build_personas(mined, out, BuildOptions(
            holdout=Holdout("none"), extraction="openai:loopback", prompt_digest=prompt_digest(),
            min_user_turns=2), extractor=extractor)


def test_llm_extraction_checks_every_fact_in_the_source(mined: Path, tmp_path: Path) -> None:
    out = tmp_path / "llm.jsonl"
    with LoopbackServer(LoopbackConfig(responder=_extraction)) as server:
        report = asyncio.run(_run_llm(mined, out, server.base_url))
    assert report.skipped["extraction_failed"] == 1 and report.skipped["too_few_user_turns"] == 1
    assert report.facts["dropped_not_in_source"] == 1
    assert report.dropped_facts == [{"conversation": report.dropped_facts[0]["conversation"], "fact": "fact_2"}]
    personas = _by_id(out)
    refund = personas["My blender arrived cracked and I want a refund."]
    assert refund.profile.description == "Busy buyer of a broken blender." and refund.profile.tone == "blunt"
    assert [f.value for f in refund.facts] == ["[PHONE_1]"]  # the invented order number is gone
    zh = next(p for o, p in personas.items() if o.startswith("我的快递"))
    order = next(f for f in zh.facts if f.label == "订单号")
    assert order.disclose == "on_request" and zh.goal[0].request == "查快递什么时候到"
    build = orjson.loads((tmp_path / "llm.jsonl.build.json").read_bytes())
    assert build["options"]["extraction"] == "openai:loopback" and len(build["options"]["prompt_digest"]) == 16
    assert "A7-58213" not in (tmp_path / "llm.jsonl.build.json").read_text()



def test_a_persona_whose_text_holds_unicode_line_separators_reads_back(tmp_path: Path) -> None:
    from uxbench.sim.persona import Persona
    from uxbench.sim.persona_io import personas_jsonl

    p = Persona.model_validate({"id": "sep", "lang": "en", "opener": "first\u2028second\x1cthird\x0bfourth",
                                "goal": [{"id": "g", "request": "help\u2029me", "check": {"question": "Helped?"}}]})
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in personas_jsonl([p, p.model_copy(update={"id": "sep2"})])))
    assert [x.persona.opener for x in load_personas([path])] == [p.opener, p.opener]
