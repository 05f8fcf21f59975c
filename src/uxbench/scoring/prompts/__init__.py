"""The project's judge prompts: options, template files, rendering of a `JudgeInput` into chat messages."""

from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import (
    FORMULATIONS,
    STRATEGIES,
    Formulation,
    JudgeLang,
    PromptOptions,
    Strategy,
    default_likert_threshold,
)
from uxbench.scoring.prompts.render import (
    VERDICT_WORDS,
    build_messages,
    build_profile_messages,
    detect_lang,
    resolve_lang,
)
from uxbench.scoring.prompts.templates_io import (
    LANGS,
    FewShotExample,
    Lang,
    load_examples,
    load_template,
    pick_examples,
    template_files,
    template_hashes,
)

__all__ = [
    "FORMULATIONS",
    "LANGS",
    "STRATEGIES",
    "VERDICT_WORDS",
    "FewShotExample",
    "Formulation",
    "JudgeInput",
    "JudgeLang",
    "Lang",
    "PromptOptions",
    "Strategy",
    "build_messages",
    "build_profile_messages",
    "default_likert_threshold",
    "detect_lang",
    "load_examples",
    "load_template",
    "pick_examples",
    "resolve_lang",
    "template_files",
    "template_hashes",
]
