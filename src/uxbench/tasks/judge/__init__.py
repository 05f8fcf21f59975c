"""Task 1, UX Judge: predict whether the real user liked an assistant reply."""

from uxbench.tasks.judge.options import (
    FORMULATIONS,
    STRATEGIES,
    Formulation,
    JudgeOptions,
    Strategy,
    default_likert_threshold,
)
from uxbench.tasks.judge.registry import (
    FewShotExample,
    load_examples,
    load_template,
    pick_examples,
    template_files,
    template_hashes,
)
from uxbench.tasks.judge.render import build_messages, build_profile_messages, detect_lang, resolve_lang
from uxbench.tasks.judge.task import JudgeTask, case_strata

__all__ = [
    "FORMULATIONS",
    "STRATEGIES",
    "FewShotExample",
    "Formulation",
    "JudgeOptions",
    "JudgeTask",
    "Strategy",
    "build_messages",
    "build_profile_messages",
    "case_strata",
    "default_likert_threshold",
    "detect_lang",
    "load_examples",
    "load_template",
    "pick_examples",
    "resolve_lang",
    "template_files",
    "template_hashes",
]
