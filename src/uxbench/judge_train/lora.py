"""`uxbench judge train --method lora`: fine-tune a causal LM (peft LoRA) as a pointwise judge.

Each training row is rendered with the project's binary zero-shot judge template and the model's chat template
(as the hf provider renders a Task 1 call), and the model learns to answer the verdict word (好/差, or good/bad
under English templates) followed by its end-of-turn token. The loss is the cross-entropy of the answer tokens
only, each row weighted by its class weight (balanced by default), so a skewed feedback log does not teach a
judge that always says the majority word. GPU when there is one (`--device auto`), CPU for small models.

The base model (`--base-model`): `embedded` (also `hf:embedded`, `smollm2`, or the path of the embedded GGUF
file: the bundled SmolLM2-135M-Instruct, converted once into a transformers directory in the model cache by
`uxbench.models.embedded.embedded_transformers_dir`), any transformers directory, another GGUF file (transformers
de-quantizes it on every load), or a hub id (`--allow-download`).

Memory is bounded by design (`bench/lora_memory.py` measures it):
- `--max-length` tokens per prompt at most: a longer prompt loses its oldest history messages first (as the
  judge's own shortening does), then the middle of the reply and of the question, and only then its first
  tokens; how many rows were cut, and how, is in the card.
- only the last few positions' logits are computed (`logits_to_keep`): the answer is at the end of every
  left-padded sequence, and a full-vocabulary logit matrix over 1,600 positions is most of a naive step's memory;
- `--batch-size` rows per forward pass, `--grad-accum` passes per optimiser step;
- gradient checkpointing where the model supports it (`--no-gradient-checkpointing` trades memory for time).

Writes `OUT/adapter` (the LoRA adapter and the tokenizer: `--model hf:OUT/adapter` loads it when peft is
installed), with `--merge` also `OUT/merged` (full weights: `--model hf:OUT/merged`), measured on the held-out
rows through the Task 1 runner (batched, `--eval-batch-size`, with progress) beside the TF-IDF baseline;
`OUT/test.jsonl`, `OUT/train.jsonl`, `OUT/model_card.json` / `MODEL_CARD.md`.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, MissingDependencyError
from uxbench.judge_train.card import baseline_lines, label_lines
from uxbench.judge_train.data import TrainRow, class_weights
from uxbench.judge_train.label_sources import DEFAULT_FLOOR
from uxbench.judge_train.model import ClassWeight
from uxbench.judge_train.prompt_parse import PROMPT, verdict_words
from uxbench.judge_train.train import Tick, _no_tick, baseline_section, items_of, prepare, write_task1
from uxbench.mining.pipeline.progress import StageProgress
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.render import build_messages, resolve_lang
from uxbench.scoring.shorten import cut_middle

KEEP_LOGITS_SLACK = 1
"""Positions of logits kept beyond the longest answer (the one that predicts its first token)."""
MIN_CUT_CHARS = 200


@dataclass
class LoraOptions:
    data: Sequence[str]
    out: Path
    base_model: str
    data_license: str | None = None
    test_fraction: float = 0.2
    split_date: datetime | None = None
    seed: int = 0
    exclude: Sequence[str] = ()
    exclude_threshold: float = 0.8
    class_weight: ClassWeight = "balanced"
    prior: str | float = "train"
    """Used by the baseline; the LoRA judge's probabilities are the model's own."""
    min_label_precision: float = DEFAULT_FLOOR
    max_steps: int = 200
    learning_rate: float = 2e-4
    batch_size: int = 8
    grad_accum: int = 1
    r: int = 8
    device: str = "auto"
    merge: bool = False
    max_length: int = 1024
    """Prompt tokens kept at most (oldest history first, see the module docstring)."""
    gradient_checkpointing: bool = True
    eval_batch_size: int = 8
    allow_download: bool = False
    n_boot: int = 2000


@dataclass
class LoraResult:
    adapter_dir: Path
    merged_dir: Path | None
    losses: list[float]
    card: dict[str, Any] = field(default_factory=dict)


def _imports() -> tuple[Any, Any, Any]:
    try:
        import peft
        import torch
        import transformers
    except ImportError as err:
        raise MissingDependencyError(str(err.name or "peft"), "lora", "LoRA training") from None
    return torch, transformers, peft


def resolve_base(name: str) -> tuple[str, str | None, str]:
    """(directory or hub id, GGUF file name in it or None, label) of a base model name."""
    from uxbench.models import embedded
    from uxbench.models.providers._hf_engine import EMBEDDED_NAMES

    bare = name.removeprefix("hf:")
    if bare in EMBEDDED_NAMES:
        return str(embedded.embedded_transformers_dir()), None, f"embedded ({embedded.FILENAME})"
    path = Path(bare).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ConfigError(f"--base-model {name!r}: no such GGUF file")
        known = {p.resolve() for p in (embedded.cached_path(), embedded.installed_path()) if p and p.is_file()}
        if path.resolve() in known:
            return str(embedded.embedded_transformers_dir()), None, f"embedded ({embedded.FILENAME})"
        return str(path.resolve().parent), path.name, str(path.resolve())
    if bare.startswith(("/", "./", "../", "~")) and not path.is_dir():
        raise ConfigError(f"--base-model {name!r}: no such directory")
    return (str(path.resolve()) if path.is_dir() else bare), None, bare


def _messages(row: TrainRow, history: Sequence[Any], query: str, response: str) -> tuple[list[dict[str, str]], str]:
    item = JudgeInput(history=list(history), query=query, response=response, lang=row.lang)
    lang = resolve_lang(item, PROMPT.lang)
    return [{"role": m.role, "content": m.content} for m in build_messages(item, PROMPT, lang=lang)], lang


def prompt_text(tokenizer: Any, row: TrainRow) -> tuple[str, str]:
    """(the chat prompt as the hf provider renders it, the verdict word the row's label answers)."""
    text, word, _ = fitted_prompt(tokenizer, row, None)
    return text, word


def fitted_prompt(tokenizer: Any, row: TrainRow, max_length: int | None) -> tuple[str, str, str]:
    """The prompt of `row` within `max_length` tokens (None: whole), its verdict word, and how it was cut:
    `none`, `history` (oldest messages dropped), `text` (history gone, reply and question cut in the
    middle) or `tokens` (still too long: the last `max_length` tokens are kept)."""
    from uxbench.models.providers._hf_engine import CHATML_TEMPLATE

    template = getattr(tokenizer, "chat_template", None) or CHATML_TEMPLATE

    def render(history: Sequence[Any], query: str, response: str) -> tuple[str, str, int]:
        messages, lang = _messages(row, history, query, response)
        text = str(tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False,
                                                 add_generation_prompt=True))
        return text, lang, len(tokenizer.encode(text, add_special_tokens=False))

    text, lang, n = render(row.history, row.query, row.response)
    good, bad = verdict_words(lang)  # type: ignore[arg-type]  # a template language
    word = good if row.label == "good" else bad
    if max_length is None or n <= max_length:
        return text, word, "none"
    history = list(row.history)
    low, high = 1, len(history)  # the fewest oldest messages to drop so that it fits
    best: str | None = None
    while low <= high:
        mid = (low + high) // 2
        candidate, _, size = render(history[mid:], row.query, row.response)
        if size <= max_length:
            best, high = candidate, mid - 1
        else:
            low = mid + 1
    if best is not None:
        return best, word, "history"
    limit = max(len(row.query), len(row.response))
    while limit > MIN_CUT_CHARS:  # the original texts cut to ever smaller limits (never a cut of a cut)
        limit = max(MIN_CUT_CHARS, limit // 2)
        text, _, n = render([], cut_middle(row.query, limit), cut_middle(row.response, limit))
        if n <= max_length:
            return text, word, "text"
    return text, word, "tokens"


def _examples(tokenizer: Any, rows: Sequence[TrainRow], max_length: int,
              tick: Tick) -> tuple[list[tuple[list[int], list[int]]], Counter[str]]:
    """(prompt ids, answer ids = the verdict word + end of turn) per row, and how many rows were cut how."""
    eos = tokenizer.eos_token_id
    out = []
    cuts: Counter[str] = Counter()
    for k, row in enumerate(rows):
        text, word, cut = fitted_prompt(tokenizer, row, max_length)
        cuts[cut] += 1
        prompt = tokenizer.encode(text, add_special_tokens=False)[-max_length:]
        answer = tokenizer.encode(word, add_special_tokens=False) + ([eos] if eos is not None else [])
        out.append((prompt, answer))
        if k % 16 == 0 or k == len(rows) - 1:
            tick(StageProgress("prepare prompts", "rows", k + 1, len(rows)))
    return out, cuts


def _batch(torch: Any, examples: list[tuple[list[int], list[int]]], pad: int, device: str) -> tuple[Any, Any, Any]:
    """Left-padded input ids, attention mask and labels (-100 except on the answer tokens)."""
    seqs = [p + a for p, a in examples]
    width = max(len(s) for s in seqs)
    ids, mask, labels = [], [], []
    for (prompt, answer), seq in zip(examples, seqs, strict=True):
        gap = width - len(seq)
        ids.append([pad] * gap + seq)
        mask.append([0] * gap + [1] * len(seq))
        labels.append([-100] * (gap + len(prompt)) + answer)
    ids_t, mask_t, labels_t = (torch.tensor(rows, dtype=torch.long, device=device) for rows in (ids, mask, labels))
    return ids_t, mask_t, labels_t


def _pick_device(torch: Any, device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {device}: no CUDA GPU is visible to torch here; use --device cpu or auto")
    return device


def _load(transformers: Any, torch: Any, options: LoraOptions) -> tuple[Any, Any, str]:
    path, gguf, label = resolve_base(options.base_model)
    kwargs: dict[str, Any] = {"local_files_only": not options.allow_download}
    if gguf:
        kwargs["gguf_file"] = gguf
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the CLI draws its own progress
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, **kwargs)
        base = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kwargs)
    except (OSError, ValueError) as err:
        hint = "" if options.allow_download else " (a hub id needs --allow-download)"
        raise ConfigError(f"could not load the base model {options.base_model!r}: {err}{hint}") from None
    finally:
        hf_logging.enable_progress_bar()
    return tokenizer, base, label


def step_loss(torch: Any, model: Any, examples: list[tuple[list[int], list[int]]], weights: list[float],
              weight_total: float, pad: int, device: str) -> Any:
    """This micro-batch's share of the step's class-weighted loss (its rows' weighted answer cross-entropy over
    the weight of every row in the step), computed on the last positions' logits only."""
    ids, mask, labels = _batch(torch, examples, pad, device)
    keep = max(len(a) for _, a in examples) + KEEP_LOGITS_SLACK
    logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=keep).logits.float()
    logits, target = logits[:, :-1, :], labels[:, -keep + 1 :]
    token_loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, ignore_index=-100,
                                                   reduction="none")
    counted = (target != -100).float()
    per_row = (token_loss * counted).sum(dim=1) / counted.sum(dim=1).clamp(min=1.0)
    w = torch.tensor(weights, dtype=per_row.dtype, device=device)
    return (per_row * w).sum() / weight_total


def train_lora(options: LoraOptions, say: Callable[[str], None] = lambda _: None,
               tick: Tick = _no_tick) -> LoraResult:
    import warnings

    with warnings.catch_warnings():  # transformers' deprecation notices about its own checkpointing calls
        warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")
        warnings.filterwarnings("ignore", message=".*checkpointing.*")
        return _train_lora(options, say, tick)


def _train_lora(options: LoraOptions, say: Callable[[str], None], tick: Tick) -> LoraResult:
    torch, transformers, peft = _imports()
    prepared = prepare(options.data, exclude=options.exclude, exclude_threshold=options.exclude_threshold,
                       test_fraction=options.test_fraction, seed=options.seed, split_date=options.split_date,
                       data_license=options.data_license, min_label_precision=options.min_label_precision,
                       say=say)
    split = prepared.split
    device = _pick_device(torch, options.device)
    say(f"loading the base model {options.base_model} ...")
    tokenizer, base, base_label = _load(transformers, torch, options)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    torch.manual_seed(options.seed)
    checkpointing = bool(options.gradient_checkpointing and getattr(base, "supports_gradient_checkpointing", False))
    if checkpointing:
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        base.config.use_cache = False
    config = peft.LoraConfig(r=options.r, lora_alpha=2 * options.r, lora_dropout=0.0, target_modules="all-linear",
                             task_type="CAUSAL_LM")
    model = peft.get_peft_model(base, config).to(device)
    model.train()
    examples, cuts = _examples(tokenizer, split.train, options.max_length, tick)
    weights = class_weights(split.train) if options.class_weight == "balanced" else {"good": 1.0, "bad": 1.0}
    row_weight = [weights[r.label] for r in split.train]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=options.learning_rate)
    rng = random.Random(options.seed)
    order: list[int] = []
    losses: list[float] = []
    step_seconds: list[float] = []
    pad = int(tokenizer.pad_token_id)
    per_step = options.batch_size * options.grad_accum
    started = time.perf_counter()
    tick(StageProgress("train", "steps", 0, options.max_steps))
    for step in range(options.max_steps):
        t0 = time.perf_counter()
        if len(order) < per_step:
            fresh = list(range(len(examples)))
            rng.shuffle(fresh)
            order += fresh
        picked, order = order[:per_step], order[per_step:]
        total = sum(row_weight[i] for i in picked)
        optimizer.zero_grad()
        loss_value = 0.0
        for start in range(0, len(picked), options.batch_size):
            micro = picked[start : start + options.batch_size]
            loss = step_loss(torch, model, [examples[i] for i in micro], [row_weight[i] for i in micro], total,
                             pad, device)
            loss.backward()
            loss_value += float(loss.detach())
        optimizer.step()
        losses.append(loss_value)
        step_seconds.append(time.perf_counter() - t0)
        tick(StageProgress("train", "steps", step + 1, options.max_steps))
        if step % max(1, options.max_steps // 10) == 0:
            say(f"step {step + 1}/{options.max_steps}: loss {losses[-1]:.4f}")
    seconds = time.perf_counter() - started
    model.eval()
    out = options.out
    adapter_dir = out / "adapter"
    model.save_pretrained(adapter_dir)
    tokenizer.save_pretrained(adapter_dir)
    merged_dir = None
    if options.merge:
        merged_dir = out / "merged"
        merged = model.merge_and_unload().to("cpu")
        merged.config.use_cache = True
        merged.save_pretrained(merged_dir)
        tokenizer.save_pretrained(merged_dir)
        del merged
    del model, base, optimizer
    write_task1(split.test, out / "test.jsonl")
    write_task1(split.train, out / "train.jsonl")
    card: dict[str, Any] = {
        "method": "lora", "base_model": options.base_model, "base_model_loaded": base_label,
        "data": prepared.data_info, "split": split.info,
        "class_weights": weights if options.class_weight == "balanced" else None,
        "training": {"steps": options.max_steps, "batch_size": options.batch_size, "grad_accum": options.grad_accum,
                     "max_length": options.max_length, "prompts_cut": dict(cuts),
                     "gradient_checkpointing": checkpointing, "learning_rate": options.learning_rate,
                     "r": options.r, "device": device, "seconds": seconds,
                     "seconds_per_step": seconds / max(1, options.max_steps),
                     "loss_first": losses[0] if losses else None, "loss_last": losses[-1] if losses else None,
                     "losses": losses},
        "test": None,
    }
    if merged_dir is not None:
        card["test"], card["baseline"] = _held_out(merged_dir, out, split, device, options, tick)
    (out / "model_card.json").write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(_render(card), encoding="utf-8")
    return LoraResult(adapter_dir=adapter_dir, merged_dir=merged_dir, losses=losses, card=card)


def _held_out(merged_dir: Path, out: Path, split: Any, device: str, options: LoraOptions,
              tick: Tick) -> tuple[dict[str, Any], dict[str, Any]]:
    """The merged weights on the held-out rows through the Task 1 runner (the hf provider batches
    `eval_batch_size` concurrent calls into one forward pass), and the baseline beside them."""
    import numpy as np

    from uxbench.judge_train.evaluate import figures, run_judge
    from uxbench.orchestrate.progress import ProgressEvent

    def progress(event: ProgressEvent) -> None:
        if event.total:
            tick(StageProgress("held-out check (hf:merged)", "rows", event.done, event.total))

    args = {"device": device, "max_batch_size": str(options.eval_batch_size)}
    run = asyncio.run(run_judge(f"hf:{merged_dir}", args, str(out / "test.jsonl"), runs_root=out / "runs",
                                n_boot=options.n_boot, seed=options.seed, concurrency=options.eval_batch_size,
                                progress=progress))
    y = np.array([r.label == "good" for r in split.train])
    prior = 0.5 if options.prior == "balanced" else float(y.mean()) if options.prior == "train" else \
        float(options.prior)
    test_rows = [r for r in split.test if r.id in run.verdicts]
    baseline = baseline_section(items_of(split.train), split.train, items_of(test_rows), test_rows,
                                [run.verdicts[r.id][1] for r in test_rows], class_weight=options.class_weight,
                                prior=prior, n_boot=options.n_boot, seed=options.seed)
    baseline.pop("verdicts")
    return figures(run), baseline


def _render(card: dict[str, Any]) -> str:
    t = card["training"]
    lines = [f"# Judge model card (lora on {card['base_model']})", "",
             f"- Base model loaded from: {card.get('base_model_loaded', card['base_model'])}",
             f"- Data: {', '.join(card['data']['files'])}; license (as stated): "
             f"{card['data']['license'] or 'not stated'}",
             f"- Split: {card['split']['kind']}, train {card['split']['train']}, test {card['split']['test']}",
             f"- Class weights: {card['class_weights'] or 'none'}",
             f"- Training: {t['steps']} steps of {t['batch_size']} x {t['grad_accum']} rows on {t['device']} in "
             f"{t['seconds']:.0f} s ({t['seconds_per_step']:.2f} s a step), prompts of at most {t['max_length']} "
             f"tokens (cut: {t['prompts_cut']}), gradient checkpointing "
             f"{'on' if t['gradient_checkpointing'] else 'off'}"
             f", loss {t['loss_first']:.4f} -> {t['loss_last']:.4f}",
             *label_lines(card["data"].get("labels"))]
    test = card.get("test")
    if test:
        value = test["avg_acc"]
        lines += ["", f"- Held out (n = {test['n']}, through hf:merged): Avg-Acc {100 * value['value']:.1f}% "
                      f"(95% CI {100 * value['ci_low']:.1f}-{100 * value['ci_high']:.1f}), ECE {test['ece']}"]
        lines += baseline_lines(card.get("baseline"))
    else:
        lines.append("- Held-out figures: train with --merge, or run `uxbench judge eval --judge hf:MERGED "
                     "--data OUT/test.jsonl` on merged weights")
    return "\n".join(lines) + "\n"
