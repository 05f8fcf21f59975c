"""What makes the in-process model quick on a CPU, where the embedded demo runs: which prompts share a batch, the
threads, a verdict call that stops once its word is written, and the shared start of the prompts computed once.

Measured on the embedded model (SmolLM2-135M, float32, the 24 Task 1 demo prompts of 430-1,374 tokens, of which the
first 300 are the same system prompt), one thread: a left-padded batch of 6 took 2.6x the CPU of the same prompts
one by one; reusing the shared start's attention cache changes p(good) by at most 2e-5.
"""

from __future__ import annotations

import copy
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHORT_ANSWER_TOKENS = 8
"""An answer of at most this many tokens (a verdict) costs about one forward pass over its prompt."""
MIN_PREFIX_TOKENS = 64
"""A shared prompt start shorter than this is computed again with each prompt (not worth a cache)."""


class VerdictRead:
    """Stopping criterion of a verdict call (`config.choices`): the verdict is read at the first position and the
    emitted word at the first non-blank one, so generation stops once every row has written a non-blank token
    instead of running to `max_tokens` (positions nobody reads)."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        self.read: list[bool] | None = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        last = input_ids[:, -1].tolist()  # called after each new token
        if self.read is None:
            self.read = [False] * len(last)
        for row, token in enumerate(last):
            if not self.read[row] and self.tok.decode([token]).strip():
                self.read[row] = True
        return torch.full((len(last),), all(self.read), dtype=torch.bool, device=input_ids.device)


def set_threads() -> None:
    """torch's intra-op threads = the cores this process may use (its CPU affinity, and a cgroup quota when one
    is set), unless OMP_NUM_THREADS says otherwise: torch's own default counts the machine's cores."""
    import torch

    if os.environ.get("OMP_NUM_THREADS"):
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cgroup_cpus()
    if quota is not None:
        cores = max(1, min(cores, quota))
    if torch.get_num_threads() != cores:
        torch.set_num_threads(cores)


def _cgroup_cpus() -> int | None:
    """The CPUs a cgroup v2 quota allows (`cpu.max`: "quota period"), rounded up; None without a quota."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text(encoding="ascii").split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, -(-int(quota) // int(period)))


@dataclass
class PrefixCache:
    """The attention cache (keys and values) of a prompt start, for prompts run one at a time: a task's prompts
    share their system prompt and instructions' start, and the keys and values of those tokens do not depend on
    what follows (causal attention), so they are computed once and each prompt runs only its own tokens.

    It learns the start from the prompts themselves: the tokens the latest two prompts share, when at least
    MIN_PREFIX_TOKENS. Used from the model's one worker thread only."""

    ids: tuple[int, ...] = ()
    cache: Any = None
    last: tuple[int, ...] = ()

    def for_prompt(self, model: Any, ids: list[int]) -> Any | None:
        """A copy of the cache for the start `ids` shares with earlier prompts (at least one token of `ids` left
        to run), or None; computes and keeps a new start when the prompts changed."""
        prompt = tuple(ids)
        previous, self.last = self.last, prompt
        if self.cache is not None:
            shared = min(_common(self.ids, prompt), len(prompt) - 1)
            if shared >= MIN_PREFIX_TOKENS:
                found = copy.deepcopy(self.cache)
                if shared < len(self.ids):
                    found.crop(shared)
                return found
        shared = min(_common(previous, prompt), len(prompt) - 1)
        if shared < MIN_PREFIX_TOKENS:
            return None
        import torch
        from transformers import DynamicCache

        cache = DynamicCache()
        with torch.inference_mode():
            model(input_ids=torch.tensor([list(prompt[:shared])], device=model.device),
                  **{cache_argument(model): cache}, use_cache=True, logits_to_keep=1)
        self.ids, self.cache = prompt[:shared], cache
        return copy.deepcopy(cache)


def cache_argument(model: Any) -> str:
    """The keyword a model's forward and generate take the attention cache by (`cache` in transformers 5.x,
    where `past_key_values` is deprecated; `past_key_values` before)."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _common(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def plan_batches(lengths: list[int], *, device: str, answer_tokens: int, max_batch: int) -> list[list[int]]:
    """Which prompts run together (indices into `lengths`), at most `max_batch` a batch.

    On a GPU padding costs little: the batch stays whole, in arrival order. On a CPU a padded batch computes every
    pad token and attends through a mask (several times slower than the same prompts one by one, measured on the
    embedded model), while a batch shares its decoding steps. So prompts are sorted by length and grouped only
    while padding stays small: 10% of the batch's tokens for a short answer (a verdict: the prompt's forward pass
    is the whole cost), 30% for a longer one (the shared decoding steps pay for some padding)."""
    order = list(range(len(lengths)))
    if not device.startswith("cpu"):
        return [order[i:i + max_batch] for i in range(0, len(order), max_batch)]
    waste = 0.10 if answer_tokens <= SHORT_ANSWER_TOKENS else 0.30
    order.sort(key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:  # ascending: the newest member is the longest
        group = groups[-1] if groups else None
        if group is not None and len(group) < max_batch and \
                lengths[i] * (len(group) + 1) <= (1 + waste) * (sum(lengths[j] for j in group) + lengths[i]):
            group.append(i)
        else:
            groups.append([i])
    return groups


