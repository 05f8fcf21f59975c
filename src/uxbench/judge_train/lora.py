"""`uxbench judge train --method lora`: fine-tune a Hugging Face causal LM (peft LoRA) as a pointwise judge.

Each training row is rendered with the project's binary zero-shot judge template and the model's chat template
(as the hf provider renders a Task 1 call), and the model learns to answer the verdict word (好/差, or good/bad
under English templates) followed by its end-of-turn token. The loss is the cross-entropy of the answer tokens
only, each row weighted by its class weight (balanced by default), so a skewed feedback log does not teach a
judge that always says the majority word. GPU when there is one (`--device auto`), CPU for small models.

Writes `OUT/adapter` (the LoRA adapter and the tokenizer: `--model hf:OUT/adapter` loads it when peft is
installed, transformers applying the adapter to the base model it names; peft's `PeftModel` reads it too), with
`--merge` also `OUT/merged` (full weights with the adapter merged in: `--model hf:OUT/merged`), `OUT/test.jsonl`
and `OUT/train.jsonl`, and `OUT/model_card.json` / `MODEL_CARD.md` (data, split, the loss per step and, with
merged weights, the held-out figures measured through the Task 1 runner).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, MissingDependencyError
from uxbench.judge_train.data import TrainRow, class_weights
from uxbench.judge_train.model import ClassWeight
from uxbench.judge_train.prompt_parse import PROMPT, verdict_words
from uxbench.judge_train.train import prepare, write_task1
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.scoring.prompts.render import build_messages, resolve_lang


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
    max_steps: int = 200
    learning_rate: float = 2e-4
    batch_size: int = 8
    r: int = 8
    device: str = "auto"
    merge: bool = False
    max_length: int = 2048
    """Prompt tokens kept (from the end: the reply and the question are last)."""
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


def prompt_text(tokenizer: Any, row: TrainRow) -> tuple[str, str]:
    """(the chat prompt as the hf provider renders it, the verdict word the row's label answers)."""
    from uxbench.models.providers._hf_engine import CHATML_TEMPLATE

    item = JudgeInput(history=row.history, query=row.query, response=row.response, lang=row.lang)
    lang = resolve_lang(item, PROMPT.lang)
    messages = [{"role": m.role, "content": m.content} for m in build_messages(item, PROMPT, lang=lang)]
    template = getattr(tokenizer, "chat_template", None) or CHATML_TEMPLATE
    text = tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False, add_generation_prompt=True)
    good, bad = verdict_words(lang)
    return str(text), good if row.label == "good" else bad


def _examples(tokenizer: Any, rows: Sequence[TrainRow], max_length: int) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, answer ids = the verdict word + end of turn) per row."""
    eos = tokenizer.eos_token_id
    out = []
    for row in rows:
        text, word = prompt_text(tokenizer, row)
        prompt = tokenizer.encode(text, add_special_tokens=False)[-max_length:]
        answer = tokenizer.encode(word, add_special_tokens=False) + ([eos] if eos is not None else [])
        out.append((prompt, answer))
    return out


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
    return device


def train_lora(options: LoraOptions, say: Callable[[str], None] = lambda _: None) -> LoraResult:
    torch, transformers, peft = _imports()
    prepared = prepare(options.data, exclude=options.exclude, exclude_threshold=options.exclude_threshold,
                       test_fraction=options.test_fraction, seed=options.seed, split_date=options.split_date,
                       data_license=options.data_license, say=say)
    split = prepared.split
    device = _pick_device(torch, options.device)
    started = time.perf_counter()
    kwargs: dict[str, Any] = {"local_files_only": not options.allow_download}
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(options.base_model, **kwargs)
        base = transformers.AutoModelForCausalLM.from_pretrained(options.base_model, dtype=torch.float32, **kwargs)
    except (OSError, ValueError) as err:
        raise ConfigError(f"could not load the base model {options.base_model!r}: {err}") from None
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    torch.manual_seed(options.seed)
    config = peft.LoraConfig(r=options.r, lora_alpha=2 * options.r, lora_dropout=0.0, target_modules="all-linear",
                             task_type="CAUSAL_LM")
    model = peft.get_peft_model(base, config).to(device)
    model.train()
    examples = _examples(tokenizer, split.train, options.max_length)
    weights = class_weights(split.train) if options.class_weight == "balanced" else {"good": 1.0, "bad": 1.0}
    row_weight = [weights[r.label] for r in split.train]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=options.learning_rate)
    rng = random.Random(options.seed)
    order: list[int] = []
    losses: list[float] = []
    for step in range(options.max_steps):
        if len(order) < options.batch_size:
            fresh = list(range(len(examples)))
            rng.shuffle(fresh)
            order += fresh
        picked, order = order[: options.batch_size], order[options.batch_size :]
        ids, mask, labels = _batch(torch, [examples[i] for i in picked], int(tokenizer.pad_token_id), device)
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1, :].float()
        target = labels[:, 1:]
        token_loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, ignore_index=-100,
                                                       reduction="none")
        counted = (target != -100).float()
        per_row = (token_loss * counted).sum(dim=1) / counted.sum(dim=1).clamp(min=1.0)
        w = torch.tensor([row_weight[i] for i in picked], dtype=per_row.dtype, device=device)
        loss = (per_row * w).sum() / w.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
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
        model.merge_and_unload().to("cpu").save_pretrained(merged_dir)
        tokenizer.save_pretrained(merged_dir)
    write_task1(split.test, out / "test.jsonl")
    write_task1(split.train, out / "train.jsonl")
    card: dict[str, Any] = {
        "method": "lora", "base_model": options.base_model, "data": prepared.data_info, "split": split.info,
        "class_weights": weights if options.class_weight == "balanced" else None,
        "training": {"steps": options.max_steps, "batch_size": options.batch_size,
                     "learning_rate": options.learning_rate, "r": options.r, "device": device, "seconds": seconds,
                     "loss_first": losses[0] if losses else None, "loss_last": losses[-1] if losses else None,
                     "losses": losses},
        "test": None,
    }
    if merged_dir is not None:
        from uxbench.judge_train.evaluate import figures, run_judge

        run = asyncio.run(run_judge(f"hf:{merged_dir}", {"device": device}, str(out / "test.jsonl"),
                                    runs_root=out / "runs", n_boot=options.n_boot, seed=options.seed))
        card["test"] = figures(run)
    (out / "model_card.json").write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(_render(card), encoding="utf-8")
    return LoraResult(adapter_dir=adapter_dir, merged_dir=merged_dir, losses=losses, card=card)


def _render(card: dict[str, Any]) -> str:
    t = card["training"]
    lines = [f"# Judge model card (lora on {card['base_model']})", "",
             f"- Data: {', '.join(card['data']['files'])}; license (as stated): "
             f"{card['data']['license'] or 'not stated'}",
             f"- Split: {card['split']['kind']}, train {card['split']['train']}, test {card['split']['test']}",
             f"- Class weights: {card['class_weights'] or 'none'}",
             f"- Training: {t['steps']} steps of {t['batch_size']} on {t['device']} in {t['seconds']:.0f} s, "
             f"loss {t['loss_first']:.4f} -> {t['loss_last']:.4f}"]
    test = card.get("test")
    if test:
        value = test["avg_acc"]
        lines.append(f"- Held out (n = {test['n']}, through hf:merged): Avg-Acc {100 * value['value']:.1f}% "
                     f"(95% CI {100 * value['ci_low']:.1f}-{100 * value['ci_high']:.1f}), ECE {test['ece']}")
    else:
        lines.append("- Held-out figures: train with --merge, or run `uxbench judge eval --judge hf:MERGED "
                     "--data OUT/test.jsonl` on merged weights")
    return "\n".join(lines) + "\n"
