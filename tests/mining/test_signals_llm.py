"""The LLM follow-up check: prompt, robust parsing, one retry then `failed`, and the same measurement
as the rules, through the real scripted provider and through a real loopback HTTP server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from uxbench.mining.signals.evaluate import (
    COARSE,
    FOLLOWUPS_PATH,
    evaluate_llm,
    evaluate_rules,
    load_followups,
)
from uxbench.mining.signals.llm_check import (
    FollowupPair,
    build_messages,
    classify_followups,
    parse_label,
    rule_label,
)
from uxbench.models.model import Model
from uxbench.models.registry import create_model_api


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ('{"label": "repeat", "reason": "same words"}', "repeat"),
        ('```json\n{"label": "topic_change"}\n```', "topic_change"),
        (
            'Sure. Here is my answer: {"label": "continue", "reason": "asks for more"} Hope it helps.',
            "continue",
        ),
        ('{"label": "Topic Change"}', "topic_change"),
        ('{"label": "继续"}', "continue"),
        ('{"label": "praise"}', "other"),
        ('{"note": {"x": 1}} {"label": "dismiss"}', "dismiss"),
    ],
)
def test_parse_label_reads_json_wherever_it_is(text: str, label: str) -> None:
    parsed = parse_label(text)
    assert parsed is not None and parsed[0] == label


@pytest.mark.parametrize(
    "text", ["repeat", "", '{"label": "angry"}', '{"label": 3}', "{label: repeat}", "[1, 2]"]
)
def test_parse_label_rejects_anything_else(text: str) -> None:
    assert parse_label(text) is None


def test_prompt_language_follows_the_conversation() -> None:
    zh = build_messages(FollowupPair(prev_user="怎么读取文件", assistant="用 open()", next_user="继续"))
    en = build_messages(
        FollowupPair(prev_user="how to read a file", assistant="use open()", next_user="go on")
    )
    assert "标签" in zh[0].content and "<<<继续>>>" in zh[1].content
    assert "Labels" in en[0].content and en[1].content.endswith("<<<go on>>>")
    retry = build_messages(FollowupPair(prev_user=None, assistant="a", next_user="b"), retry=True)
    assert retry[1].content.startswith("Your previous answer could not be read")


def _body_pattern(row: dict[str, Any]) -> str:
    return re.escape(f"<<<{row['prev_user']}>>>") + r"[\s\S]*" + re.escape(f"<<<{row['next_user']}>>>") + "$"


def _scripted_rules(rows: list[dict[str, Any]]) -> tuple[list[dict[str, str]], list[str]]:
    """A script over the labelled rows: mostly the gold label in varied shapes, some wrong on purpose,
    some unreadable once (then fine), some unreadable twice. Returns the rules and the expected labels."""
    retry_rules, first_rules, expected = [], [], []
    retry_prefix = r"^(?:Your previous answer|上一次的回答)[\s\S]*"
    shapes = [
        '{{"label": "{}", "reason": "scripted"}}',
        '```json\n{{"label": "{}"}}\n```',
        'Label: {{"label": "{}"}}',
    ]
    for i, row in enumerate(rows):
        gold = COARSE.get(row["label"], row["label"])
        pattern = _body_pattern(row)
        kind = i % 10
        if kind == 3:  # a wrong answer, read fine
            wrong = "other" if gold != "other" else "repeat"
            first_rules.append({"pattern": pattern, "response": json.dumps({"label": wrong})})
            expected.append(wrong)
        elif kind == 5:  # unreadable, then readable on the retry
            retry_rules.append({"pattern": retry_prefix + pattern, "response": json.dumps({"label": gold})})
            first_rules.append({"pattern": pattern, "response": f"I think this is {gold}."})
            expected.append(gold)
        elif kind == 7:  # unreadable twice
            first_rules.append({"pattern": pattern, "response": '{"label": "annoyed"}'})
            expected.append("failed")
        else:
            first_rules.append({"pattern": pattern, "response": shapes[i % 3].format(gold)})
            expected.append(gold)
    return retry_rules + first_rules, expected


async def test_scripted_model_through_classify_and_evaluate(tmp_path: Path) -> None:
    rows = load_followups(split="dev")
    rules, expected = _scripted_rules(rows)
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules, ensure_ascii=False), encoding="utf-8")
    model = Model(create_model_api(f"scripted:file:{path}"), max_concurrency=4)
    pairs = [(r["prev_user"], r["assistant"], r["next_user"]) for r in rows]
    verdicts = await classify_followups(pairs, model)
    assert [v.label for v in verdicts] == expected
    for i, v in enumerate(verdicts):
        assert v.attempts == (2 if i % 10 in (5, 7) else 1)
        assert len(v.raw) == v.attempts
        assert (v.error is not None) == (v.label == "failed")

    result = await evaluate_llm(FOLLOWUPS_PATH, model, split="dev")
    n_failed = expected.count("failed")
    gold = [COARSE.get(r["label"], r["label"]) for r in rows]
    assert result["n"] == len(rows) and result["failed"] == n_failed
    assert result["retried"] == sum(1 for i in range(len(rows)) if i % 10 in (5, 7))
    assert result["accuracy"] == pytest.approx(
        sum(g == e for g, e in zip(gold, expected, strict=True)) / len(rows)
    )
    print(f"\nscripted LLM check on dev: accuracy {result['accuracy']:.3f}, failed {n_failed}")


async def test_model_errors_are_recorded_as_failed(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([{"pattern": "NEVER-MATCHES", "response": "{}"}]), encoding="utf-8")
    model = Model(create_model_api(f"scripted:file:{path}"))  # no rule matches and no default: FatalModelError
    [verdict] = await classify_followups([("a", "b", "c")], model)
    assert verdict.label == "failed" and verdict.attempts == 1 and "No rule" in (verdict.error or "")


def _rules_responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A served "model" that answers what the rules say: the LLM path must then measure exactly the rules."""
    prev, reply, nxt = re.findall(r"<<<(.*?)>>>", messages[-1]["content"], re.S)[-3:]
    return json.dumps({"label": rule_label(prev or None, reply, nxt), "reason": "rules"})


async def test_llm_path_over_loopback_http_measures_like_the_rules() -> None:
    from uxbench.testing import LoopbackConfig, LoopbackServer

    with LoopbackServer(LoopbackConfig(responder=_rules_responder)) as srv:
        model = Model(create_model_api("openai:loopback", {"base_url": srv.base_url}), max_concurrency=8)
        try:
            result = await evaluate_llm(FOLLOWUPS_PATH, model, split="test")
        finally:
            await model.aclose()
    rules = evaluate_rules(FOLLOWUPS_PATH, split="test", timing_path=None)["rule_labels"]
    assert result["failed"] == 0
    assert result["accuracy"] == rules["accuracy"]
    assert result["labels"] == rules["labels"]
