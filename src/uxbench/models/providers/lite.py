"""A judge trained with `uxbench judge train --method lite`: `lite:DIR`.

It reads the project's binary zero-shot judge prompt (`uxbench.judge_train.prompt_parse`), computes p(good) with
the trained model and answers the verdict word (好/差, or good/bad under English templates). It returns
`choice_logprobs` and the first token's top logprobs with its two candidates, log p and log(1 - p), so the
GRM protocol reads p(good) / (p(good) + p(bad)) = p (`judge serve` fills a longer top_logprobs list with
tokens at OpenAI's -9999.0). Any other prompt is an error that says what it reads.

Usage counts tokens, not characters: the e5 encoder's own sentencepiece tokens, or for the hashing encoder
(which has no vocabulary) words, CJK characters and punctuation marks (`word_tokens`).

Concurrent calls are batched (one encoder pass per batch) on one worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import PositiveInt

from uxbench.data.schema import Message
from uxbench.errors import FatalModelError, UxbenchError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, ProviderArgs, TokenLogprobs, TopLogprob, Usage
from uxbench.models.providers._args import parse_provider_args
from uxbench.models.registry import register_provider

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+|[^\w\s]", re.UNICODE)


def word_tokens(text: str) -> int:
    """Tokens of a text for a judge without a vocabulary: each CJK character, word and punctuation mark."""
    return len(_TOKEN.findall(text))


_WORKER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="uxbench-lite")
_Pending = tuple[list[Message], "asyncio.Future[tuple[float, str]]"]


class LiteArgs(ProviderArgs):
    max_batch_size: PositiveInt = 64
    """Concurrent calls scored together in one encoder pass."""


@register_provider("lite")
class LiteJudge(ModelAPI):
    """A judge trained by `uxbench judge train --method lite` (lite:DIR): answers Task 1 prompts with p(good)."""

    args_model = LiteArgs
    default_max_concurrency = 64

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        from uxbench.judge_train.model import MODEL_JSON, MODEL_NPZ, LiteModel

        super().__init__(model_name, args)
        self.params = parse_provider_args(LiteArgs, self.args, provider="lite")
        self.path = Path(model_name).expanduser()
        self.model = LiteModel.load(self.path)
        digest = hashlib.sha256()
        for name in (MODEL_JSON, MODEL_NPZ):
            digest.update((self.path / name).read_bytes())
        self.digest = digest.hexdigest()[:16]
        self._encoder: Any = None
        self._pending: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None
        self.batch_sizes: list[int] = []
        """Size of every batch scored so far (tests check that concurrent calls were batched)."""

    def cache_identity(self) -> dict[str, Any]:
        return {"provider": "lite", "model": str(self.path), "digest": self.digest}

    def logits(self, prompts: list[list[Message]]) -> list[tuple[float, str]]:
        """Worker-thread entry point: (calibrated logit of good, template language) per prompt."""
        from uxbench.judge_train.features import encode_items, make_encoder
        from uxbench.judge_train.prompt_parse import parse_judge_prompt

        parsed = []
        for messages in prompts:
            found = parse_judge_prompt(messages)
            if found is None:
                raise FatalModelError(
                    f"{self.spec} reads the binary zero-shot judge prompt only (Task 1 with --verdict-from "
                    "logprobs or the default prompt, the GRM scorer of Tasks 2/3); this prompt is not one"
                )
            parsed.append(found)
        if self._encoder is None:
            self._encoder = make_encoder(self.model.encoder)
        text, ux = encode_items([item for item, _ in parsed], self._encoder)
        return [(float(z), lang) for z, (_, lang) in zip(self.model.logit(text, ux), parsed, strict=True)]

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # callers started in the same tick join the first batch
        loop = asyncio.get_running_loop()
        while self._pending:
            live = [p for p in self._pending if not p[1].done()]  # callers that gave up are dropped
            batch, self._pending = live[: self.params.max_batch_size], live[self.params.max_batch_size :]
            if not batch:
                break
            self.batch_sizes.append(len(batch))
            try:
                results = await loop.run_in_executor(_WORKER, self.logits, [m for m, _ in batch])
            except Exception as err:
                error = err if isinstance(err, UxbenchError) else FatalModelError(
                    f"{self.spec} failed: {type(err).__name__}: {err}")
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(error)
                continue
            for (_, fut), result in zip(batch, results, strict=True):
                if not fut.done():
                    fut.set_result(result)

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        from uxbench.judge_train.prompt_parse import verdict_words

        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[float, str]] = loop.create_future()
        self._pending.append((messages, future))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        z, lang = await future
        good, bad = verdict_words(lang)  # type: ignore[arg-type]  # a template language
        return verdict_output(z, good, bad, config, model=self.spec,
                              input_tokens=sum(self.count_tokens(m.content) for m in messages))

    def count_tokens(self, text: str) -> int:
        """The encoder's tokens (e5, once loaded), else `word_tokens`."""
        inner = getattr(self._encoder, "_model", None)
        counter = getattr(inner, "token_count", None)
        return int(counter(text)) if callable(counter) else word_tokens(text)

    async def aclose(self) -> None:
        self._encoder = None


def verdict_output(z: float, good: str, bad: str, config: GenerateConfig, *, model: str,
                   input_tokens: int = 0) -> ModelOutput:
    """The answer of a two-word judge whose log-odds of `good` is `z`: the likelier word, its choice logprobs
    and (when asked) the first token's top logprobs with both words."""
    lp_good, lp_bad = -float(np.logaddexp(0.0, -z)), -float(np.logaddexp(0.0, z))
    word = good if z >= 0.0 else bad
    ranked = sorted(((good, lp_good), (bad, lp_bad)), key=lambda t: -t[1])
    logprobs = None
    if config.top_logprobs is not None:
        top = [TopLogprob(token=t, logprob=lp) for t, lp in ranked[: max(1, config.top_logprobs)]]
        logprobs = [TokenLogprobs(token=word, logprob=max(lp_good, lp_bad), top=top)]
    return ModelOutput(
        text=word, usage=Usage(input_tokens=input_tokens, output_tokens=1), logprobs=logprobs,
        choice_logprobs={good: lp_good, bad: lp_bad}, finish_reason="stop", model=model,
    )


def probability_of(z: float) -> float:
    """p(good) from the log-odds, as the GRM protocol reads it back from the two logprobs."""
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
