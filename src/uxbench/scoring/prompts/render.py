"""Turn what a judge reads (`JudgeInput`) into chat messages: conversation rendering, truncation, language choice."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from uxbench.data.schema import Message
from uxbench.scoring.prompts.files import fill
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import PromptOptions
from uxbench.scoring.prompts.templates_io import FewShotExample, Lang, load_template, pick_examples

if TYPE_CHECKING:
    from uxbench.scoring.rubric import Rubric

ROLE_LABELS: dict[Lang, dict[str, str]] = {
    "zh": {"user": "用户", "assistant": "助手", "system": "系统"},
    "en": {"user": "User", "assistant": "Assistant", "system": "System"},
}
EMPTY_HISTORY: dict[Lang, str] = {"zh": "（无）", "en": "(none)"}
EMPTY_MESSAGE: dict[Lang, str] = {"zh": "（空）", "en": "(empty)"}
PROFILE_PREVIEW: dict[Lang, str] = {
    "zh": "（此处是第一步推测出的用户画像）",
    "en": "(the user profile inferred in step 1 goes here)",
}
VERDICT_WORDS: dict[Lang, dict[str, str]] = {
    "zh": {"good": "好", "bad": "差", "neutral": "中"},
    "en": {"good": "good", "bad": "bad", "neutral": "neutral"},
}
_CJK_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")


def detect_lang(texts: Sequence[str]) -> Lang:
    """zh when the text has Han characters and they are at least as many as its Latin words (one character
    carries about as much as one word); everything else is en, the template a model reads best in any other
    script: Russian, Thai or empty text has no Han character, so it never gets the Chinese template."""
    joined = "\n".join(texts)
    han = len(_CJK_RE.findall(joined))
    return "zh" if han > 0 and han >= len(_LATIN_WORD_RE.findall(joined)) else "en"


def resolve_lang(item: JudgeInput, option: str) -> Lang:
    """The prompt language for one item: the option, else the item's own, else detected."""
    if option in ("zh", "en"):
        return option  # type: ignore[return-value]  # narrowed by the membership test
    if item.lang is not None:
        return item.lang
    return detect_lang([item.query, item.response, *(m.content for m in item.history)])


def truncate(text: str, max_chars: int, lang: Lang) -> str:
    """Cut to `max_chars` characters with a marker saying how long the original was."""
    if len(text) <= max_chars:
        return text
    if lang == "zh":
        return f"{text[:max_chars]}……〔已截断：原文共 {len(text)} 字〕"
    return f"{text[:max_chars]} …[truncated: {len(text)} characters in all]"


def _body(text: str, max_chars: int, lang: Lang) -> str:
    text = text.strip()
    return truncate(text, max_chars, lang) if text else EMPTY_MESSAGE[lang]


def render_history(history: Sequence[Message], lang: Lang, max_chars: int) -> str:
    """Numbered lines `1. 用户：…` / `1. User: …`, continuations indented; `（无）` / `(none)` if empty."""
    if not history:
        return EMPTY_HISTORY[lang]
    colon = "：" if lang == "zh" else ": "
    out = []
    for number, message in enumerate(history, start=1):
        body = _body(message.content, max_chars, lang).replace("\n", "\n   ")
        out.append(f"{number}. {ROLE_LABELS[lang][message.role]}{colon}{body}")
    return "\n".join(out)


def render_conversation(
    history: Sequence[Message], query: str, response: str, options: PromptOptions, lang: Lang
) -> str:
    values = {
        "history": render_history(history, lang, options.max_chars),
        "query": _body(query, options.max_chars, lang),
        "response": _body(response, options.max_chars, lang),
    }
    template = load_template(options.formulation, options.strategy, lang, "conversation")
    return fill(template, values, f"Judge template '{lang}/conversation'").strip()


def example_answer(label: str, options: PromptOptions, lang: Lang) -> str:
    """The answer a worked example shows: the verdict word, or for likert the middle of its side of the
    threshold (liked: ceil((threshold + N) / 2), disliked: max(1, threshold // 2))."""
    if options.formulation == "likert":
        scale, threshold = options.likert_scale, options.threshold
        return str(-(-(threshold + scale) // 2) if label == "good" else max(1, threshold // 2))
    return VERDICT_WORDS[lang][label]


def render_examples(examples: Sequence[FewShotExample], options: PromptOptions, lang: Lang) -> str:
    template = load_template(options.formulation, options.strategy, lang, "example")
    blocks = []
    for number, example in enumerate(examples, start=1):
        conversation = render_conversation(example.history, example.query, example.response, options, lang)
        values = {
            "n": str(number),
            "conversation": conversation,
            "answer": example_answer(example.label, options, lang),
        }
        blocks.append(fill(template, values, f"Judge template '{lang}/example'").strip())
    return "\n\n".join(blocks)


def build_messages(
    item: JudgeInput, options: PromptOptions, *, profile: str | None = None, lang: Lang | None = None,
    rubric: Rubric | None = None,
) -> list[Message]:
    """The judging call's messages (system + user).

    For user_modeling, `profile` is the first call's answer; without it a visible placeholder stands in,
    which is what a prompt preview shows.
    """
    lang = lang or resolve_lang(item, options.lang)
    f, s = options.formulation, options.strategy
    values = {
        "conversation": render_conversation(item.history, item.query, item.response, options, lang),
        "scale": str(options.likert_scale),
    }
    if f == "rubric":
        values.update(rubric_values(options, lang, rubric))
    if s == "few_shot":
        values["examples"] = render_examples(pick_examples(lang, options.few_shot_k), options, lang)
    if s == "user_modeling":
        text = (profile or "").strip()
        values["profile"] = (
            truncate(text, options.max_chars, lang)
            if text
            else (EMPTY_HISTORY[lang] if profile is not None else PROFILE_PREVIEW[lang])
        )
    system = fill(load_template(f, s, lang, "system"), {}, f"Judge template '{lang}/system'")
    user = fill(load_template(f, s, lang, "instruction"), values, f"Judge template '{lang}/{f}.{s}'")
    # Two plain strings in known roles (a judged sample builds these every time): the validating constructor is
    # the cheap one, ~2 us in pydantic-core against ~7 us for model_construct.
    return [Message(role="system", content=system.strip()), Message(role="user", content=user.strip())]


def rubric_values(options: PromptOptions, lang: Lang, rubric: Rubric | None = None) -> dict[str, str]:
    """The rubric formulation's placeholders: the rubric's title, its dimensions and the answer's JSON shape
    (`rubric`, when given, instead of the one `options` names: a persona's own)."""
    from uxbench.scoring.rubric import answer_skeleton, load_rubric, render_dimensions

    rubric = rubric or load_rubric(options.rubric or "")
    return {"rubric_title": rubric.title.get(lang), "dimensions": render_dimensions(rubric, lang),
            "answer_format": answer_skeleton(rubric)}


def build_profile_messages(
    item: JudgeInput, options: PromptOptions, *, lang: Lang | None = None
) -> list[Message]:
    """user_modeling step 1: infer the user from the conversation, without showing the judged reply."""
    lang = lang or resolve_lang(item, options.lang)
    values = {
        "history": render_history(item.history, lang, options.max_chars),
        "query": _body(item.query, options.max_chars, lang),
    }
    template = load_template(options.formulation, options.strategy, lang, "profile")
    return [Message(role="user", content=fill(template, values, f"Judge template '{lang}/profile'").strip())]
