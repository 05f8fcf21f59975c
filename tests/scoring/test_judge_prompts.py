"""Prompt building for the UX Judge: every formulation x strategy x language, templates and their hashes."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import pytest
from pydantic import ValidationError

import uxbench.scoring.prompts as prompts_pkg
from uxbench.data.schema import JudgeCase, Message
from uxbench.errors import ConfigError
from uxbench.scoring.prompts import (
    FORMULATIONS,
    STRATEGIES,
    build_messages,
    build_profile_messages,
    default_likert_threshold,
    load_examples,
    load_template,
    pick_examples,
    template_files,
    template_hashes,
)
from uxbench.scoring.prompts.render import detect_lang, example_answer, resolve_lang
from uxbench.tasks.judge import JudgeOptions, JudgeTask
from uxbench.tasks.registry import create_task

TEMPLATE_DIR = Path(prompts_pkg.__file__).parent / "templates"


def zh_case(**kw: object) -> JudgeCase:
    fields: dict[str, object] = {
        "id": "zh-1",
        "history": [
            Message(role="user", content="帮我查一下明天北京的天气\n最好带上穿衣建议"),
            Message(role="assistant", content="明天北京晴，最高 12 度。"),
        ],
        "query": "那后天呢？",
        "response": "后天多云转小雨，记得带伞。",
        "label": "bad",
    }
    fields.update(kw)
    return JudgeCase.model_validate(fields)


def en_case(**kw: object) -> JudgeCase:
    fields: dict[str, object] = {
        "id": "en-1",
        "history": [],
        "query": "What is a good name for a grey cat?",
        "response": "How about Ash, Smokey or Pebble?",
        "label": "good",
    }
    fields.update(kw)
    return JudgeCase.model_validate(fields)


COMBOS = [c for c in itertools.product(FORMULATIONS, STRATEGIES, ("zh", "en")) if c[:2] != ("rubric", "few_shot")]


@pytest.mark.parametrize(("formulation", "strategy", "lang"), COMBOS)
def test_every_prompt_is_complete(formulation: str, strategy: str, lang: str) -> None:
    options = JudgeOptions(formulation=formulation, strategy=strategy, lang=lang)
    case = zh_case() if lang == "zh" else en_case()
    profile = "用户是上班族，想要简短的答复。" if strategy == "user_modeling" else None
    messages = build_messages(case, options, profile=profile)
    assert [m.role for m in messages] == ["system", "user"]
    for m in messages:
        assert "$" not in m.content, m.content
        assert m.content == m.content.strip() and m.content
    user = messages[1].content
    assert case.query in user and case.response in user
    if lang == "zh":
        assert (
            "用户：帮我查一下明天北京的天气\n   最好带上穿衣建议" in user
        )  # numbered, continuation indented
        assert "2. 助手：明天北京晴" in user
    else:
        assert "(none)" in user  # empty history is explicit
    if formulation == "likert":
        assert str(options.likert_scale) in user
    if strategy == "user_modeling":
        assert profile in user
    if formulation == "rubric":
        assert '{"overall": <1-10>}' in user  # the default rubric, mt_bench, and its answer's shape
    elif strategy == "cot":
        assert ("结论：" if lang == "zh" else "Verdict:") in user
    if strategy == "few_shot":
        assert user.count("=====") >= 2 * (options.few_shot_k + 1)


@pytest.mark.parametrize(("formulation", "lang"), list(itertools.product(FORMULATIONS, ("zh", "en"))))
def test_profile_prompt_hides_the_reply(formulation: str, lang: str) -> None:
    options = JudgeOptions(formulation=formulation, strategy="user_modeling", lang=lang)
    case = zh_case() if lang == "zh" else en_case()
    (message,) = build_profile_messages(case, options)
    assert message.role == "user" and "$" not in message.content
    assert case.query in message.content
    assert case.response not in message.content


def test_user_modeling_preview_shows_a_placeholder_and_empty_profile_is_explicit() -> None:
    options = JudgeOptions(strategy="user_modeling", lang="en")
    assert "inferred in step 1" in build_messages(en_case(), options)[1].content
    assert "(none)" in build_messages(en_case(), options, profile="  ")[1].content


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_few_shot_uses_k_examples_of_the_same_language(lang: str, k: int) -> None:
    options = JudgeOptions(strategy="few_shot", lang=lang, few_shot_k=k)
    user = build_messages(zh_case() if lang == "zh" else en_case(), options)[1].content
    mine, other = load_examples(lang), load_examples("en" if lang == "zh" else "zh")
    chosen = pick_examples(lang, k)
    assert len(chosen) == k
    for example in mine:
        assert (example.query in user) == (example in chosen)
    assert not any(example.query in user for example in other)
    assert [e.label for e in chosen] == ["good", "bad", "good", "bad"][:k]  # alternating, liked first


def test_few_shot_k_beyond_the_bundle_fails_early() -> None:
    with pytest.raises(ConfigError, match="few_shot_k"):
        JudgeTask(JudgeOptions(strategy="few_shot", few_shot_k=5))


def test_bundled_examples_are_balanced_and_not_evaluation_data() -> None:
    for lang in ("zh", "en"):
        examples = load_examples(lang)
        assert sorted(e.label for e in examples) == ["bad", "bad", "good", "good"]
        assert all(e.id.startswith(lang) for e in examples)


def test_truncation_marker_and_cap() -> None:
    long = "很长的回复。" * 200
    options = JudgeOptions(lang="zh", max_chars=300)
    user = build_messages(zh_case(response=long), options)[1].content
    assert "〔已截断：原文共 1200 字〕" in user
    assert long not in user and long[:300] in user
    en_user = build_messages(en_case(response="x" * 500), JudgeOptions(lang="en", max_chars=200))[1].content
    assert "[truncated: 500 characters in all]" in en_user


def test_case_text_with_dollars_is_kept_verbatim() -> None:
    tricky = "Price is $5, see $history and $$ and ${query}"
    user = build_messages(en_case(query=tricky), JudgeOptions(lang="en"))[1].content
    assert tricky in user


def test_language_choice() -> None:
    assert resolve_lang(zh_case(), "auto") == "zh"
    assert resolve_lang(en_case(), "auto") == "en"
    assert resolve_lang(en_case(lang="zh"), "auto") == "zh"  # the case's own language wins over detection
    assert resolve_lang(zh_case(), "en") == "en"  # an explicit option wins over both
    mixed = en_case(query="请解释一下 Python 的 GIL 是什么", response="GIL 是全局解释器锁。")
    assert resolve_lang(mixed, "auto") == "zh"
    system = build_messages(en_case(), JudgeOptions())[0].content
    assert system.startswith("You are")


def test_only_text_with_han_characters_gets_the_chinese_template() -> None:
    # was: no Han character and no Latin word (0 >= 0) went to zh
    russian = en_case(query="Почему мой код не работает?", response="Проверьте отступы в строке 3.")
    thai = en_case(query="ช่วยแปลประโยคนี้หน่อย", response="ได้เลยครับ")
    assert resolve_lang(russian, "auto") == "en" and resolve_lang(thai, "auto") == "en"
    assert detect_lang([]) == "en" and detect_lang(["", "123 !?"]) == "en"
    assert detect_lang(["Почему 为什么"]) == "zh"  # a Han character and no Latin word
    assert detect_lang(["ok 好"]) == "zh" and detect_lang(["ok ok 好"]) == "en"
    system = build_messages(en_case(), JudgeOptions())[0].content
    assert system.startswith("You are")


def test_template_hashes_are_stable_and_match_the_files() -> None:
    first = template_hashes("binary", "few_shot")
    assert first == template_hashes("binary", "few_shot")
    assert set(first) == {
        *template_files("binary", "few_shot", "zh"),
        *template_files("binary", "few_shot", "en"),
    }
    assert "examples/zh.jsonl" in first
    for name, digest in first.items():
        assert hashlib.sha256((TEMPLATE_DIR / name).read_bytes()).hexdigest() == digest
    zh_only = JudgeTask(JudgeOptions(lang="zh", strategy="user_modeling")).template_hashes()
    assert set(zh_only) == {
        "zh/system.txt",
        "zh/conversation.txt",
        "zh/binary.user_modeling.txt",
        "zh/profile.txt",
    }
    assert template_hashes("likert", "cot") != template_hashes("binary", "cot")


def test_every_template_file_is_used_and_parses() -> None:
    used = {name for f, s in itertools.product(FORMULATIONS, STRATEGIES) if (f, s) != ("rubric", "few_shot")
            for name in template_hashes(f, s)}
    on_disk = {
        str(p.relative_to(TEMPLATE_DIR)) for p in TEMPLATE_DIR.rglob("*") if p.suffix in (".txt", ".jsonl")
    }
    assert used == on_disk
    assert len(on_disk) == 2 * (12 + 3 + 4) + 2


def test_unknown_template_names_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="formulation"):
        load_template("pairwise", "zero_shot", "zh", "system")
    with pytest.raises(ConfigError, match="language"):
        load_template("binary", "zero_shot", "fr", "system")


@pytest.mark.parametrize(("scale", "threshold"), [(4, 3), (5, 4), (6, 4), (7, 5)])
def test_default_likert_threshold_puts_the_midpoint_on_the_bad_side(scale: int, threshold: int) -> None:
    assert default_likert_threshold(scale) == threshold
    assert JudgeOptions(formulation="likert", likert_scale=scale).threshold == threshold


@pytest.mark.parametrize("scale", [4, 5, 6, 7])
def test_likert_example_answers_agree_with_the_threshold(scale: int) -> None:
    for threshold in range(2, scale + 1):
        options = JudgeOptions(formulation="likert", likert_scale=scale, likert_threshold=threshold)
        good, bad = int(example_answer("good", options, "zh")), int(example_answer("bad", options, "zh"))
        assert threshold <= good <= scale and 1 <= bad < threshold


def test_option_validation() -> None:
    with pytest.raises(ValidationError):
        JudgeOptions(formulation="likert", likert_scale=5, likert_threshold=6)
    with pytest.raises(ConfigError, match="likert_threshold"):
        create_task("judge", {"likert_scale": 4, "likert_threshold": 1})
    with pytest.raises(ConfigError, match="strategy"):
        create_task("judge", {"strategy": "debate"})
    with pytest.raises(ConfigError, match="temprature"):
        create_task("judge", {"temprature": 0.5})  # typos are caught, not ignored
    task = create_task("judge", {"formulation": "likert", "likert_scale": 7})
    assert isinstance(task, JudgeTask) and task.options.threshold == 5
