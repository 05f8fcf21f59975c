"""The generative reward model (GRM) protocol of the method, for Tasks 2/3 (and any reply in its context).

The judge reads the history, the user's message (Task 3: the complaint) and the reply, rendered with the
project's binary judge template, and answers one word: 好/差 (good/bad with English templates). The verdict is
read from probabilities (`scoring.probability`): score = p(好) / (p(好) + p(差)) at the first non-blank output
token; partial and unscorable cases are marked and counted. Requests ask for a few tokens only.

Works with any OpenAI-compatible server that returns `top_logprobs` (vLLM serving UXBench-GRM, llama.cpp's
server, a served `uxbench` judge) and with in-process `hf` models (exact next-token probabilities). A judge that
returns no log-probabilities at all cannot be scored this way: that stops the scoring with an error that names
the judge and the fallback (`--judge-mode pointwise`).
"""

from __future__ import annotations

from typing import Any

from uxbench.errors import ContextLengthError, UxbenchError
from uxbench.models.api import GenerateConfig
from uxbench.scoring.judgement import ChatModel, Judgement
from uxbench.scoring.probability import read_probability_verdict
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.options import JudgeLang, PromptOptions
from uxbench.scoring.prompts.render import VERDICT_WORDS, build_messages, resolve_lang
from uxbench.scoring.prompts.templates_io import LANGS, Lang, template_hashes
from uxbench.scoring.shorten import SHORTEN_STEPS, shorten


class JudgeProtocolError(UxbenchError):
    """The judge cannot serve the requested protocol (e.g. it returns no log-probabilities)."""


class GrmScorer:
    """Scores replies under the GRM protocol."""

    mode = "grm"

    def __init__(
        self,
        *,
        lang: JudgeLang = "auto",
        threshold: float = 0.5,
        top_logprobs: int = 20,
        max_tokens: int = 4,
        max_chars: int = 16000,
        judge_name: str = "the judge",
    ) -> None:
        self.prompt = PromptOptions(formulation="binary", strategy="zero_shot", lang=lang, max_chars=max_chars)
        self.threshold = threshold
        self.top_logprobs = top_logprobs
        self.max_tokens = max_tokens
        self.judge_name = judge_name
        self._configs: dict[Lang, GenerateConfig] = {}

    def settings(self) -> dict[str, Any]:
        """What decides the scores (goes into the judge's identity)."""
        return {"mode": self.mode, "lang": self.prompt.lang, "threshold": self.threshold,
                "top_logprobs": self.top_logprobs, "max_tokens": self.max_tokens, "max_chars": self.prompt.max_chars}

    def template_hashes(self) -> dict[str, str]:
        langs = LANGS if self.prompt.lang == "auto" else (self.prompt.lang,)
        return template_hashes("binary", "zero_shot", langs)

    def _config(self, lang: Lang) -> GenerateConfig:
        config = self._configs.get(lang)
        if config is None:
            words = VERDICT_WORDS[lang]
            config = GenerateConfig(
                temperature=0.0, max_tokens=self.max_tokens, top_logprobs=self.top_logprobs,
                logprob_tokens=self.max_tokens, choices=(words["good"], words["bad"]),
            )
            self._configs[lang] = config
        return config

    async def score(self, item: JudgeInput, model: ChatModel) -> Judgement:
        """Score one reply, shortening the input step by step while the judge says it is too long.
        Raises `ModelError` when a call fails for good, `JudgeProtocolError` when no logprobs come back."""
        lang = resolve_lang(item, self.prompt.lang)
        words = VERDICT_WORDS[lang]
        last = len(SHORTEN_STEPS) - 1
        for step in range(len(SHORTEN_STEPS)):
            messages = build_messages(shorten(item, step), self.prompt, lang=lang)
            try:
                output = await model.generate(messages, self._config(lang))
            except ContextLengthError:
                if step == last:
                    raise
                continue
            if output.logprobs is None and output.choice_logprobs is None:
                raise JudgeProtocolError(
                    f"{self.judge_name} returned no log-probabilities, so its replies cannot be scored with the "
                    "GRM protocol (score = p(good) / (p(good) + p(bad)) at the first answer token). Use a server "
                    "that returns top_logprobs (vLLM, llama.cpp, OpenAI), or score with --judge-mode pointwise "
                    "(the judge's written verdict)."
                )
            read = read_probability_verdict(output, words["good"], words["bad"], threshold=self.threshold)
            extra: dict[str, Any] = {"lang": lang, "score_status": read.status, "shorten_step": step,
                                     "emitted_mismatch": read.mismatch}
            if read.p_good is not None:
                extra["p_good_token"] = read.p_good
            if read.p_bad is not None:
                extra["p_bad_token"] = read.p_bad
            return Judgement(label=read.label, score=read.score, note=read.note, outputs=[output], extra=extra)
        raise AssertionError("unreachable: the last step either returns or raises")
