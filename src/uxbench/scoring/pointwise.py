"""The pointwise judge: one reply in its context -> good / bad (or neutral, or a Likert score).

Task 1 runs it with the model under test as the judge; Tasks 2/3 use it as the LLM-as-a-judge fallback for
users without the reward model (any chat model, reasoning kept, the verdict read by the conservative parser).
With `verdict_from="logprobs"` it reads the GRM protocol's probability verdict instead, falling back to the
text when neither verdict word is among the candidates.
"""

from __future__ import annotations

from typing import Any, Literal

from uxbench.errors import FatalModelError
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.scoring._text import strip_reasoning
from uxbench.scoring.judgement import ChatModel, Judgement
from uxbench.scoring.probability import read_probability_verdict
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import PromptOptions
from uxbench.scoring.prompts.render import VERDICT_WORDS, build_messages, build_profile_messages, resolve_lang
from uxbench.scoring.prompts.templates_io import LANGS, Lang, pick_examples, template_hashes
from uxbench.scoring.rubric import Rubric, load_rubric
from uxbench.scoring.rubric_verdict import parse_rubric
from uxbench.scoring.verdict import parse_binary, parse_likert, parse_three_class

PROBABILITY_MAX_TOKENS = 4
"""Token cap of a probability verdict call: the verdict is read at the first non-blank token, so a server is
never kept writing an answer nobody reads (a few tokens leave room for a leading blank)."""
PROBABILITY_TOP_LOGPROBS = 20


class NoLogprobsError(FatalModelError):
    """The verdict is to be read from log-probabilities and the model returned none: retrying cannot help."""


class PointwiseJudge:
    """Renders the project's judge templates, calls a model, reads the verdict."""

    def __init__(
        self,
        prompt: PromptOptions,
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        reasoning_effort: str | None = None,
        verdict_from: Literal["text", "logprobs"] = "text",
        threshold: float = 0.5,
        rubric: Rubric | None = None,
    ) -> None:
        if prompt.strategy == "few_shot":
            for lang in self.langs(prompt):
                pick_examples(lang, prompt.few_shot_k)  # fail now, not on the first case
        # a rubric object (a persona's own) or the one the options name; a bad rubric file fails now
        self.rubric: Rubric | None = rubric or (load_rubric(prompt.rubric) if prompt.rubric else None)
        self.prompt = prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.reasoning_effort = reasoning_effort
        self.verdict_from = verdict_from
        self.threshold = threshold
        self._configs: dict[Lang | None, GenerateConfig] = {}

    @staticmethod
    def langs(prompt: PromptOptions) -> tuple[Lang, ...]:
        return LANGS if prompt.lang == "auto" else (prompt.lang,)

    def template_hashes(self) -> dict[str, str]:
        """sha256 of every template file used, and of the rubric's content (a rubric file's path is not enough:
        an edited file must give another run)."""
        hashes = template_hashes(self.prompt.formulation, self.prompt.strategy, self.langs(self.prompt))
        if self.rubric is not None:
            hashes[f"rubric:{self.rubric.id}"] = self.rubric.digest()
        return hashes

    def generate_config(self, lang: Lang | None = None) -> GenerateConfig:
        """Settings of the verdict call (`lang` given) or of the user_modeling profile call; built once."""
        cached = self._configs.get(lang)
        if cached is not None:
            return cached
        extra: dict[str, Any] = {}
        max_tokens = self.max_tokens
        if self.verdict_from == "logprobs" and lang is not None:
            good, bad = VERDICT_WORDS[lang]["good"], VERDICT_WORDS[lang]["bad"]
            extra = {"choices": (good, bad), "top_logprobs": PROBABILITY_TOP_LOGPROBS,
                     "logprob_tokens": PROBABILITY_MAX_TOKENS}
            max_tokens = max_tokens or PROBABILITY_MAX_TOKENS
        config = GenerateConfig(
            temperature=self.temperature, max_tokens=max_tokens, reasoning_effort=self.reasoning_effort, **extra
        )
        self._configs[lang] = config
        return config

    async def judge(self, item: JudgeInput, model: ChatModel, *, into: Judgement | None = None) -> Judgement:
        """Judge one reply. Raises `ModelError` when a call fails for good; pass `into` to keep what was done
        before the failure (the outputs and details of earlier calls, e.g. user_modeling's profile)."""
        result = into if into is not None else Judgement(label=None, score=None, note="")
        lang = resolve_lang(item, self.prompt.lang)
        result.extra["lang"] = lang
        profile: str | None = None
        if self.prompt.strategy == "user_modeling":
            first = await model.generate(build_profile_messages(item, self.prompt, lang=lang), self.generate_config())
            result.outputs.append(first)
            profile = strip_reasoning(first.text).strip()
            result.extra["profile"] = profile
            if not profile:
                result.extra["profile_note"] = "the profile call returned no text; judged without a profile"
        messages = build_messages(item, self.prompt, profile=profile, lang=lang, rubric=self.rubric)
        final = await model.generate(messages, self.generate_config(lang))
        result.outputs.append(final)
        result.label, result.score, result.note = self._read(final, lang, result.extra)
        return result

    def _read(self, output: ModelOutput, lang: Lang, extra: dict[str, Any]) -> tuple[str | None, float | None, str]:
        p = self.prompt
        if self.rubric is not None:
            scored, note = parse_rubric(output.text, self.rubric, reasoning=output.reasoning)
            if scored is None:
                return None, None, note
            extra["rubric_scores"] = scored.scores
            return scored.label, scored.value, note
        if p.formulation == "likert":
            value, note = parse_likert(output.text, p.likert_scale, reasoning=output.reasoning)
            if value is None:
                return None, None, note
            label = "good" if value >= p.threshold else "bad"
            return label, float(value), f"{note}; {value} {'>=' if label == 'good' else '<'} {p.threshold}"
        parse = parse_three_class if p.formulation == "three_class" else parse_binary
        if self.verdict_from == "logprobs":
            if not output.logprobs and not output.choice_logprobs:
                raise NoLogprobsError(
                    f"{output.model or 'the model'} returned no log-probabilities, and --verdict-from logprobs reads "
                    "the verdict from them: its server or provider does not return logprobs / top_logprobs. Use "
                    "--verdict-from text (the written verdict), or a server that returns them (vLLM, llama.cpp, "
                    "OpenAI)")
            words = VERDICT_WORDS[lang]
            read = read_probability_verdict(output, words["good"], words["bad"], threshold=self.threshold)
            extra["score_status"] = read.status
            if read.mismatch:
                extra["emitted_mismatch"] = True
            if read.label is not None:
                return read.label, read.score, read.note
            verdict = parse(output.text, lang, reasoning=output.reasoning)
            return verdict.label, None, f"{verdict.note} (no verdict word in the logprobs: read from the text)"
        verdict = parse(output.text, lang, reasoning=output.reasoning)
        return verdict.label, None, verdict.note
