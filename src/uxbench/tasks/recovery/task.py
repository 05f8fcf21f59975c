"""Task 3, UX Recovery: history up to the failure, the failed reply, the user's complaint -> the recovery.

Layouts and strategies are documented in templates/README.md; the manifest records which were used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from uxbench.data.schema import AnyCase, Message, RecoveryCase, TaskName
from uxbench.data.taxonomy import get_entry
from uxbench.errors import ConfigError
from uxbench.models.api import ModelOutput
from uxbench.runs.records import SampleRecord, Stratum
from uxbench.scoring._text import strip_reasoning
from uxbench.scoring.prompts.files import PackageTemplates
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.render import render_history
from uxbench.scoring.prompts.templates_io import LANGS, Lang
from uxbench.scoring.strategies_llm import is_strategy_key
from uxbench.tasks.base import ScoreLookup, SummaryOptions
from uxbench.tasks.fit import identity_options
from uxbench.tasks.generative import GenerationOptions, GenerativeTask, chat
from uxbench.tasks.recovery.strategy_summary import ReplyTap, rule_label, strategy_summary
from uxbench.tasks.registry import register_task

if TYPE_CHECKING:
    from uxbench.models.model import Model

Layout = Literal["multi_message", "coach"]
RecoveryStrategy = Literal["plain", "cot", "dimension_aware", "critique"]
TEMPLATES = PackageTemplates("uxbench.tasks.recovery", "Recovery")
_STRATEGY_FILES: dict[str, tuple[str, ...]] = {
    "plain": (),
    "cot": ("cot",),
    "dimension_aware": ("dimension_aware",),
    "critique": ("critique", "after_critique"),
}
_ANALYSIS_RE = re.compile(r"<analysis>.*?</analysis>", re.S | re.I)
_UNKNOWN_DIMENSION = {"zh": "未知", "en": "unknown"}
_HISTORY_CHARS = 4000


class RecoveryOptions(GenerationOptions):
    """Task 3 settings."""

    layout: Layout = "multi_message"
    """multi_message (chat turns; the method's runner) or coach (one user message showing the conversation)."""
    strategy: RecoveryStrategy = "plain"
    """plain, cot (analysis first, then the reply), dimension_aware (names the failure dimension) or critique
    (a first call critiques the failed reply; the second writes the recovery from that critique)."""


def recovery_strata(case: RecoveryCase) -> dict[str, Stratum]:
    labels = case.labels
    return {
        "scenario": labels.scenario_key or labels.scenario,
        "dimension": labels.failure_dimension_key or labels.failure_dimension,
        "difficulty": labels.difficulty,
        "history_messages": len(case.history),
    }


@register_task("recovery", "Task 3, UX Recovery", RecoveryOptions)
class RecoveryTask(GenerativeTask):
    """Generates the recovery reply; the judge step scores it (Recovery Rate)."""

    name: ClassVar[TaskName] = "recovery"
    rate_name: ClassVar[str] = "recovery_rate"

    def __init__(self, options: RecoveryOptions | None = None) -> None:
        self.options = options or RecoveryOptions()
        super().__init__(self.options)
        o = self.options
        files = list(_STRATEGY_FILES[o.strategy]) + (["coach"] if o.layout == "coach" else [])
        langs = LANGS if o.lang == "auto" else (o.lang,)
        self._hashes = TEMPLATES.hashes(f"{lang}/{name}.txt" for lang in langs for name in files)

    def config(self) -> dict[str, Any]:
        return {"task": self.name, **identity_options(self.options)}

    def template_hashes(self) -> dict[str, str]:
        return dict(self._hashes)

    def strata(self, case: AnyCase) -> dict[str, Stratum]:
        return recovery_strata(_recovery_case(case))

    def _lang(self, case: RecoveryCase) -> Lang:
        return self.lang_of(case, case.complaint, case.failed_response)

    def guidance(self, case: RecoveryCase, lang: Lang, critique: str | None = None) -> str | None:
        """The strategy's instruction (None for plain)."""
        strategy = self.options.strategy
        if strategy == "cot":
            return TEMPLATES.text(f"{lang}/cot.txt")
        if strategy == "dimension_aware":
            return TEMPLATES.text(f"{lang}/dimension_aware.txt", _dimension_values(case, lang))
        if strategy == "critique":
            return TEMPLATES.text(f"{lang}/after_critique.txt", {"critique": (critique or "").strip()})
        return None

    def _shown(self, case: RecoveryCase, lang: Lang) -> dict[str, str]:
        return {
            "history": render_history(case.history, lang, _HISTORY_CHARS),
            "failed": case.failed_response.strip(),
            "complaint": case.complaint.strip(),
        }

    def messages(self, case: RecoveryCase, critique: str | None = None) -> list[Message]:
        """The recovery call's messages in the chosen layout."""
        lang = self._lang(case)
        guidance = self.guidance(case, lang, critique)
        if self.options.layout == "coach":
            values = {**self._shown(case, lang), "guidance": guidance or ""}
            return [Message(role="user", content=TEMPLATES.text(f"{lang}/coach.txt", values))]
        return chat(
            case.history,
            Message(role="assistant", content=case.failed_response),
            Message(role="user", content=case.complaint),
            system=guidance,
        )

    def critique_messages(self, case: RecoveryCase) -> list[Message]:
        lang = self._lang(case)
        return [Message(role="user", content=TEMPLATES.text(f"{lang}/critique.txt", self._shown(case, lang)))]

    async def generate(self, case: AnyCase, model: Model) -> tuple[list[ModelOutput], dict[str, Any]]:
        rc = _recovery_case(case)
        outputs: list[ModelOutput] = []
        extra: dict[str, Any] = {}
        critique: str | None = None
        if self.options.strategy == "critique":
            first = await model.generate(self.critique_messages(rc), self.generate_config())
            outputs.append(first)
            critique = strip_reasoning(first.text).strip()
            extra["critique"] = critique
        if self.options.strategy == "dimension_aware" and not _has_dimension(rc):
            extra["dimension_unknown"] = True
        outputs.append(await model.generate(self.messages(rc, critique), self.generate_config()))
        return outputs, extra

    def reply_text(self, output: ModelOutput, extra: dict[str, Any]) -> str:
        text = strip_reasoning(output.text)
        if self.options.strategy == "cot":
            match = _ANALYSIS_RE.search(text)
            if match:
                extra["analysis"] = match.group(0)
                text = text[match.end():]
            else:
                extra["analysis_missing"] = True
        text = text.strip()
        if text:  # the recovery strategy its opening shows, by the rules (finding 6; see strategy_summary)
            extra.update(rule_label(text))
        return text

    def summarize(
        self, records: Iterable[SampleRecord], *, scores: ScoreLookup | None = None,
        options: SummaryOptions | None = None,
    ) -> dict[str, Any]:
        """The generic summary over the judges, plus `recovery_strategies` (rules and strategy models)."""
        judges = {k: v for k, v in (scores or {}).items() if not is_strategy_key(k)}
        classifiers = {k: v for k, v in (scores or {}).items() if is_strategy_key(k)}
        tap = ReplyTap(records)
        summary = super().summarize(tap, scores=judges, options=options)
        summary["recovery_strategies"] = strategy_summary(tap, judges, classifiers)
        return summary

    def judge_input(self, case: AnyCase, record: SampleRecord) -> JudgeInput:
        """The judge sees the conversation with the failed reply as the last assistant turn, the complaint as
        the user's message, and the recovery as the reply."""
        rc = _recovery_case(case)
        history = [*rc.history, Message(role="assistant", content=rc.failed_response)]
        return JudgeInput(history=history, query=rc.complaint, response=record.raw_output or "", lang=rc.lang)


def _has_dimension(case: RecoveryCase) -> bool:
    return bool(case.labels.failure_dimension_key or case.labels.failure_dimension)


def _dimension_values(case: RecoveryCase, lang: Lang) -> dict[str, str]:
    labels = case.labels
    entry = get_entry("failure_dimensions", labels.failure_dimension_key) if labels.failure_dimension_key else None
    if entry is not None:
        name = entry.zh if lang == "zh" else entry.en
        return {"dimension": name, "description": entry.description if lang == "en" else ""}
    return {"dimension": labels.failure_dimension or _UNKNOWN_DIMENSION[lang], "description": ""}


def _recovery_case(case: AnyCase) -> RecoveryCase:
    if not isinstance(case, RecoveryCase):
        raise ConfigError(f"The recovery task needs recovery cases; case '{case.id}' is a {case.task} case")
    return case
