"""The full prompt a judge was sent for one sample, rebuilt from what the run recorded.

Runs keep the judge's raw answer, not its prompt (a prompt is the templates filled with the case: storing it for
every sample would double a run's size). It is rebuilt here from the same pieces and the same code that built it:
the case stored with the record, the task's settings and each judge's settings from the manifest, and what the
record says of the call (the template language, Task 1's history cut, the GRM protocol's shortening step, the
user_modeling profile). When the templates changed since the run (their hashes differ from the manifest's), the
prompt is today's templates filled with this sample, and the note says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from uxbench.data.schema import AnyCase, JudgeCase
from uxbench.errors import UxbenchError
from uxbench.runs.records import SampleRecord
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import PromptOptions
from uxbench.scoring.prompts.render import build_messages, build_profile_messages, resolve_lang

_CASE: TypeAdapter[AnyCase] = TypeAdapter(AnyCase)
_PROMPT_FIELDS = set(PromptOptions.model_fields)
CHANGED = ("The judge templates changed since this run (their hashes differ from the run's manifest): this is "
           "today's template filled with this sample, not necessarily the exact text the judge was sent.")


@dataclass
class PromptCall:
    """One call's messages, as (role, text)."""

    title: str
    messages: list[tuple[str, str]]


@dataclass
class JudgePrompt:
    calls: list[PromptCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the prompt could not be rebuilt (no stored case, an unknown judge mode ...)."""

    @property
    def n_messages(self) -> int:
        return sum(len(call.messages) for call in self.calls)

    @property
    def n_chars(self) -> int:
        return sum(len(text) for call in self.calls for _, text in call.messages)


def _messages(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def _changed(recorded: Any, now: dict[str, str]) -> bool:
    return isinstance(recorded, dict) and bool(recorded) and recorded != now


def task1_prompt(manifest: dict[str, Any], record: dict[str, Any], case: dict[str, Any]) -> JudgePrompt:
    """The prompt of Task 1's judge under test (the run's model) for one sample."""
    from uxbench.scoring.pointwise import PointwiseJudge
    from uxbench.scoring.rubric import Rubric

    config = dict(manifest.get("task_config") or {})
    try:
        shown = _CASE.validate_python(case)
        options = PromptOptions.model_validate({k: v for k, v in config.items() if k in _PROMPT_FIELDS})
        rubric = Rubric.model_validate(config["rubric_spec"]) if config.get("rubric_spec") else None
    except (ValidationError, KeyError, ValueError) as exc:
        return JudgePrompt(error=f"cannot rebuild the prompt from this run's settings and case: {exc}")
    if not isinstance(shown, JudgeCase):
        return JudgePrompt(error="the stored case is not a Task 1 case")
    extra = record.get("extra") or {}
    notes = []
    cut = extra.get("history_cut")
    if isinstance(cut, dict) and cut.get("kept_messages") is not None:
        keep = int(cut["kept_messages"])
        shown = shown.model_copy(update={"history": shown.history[len(shown.history) - keep:] if keep else []})
        notes.append(f"The conversation was too long for the model: its {cut.get('dropped_messages')} oldest "
                     f"history messages were dropped (--fit-history), as here.")
    item = JudgeInput.from_judge_case(shown)
    lang = extra.get("lang") or resolve_lang(item, options.lang)
    try:
        judge = PointwiseJudge(options, rubric=rubric)
        calls = []
        profile = None
        if options.strategy == "user_modeling":
            calls.append(PromptCall("call 1 of 2: the user profile",
                                    _messages(build_profile_messages(item, options, lang=lang))))
            profile = extra.get("profile") if isinstance(extra.get("profile"), str) else ""
        calls.append(PromptCall("the verdict call" if not calls else "call 2 of 2: the verdict",
                                _messages(build_messages(item, options, profile=profile, lang=lang, rubric=rubric))))
    except UxbenchError as exc:
        return JudgePrompt(error=f"cannot rebuild the prompt: {exc}")
    if _changed(manifest.get("template_hashes"), judge.template_hashes()):
        notes.append(CHANGED)
    return JudgePrompt(calls=calls, notes=notes)


def reply_judge_prompt(manifest: dict[str, Any], judge: dict[str, Any], record: dict[str, Any],
                       case: dict[str, Any], score: dict[str, Any]) -> JudgePrompt:
    """The prompt one judge of a Task 2/3 run was sent for one generated reply (`judge`: the manifest's or the
    summary's entry for it: spec, mode, settings, template hashes; `score`: its score record)."""
    from uxbench.scoring.pointwise import PointwiseJudge
    from uxbench.scoring.scorer import JudgeSettings
    from uxbench.scoring.shorten import SHORTEN_STEPS, shorten
    from uxbench.tasks.registry import create_task

    settings = dict(judge.get("settings") or {})
    config = {k: v for k, v in (manifest.get("task_config") or {}).items() if k != "task"}
    try:
        task = create_task(str(manifest.get("task")), config)
        item = task.judge_input(_CASE.validate_python(case), SampleRecord.model_validate(record))
        parsed = JudgeSettings.model_validate({k: v for k, v in settings.items() if k in JudgeSettings.model_fields})
    except (ValidationError, UxbenchError, NotImplementedError) as exc:
        return JudgePrompt(error=f"cannot rebuild the prompt from this run's settings and case: {exc}")
    extra = score.get("extra") or {}
    notes: list[str] = []
    if parsed.mode == "grm":
        options = PromptOptions(formulation="binary", strategy="zero_shot", lang=parsed.lang,
                                max_chars=int(settings.get("max_chars") or PromptOptions().max_chars))
        step = min(max(0, int(score.get("shorten_step") or 0)), len(SHORTEN_STEPS) - 1)
        if step:
            notes.append(f"The judge found the input too long: shortened at step {step} (oldest history and long "
                         "texts cut), as here.")
        item = shorten(item, step)
    else:
        options = PromptOptions(formulation="binary", strategy=parsed.strategy, lang=parsed.lang)
    lang = extra.get("lang") or resolve_lang(item, options.lang)
    writer = PointwiseJudge(options)
    calls = []
    profile = None
    try:
        if options.strategy == "user_modeling":
            calls.append(PromptCall("call 1 of 2: the user profile",
                                    _messages(build_profile_messages(item, options, lang=lang))))
            profile = extra.get("profile") if isinstance(extra.get("profile"), str) else ""
        calls.append(PromptCall("the verdict call" if not calls else "call 2 of 2: the verdict",
                                _messages(build_messages(item, options, profile=profile, lang=lang))))
    except UxbenchError as exc:
        return JudgePrompt(error=f"cannot rebuild the prompt: {exc}")
    if _changed(judge.get("template_hashes"), writer.template_hashes()):
        notes.append(CHANGED)
    return JudgePrompt(calls=calls, notes=notes)
