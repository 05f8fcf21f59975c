"""The judge's prompt template files: lookup, loading, hashing, and the bundled few-shot examples.

Templates live in `templates/<lang>/` next to this module (see templates/README.md). They are read once
and cached; a template's identity is the sha256 of its bytes.
"""

from __future__ import annotations

import json
from functools import cache
from string import Template
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from uxbench.data.schema import Message
from uxbench.errors import ConfigError
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.scoring.prompts.options import FORMULATIONS, STRATEGIES, Formulation, Strategy

Lang = Literal["zh", "en"]
Part = Literal["system", "conversation", "instruction", "example", "profile"]
LANGS: tuple[Lang, ...] = ("zh", "en")
PARTS: tuple[Part, ...] = ("system", "conversation", "instruction", "example", "profile")


class FewShotExample(BaseModel):
    """One worked example of the few_shot strategy (written for uxbench, not taken from evaluation data)."""

    id: str
    label: Literal["good", "bad"]
    history: list[Message] = Field(default_factory=list)
    query: str
    response: str
    why: str = ""
    """Why the user liked or disliked it; documentation only, never shown to the judge."""


def template_name(formulation: str, strategy: str, lang: str, part: str) -> str:
    """Path of a template under templates/, e.g. `zh/binary.cot.txt` or `en/system.txt`."""
    if formulation not in FORMULATIONS:
        raise ConfigError(
            f"Unknown judge formulation '{formulation}'; choose one of {', '.join(FORMULATIONS)}"
        )
    if strategy not in STRATEGIES:
        raise ConfigError(f"Unknown judge strategy '{strategy}'; choose one of {', '.join(STRATEGIES)}")
    if lang not in LANGS:
        raise ConfigError(f"Unknown template language '{lang}'; choose zh or en")
    if part not in PARTS:
        raise ConfigError(f"Unknown template part '{part}'; choose one of {', '.join(PARTS)}")
    if part == "instruction":
        return f"{lang}/{formulation}.{strategy}.txt"
    return f"{lang}/{part}.txt"


JUDGE_TEMPLATES = PackageTemplates("uxbench.scoring.prompts", "Judge")


def read_template_file(name: str) -> bytes:
    """Raw bytes of a file under templates/ (cached)."""
    return JUDGE_TEMPLATES.read(name)


@cache
def load_template(formulation: Formulation, strategy: Strategy, lang: Lang, part: Part) -> Template:
    """The `string.Template` for one part of a prompt (built once: every judged case renders three)."""
    return Template(read_template_file(template_name(formulation, strategy, lang, part)).decode("utf-8"))


def parts_used(strategy: Strategy) -> tuple[Part, ...]:
    """Template parts a strategy's prompts are built from."""
    base: tuple[Part, ...] = ("system", "conversation", "instruction")
    if strategy == "few_shot":
        return (*base, "example")
    if strategy == "user_modeling":
        return (*base, "profile")
    return base


def examples_file(lang: Lang) -> str:
    return f"examples/{lang}.jsonl"


def template_files(formulation: Formulation, strategy: Strategy, lang: Lang) -> list[str]:
    """Every file under templates/ that a prompt in this setting is built from."""
    names = [template_name(formulation, strategy, lang, part) for part in parts_used(strategy)]
    if strategy == "few_shot":
        names.append(examples_file(lang))
    return names


def template_hashes(
    formulation: Formulation, strategy: Strategy, langs: tuple[Lang, ...] = LANGS
) -> dict[str, str]:
    """sha256 (hex) of every template file used, by file name."""
    return JUDGE_TEMPLATES.hashes(name for lang in langs for name in template_files(formulation, strategy, lang))


@cache
def load_examples(lang: Lang) -> tuple[FewShotExample, ...]:
    """The bundled worked examples of one language, in file order."""
    name = examples_file(lang)
    out = []
    for number, line in enumerate(read_template_file(name).decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(FewShotExample.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as err:
            raise ConfigError(f"Bundled few-shot file {name}, line {number} is invalid: {err}") from None
    return tuple(out)


def pick_examples(lang: Lang, k: int) -> list[FewShotExample]:
    """k examples alternating liked and disliked (liked first), so k = 2 gives one of each."""
    pool = load_examples(lang)
    goods = [e for e in pool if e.label == "good"]
    bads = [e for e in pool if e.label == "bad"]
    interleaved = [e for pair in zip(goods, bads, strict=False) for e in pair]
    longer = goods if len(goods) > len(bads) else bads
    interleaved += longer[min(len(goods), len(bads)) :]
    if k > len(interleaved):
        raise ConfigError(f"few_shot_k = {k}, but only {len(interleaved)} {lang} examples are bundled")
    return interleaved[:k]
