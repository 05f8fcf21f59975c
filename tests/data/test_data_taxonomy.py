"""Taxonomy data and name mapping across the dataset's vocabularies."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uxbench.data import taxonomy as tx


def test_sizes_and_keys() -> None:
    assert len(tx.failure_dimensions()) == 10
    assert len(tx.success_dimensions()) == 8
    assert [e.key for e in tx.scenarios()] == [
        "information_knowledge",
        "creative_content",
        "entertainment",
        "private_daily_life",
        "decision_support",
        "product_service",
        "emotional_support",
        "work_productivity",
    ]
    assert [(e.key, e.zh) for e in tx.recovery_strategies()] == [
        ("apology", "道歉"),
        ("agreement", "认同"),
        ("error_diagnosis", "错误诊断"),
        ("humor", "幽默"),
        ("direct_fix", "直接修正"),
        ("clarification", "澄清"),
    ]
    signals = {e.key for e in tx.signal_types()}
    assert {
        "dislike",
        "like",
        "explicit_complaint",
        "repeat_query",
        "rephrase_query",
        "short_dismiss",
    } <= signals
    assert {
        "abandon",
        "skip_read",
        "topic_change",
        "conversation_end",
        "explicit_praise",
        "deep_dive",
    } <= signals
    assert "regenerate" in signals


def test_entries_are_frozen_and_copies() -> None:
    entry = tx.failure_dimensions()[0]
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError for frozen models
        entry.key = "x"  # type: ignore[misc]
    lst = tx.failure_dimensions()
    lst.clear()
    assert len(tx.failure_dimensions()) == 10


@pytest.mark.parametrize(
    "kind",
    [
        "failure_dimensions",
        "success_dimensions",
        "scenarios",
        "recovery_strategies",
        "signal_types",
        "difficulties",
    ],
)
def test_every_name_maps_to_its_own_key(kind: tx.TaxonomyKind) -> None:
    for entry in tx.entries(kind):
        for name in (entry.key, entry.en, entry.zh, *entry.aliases):
            assert tx.map_name(kind, name) == entry.key, (kind, name)
            assert tx.map_name(kind, f"  {name.upper()} ") == entry.key


@pytest.mark.parametrize(
    ("name", "key"),
    [
        # 14-name vocabulary
        ("冗余啰嗦", "verbosity"),
        ("任务未完成", "task_incomplete"),
        ("意图理解偏差", "intent_misunderstanding"),
        ("事实性错误", "factual_error"),
        ("信息可靠性不足", "reliability"),
        ("系统技术错误", "system_error"),
        ("指令遵循失败", "instruction_format"),
        ("格式结构问题", "instruction_format"),
        ("情感语气失当", "emotional_tone"),
        ("信息不充分", "insufficient_info"),
        ("过度拒绝", "safety_refusal"),
        ("安全合规问题", "safety_refusal"),
        # miner's 10
        ("冗余", "verbosity"),
        ("意图识别偏差", "intent_misunderstanding"),
        ("回答无效/无用", "insufficient_info"),
        ("格式问题", "instruction_format"),
        ("情感响应失当", "emotional_tone"),
        ("预期落差", "safety_refusal"),
        # 18-name normaliser list
        ("冗余/啰嗦", "verbosity"),
        ("上下文遗漏/记忆", "intent_misunderstanding"),
        ("格式/结构不当", "instruction_format"),
        ("情感/语气失当", "emotional_tone"),
        ("风格/受众不匹配", "emotional_tone"),
        ("预期落差/过度拒答", "safety_refusal"),
        ("服务恢复失败", "task_incomplete"),
        ("信息不充分/泛化", "insufficient_info"),
        ("安全/合规问题", "safety_refusal"),
        ("系统/服务中断", "system_error"),
        # English release names, keys, traditional characters
        ("Verbosity / Redundancy", "verbosity"),
        ("Instruction / Format Failure", "instruction_format"),
        ("safety_refusal", "safety_refusal"),
        ("冗餘囉嗦", "verbosity"),
        ("事實性錯誤", "factual_error"),
        ("過度拒絕", "safety_refusal"),
    ],
)
def test_failure_vocabularies(name: str, key: str) -> None:
    assert tx.map_failure_dimension(name) == key


@pytest.mark.parametrize(
    "name", ["其他", "需求澄清不足", "对话管理不当", "Other", "", "   ", "完全不认识的标签"]
)
def test_failure_without_slot_is_none(name: str) -> None:
    assert tx.map_failure_dimension(name) is None


def test_known_unmapped_is_distinguished_from_unknown() -> None:
    assert tx.is_known_unmapped("failure_dimensions", "其他")
    assert tx.is_known_unmapped("failure_dimensions", "需求澄清不足")
    assert not tx.is_known_unmapped("failure_dimensions", "完全不认识的标签")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("信息与知识查询", "information_knowledge"),
        ("创意内容与生成", "creative_content"),
        ("娱乐消遣", "entertainment"),
        ("产品与服务咨询", "product_service"),
        ("私密与生活决策辅助", "private_daily_life"),
        ("私密與生活決策輔助", "private_daily_life"),
        ("办公与效率", "work_productivity"),
        ("情绪与心理支持", "emotional_support"),
        ("Information & Knowledge Seeking", "information_knowledge"),
        ("Information and Knowledge Query", "information_knowledge"),
        ("Personal Assistance & Emotional Support", "private_daily_life"),
        ("Creative Content & Entertainment", "creative_content"),
        ("Casual Chat & Companionship", "entertainment"),
        ("Learning & Educational Support", "information_knowledge"),
        ("Productivity & Office Efficiency", "work_productivity"),
        ("Product & Service Inquiry", "product_service"),
        ("Decision Support", "decision_support"),
        ("信息/知识咨询", "information_knowledge"),
        ("创作写作", "creative_content"),
        ("商品/服务咨询", "product_service"),
        ("学习/教育辅助", "information_knowledge"),
        ("私人健康/个人生活", "private_daily_life"),
        ("情绪/心理支持", "emotional_support"),
    ],
)
def test_scenario_lists(name: str, key: str) -> None:
    assert tx.map_scenario(name) == key


def test_scenario_other_is_none() -> None:
    assert tx.map_scenario("其他") is None


def test_success_and_signal_and_difficulty() -> None:
    assert tx.map_success_dimension("实用性/操作指导") == "practical_guidance"
    assert tx.map_success_dimension("共情支持") == "empathetic_support"
    assert tx.map_success_dimension("Accurate Answering") == "accurate_answer"
    assert tx.map_signal_type("repeat") == "repeat_query"
    assert tx.map_signal_type("no_followup") == "conversation_end"
    assert tx.map_signal_type("点踩") == "dislike"
    assert tx.map_difficulty("very hard") == "very_hard"
    assert tx.map_difficulty("") is None
    assert tx.map_difficulty(None) is None
    assert tx.map_recovery_strategy("道歉") == "apology"
    assert tx.get_entry("scenarios", "entertainment") is not None
    assert tx.get_entry("scenarios", "nope") is None


@given(st.one_of(st.text(), st.none(), st.integers(), st.floats(), st.lists(st.text())))
def test_mapping_never_raises(value: object) -> None:
    for kind in ("failure_dimensions", "success_dimensions", "scenarios", "signal_types"):
        result = tx.map_name(kind, value)  # type: ignore[arg-type]
        assert result is None or tx.get_entry(kind, result) is not None  # type: ignore[arg-type]
