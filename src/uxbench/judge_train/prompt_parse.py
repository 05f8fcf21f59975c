"""Read a rendered judge prompt back into what the judge reads (history, query, reply).

The lite judge is called like any chat model (by `uxbench run`, the GRM scorer, or through `uxbench judge
serve`), so it receives the project's binary zero-shot judge prompt (`scoring/prompts/templates`), not the
case. The template's fixed text around `$history`, `$query` and `$response` marks where each part is;
numbered history lines (`1. 用户：...`, continuation lines indented by three spaces) become messages again.
Training renders every row with the same templates and reads it back with this parser, so the features a
trained model sees at training and at scoring time are computed from the same text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from uxbench.data.schema import Message
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import PromptOptions
from uxbench.scoring.prompts.render import (
    EMPTY_HISTORY,
    EMPTY_MESSAGE,
    ROLE_LABELS,
    VERDICT_WORDS,
    build_messages,
)
from uxbench.scoring.prompts.templates_io import LANGS, Lang, load_template

PROMPT = PromptOptions(formulation="binary", strategy="zero_shot")


@cache
def _pattern(lang: Lang) -> re.Pattern[str]:
    conversation = load_template("binary", "zero_shot", lang, "conversation").template.strip()
    instruction = load_template("binary", "zero_shot", lang, "instruction").template.strip()
    text = instruction.replace("$conversation", conversation)
    pieces = re.split(r"(\$history|\$query|\$response)", text)
    regex = ""
    for piece in pieces:
        if piece.startswith("$"):
            regex += f"(?P<{piece[1:]}>.*?)" if piece != "$response" else "(?P<response>.*)"
        else:
            regex += re.escape(piece)
    return re.compile(regex, re.DOTALL)


def _roles(lang: Lang) -> re.Pattern[str]:
    colon = "：" if lang == "zh" else ": "
    names = "|".join(re.escape(v) for v in ROLE_LABELS[lang].values())
    return re.compile(rf"^(\d+)\. ({names}){re.escape(colon)}")


def _body(text: str, lang: Lang) -> str:
    return "" if text == EMPTY_MESSAGE[lang] else text


def parse_history(text: str, lang: Lang) -> list[Message]:
    if text.strip() == EMPTY_HISTORY[lang]:
        return []
    by_label = {v: k for k, v in ROLE_LABELS[lang].items()}
    head = _roles(lang)
    messages: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        found = head.match(line)
        if found:
            messages.append((by_label[found.group(2)], [line[found.end() :]]))
        elif messages:
            messages[-1][1].append(line[3:] if line.startswith("   ") else line)
    return [Message(role=role, content=_body("\n".join(lines), lang)) for role, lines in messages]  # type: ignore[arg-type]


def parse_judge_prompt(messages: Sequence[Message]) -> tuple[JudgeInput, Lang] | None:
    """The judge input and template language of a binary zero-shot judge prompt; None when it is not one."""
    user = next((m.content for m in reversed(messages) if m.role == "user"), None)
    if user is None:
        return None
    for lang in LANGS:
        found = _pattern(lang).fullmatch(user.strip())
        if found:
            item = JudgeInput(history=parse_history(found.group("history"), lang),
                              query=_body(found.group("query"), lang),
                              response=_body(found.group("response"), lang), lang=lang)
            return item, lang
    return None


def as_scored(item: JudgeInput) -> tuple[JudgeInput, Lang]:
    """`item` as a judge called through the template reads it (rendered, then parsed back)."""
    parsed = parse_judge_prompt(build_messages(item, PROMPT))
    if parsed is None:  # the templates always parse; a broken template is a bug worth stopping at
        raise AssertionError("a rendered binary zero-shot judge prompt did not parse back")
    return parsed


def verdict_words(lang: Lang) -> tuple[str, str]:
    words = VERDICT_WORDS[lang]
    return words["good"], words["bad"]
