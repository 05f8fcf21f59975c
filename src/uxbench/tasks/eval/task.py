"""Task 2, UX Eval: one reply per case from the history and the final user query.

Message layout (the method's runner): the history as chat messages, then the user's query; no system prompt
unless one is given (`system_prompt`: a preset name, or literal text; the CLI reads a file path into text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import field_validator

from uxbench.data.schema import AnyCase, EvalCase, Message, TaskName
from uxbench.errors import ConfigError
from uxbench.models.api import ModelOutput
from uxbench.runs.records import SampleRecord, Stratum
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.templates_io import LANGS
from uxbench.tasks.fit import identity_options
from uxbench.tasks.generative import GenerationOptions, GenerativeTask, chat
from uxbench.tasks.registry import register_task

if TYPE_CHECKING:
    from uxbench.models.model import Model

PRESETS = ("helpful", "ux", "empathetic")
"""Named system prompts (files under templates/<lang>/), for the paper's system-prompt ablation."""
TEMPLATES = PackageTemplates("uxbench.tasks.eval", "Eval")

__all__ = ["PRESETS", "EvalOptions", "EvalTask"]


class EvalOptions(GenerationOptions):
    """Task 2 settings."""

    system_prompt: str | None = None
    """None or `none`: no system prompt (the method's default). A preset (helpful, ux, empathetic) or literal
    text otherwise."""

    @field_validator("system_prompt")
    @classmethod
    def _none_word(cls, value: str | None) -> str | None:
        if value is not None and value.strip().lower() in ("", "none"):
            return None
        return value


def eval_strata(case: EvalCase) -> dict[str, Stratum]:
    labels = case.labels
    return {
        "scenario": labels.scenario_key or labels.scenario,
        "dimension": labels.failure_dimension_key or labels.failure_dimension,
        "difficulty": labels.difficulty,
        "history_messages": len(case.history),
    }


@register_task("eval", "Task 2, UX Eval", EvalOptions)
class EvalTask(GenerativeTask):
    """Generates one reply per case; the judge step scores it (Good%)."""

    name: ClassVar[TaskName] = "eval"
    rate_name: ClassVar[str] = "good_pct"

    def __init__(self, options: EvalOptions | None = None) -> None:
        self.options = options or EvalOptions()
        super().__init__(self.options)
        prompt = self.options.system_prompt
        self._preset = prompt if prompt in PRESETS else None
        langs = LANGS if self.options.lang == "auto" else (self.options.lang,)
        self._hashes = TEMPLATES.hashes(f"{lang}/{self._preset}.txt" for lang in langs) if self._preset else {}

    def config(self) -> dict[str, Any]:
        return {"task": self.name, **identity_options(self.options)}

    def template_hashes(self) -> dict[str, str]:
        return dict(self._hashes)

    def strata(self, case: AnyCase) -> dict[str, Stratum]:
        return eval_strata(_eval_case(case))

    def system_text(self, case: EvalCase) -> str | None:
        prompt = self.options.system_prompt
        if prompt is None:
            return None
        if self._preset is None:
            return prompt
        return TEMPLATES.text(f"{self.lang_of(case, case.query)}/{self._preset}.txt")

    def messages(self, case: EvalCase) -> list[Message]:
        return chat(case.history, Message(role="user", content=case.query), system=self.system_text(case))

    async def generate(self, case: AnyCase, model: Model) -> tuple[list[ModelOutput], dict[str, Any]]:
        ev = _eval_case(case)
        return [await model.generate(self.messages(ev), self.generate_config())], {}

    def judge_input(self, case: AnyCase, record: SampleRecord) -> JudgeInput:
        ev = _eval_case(case)
        return JudgeInput(history=ev.history, query=ev.query, response=record.raw_output or "", lang=ev.lang)


def _eval_case(case: AnyCase) -> EvalCase:
    if not isinstance(case, EvalCase):
        raise ConfigError(f"The eval task needs eval cases; case '{case.id}' is a {case.task} case")
    return case
