"""Near-duplicate conversations by their user text, with MinHash LSH (datasketch).

Text -> shingles: NFKC, casefold, punctuation dropped and whitespace collapsed; character 3-grams when the
text is mostly CJK (>= 30% of its characters), else character 5-grams (robust to one changed word in a
short English query, unlike word 3-grams). Each text gets a MinHash (num_perm 128, fixed seed and
hashing scheme, so runs are reproducible); one pass inserts and queries an LSH index, so the cost is
linear in the number of conversations. An LSH candidate is confirmed only when the MinHash estimate of
the Jaccard similarity reaches the threshold. The first occurrence is kept; later near-duplicates join
its group (the earliest matching representative when several match).

The index is stateful by nature: run it in one process over the whole stream (it holds one MinHash per
kept conversation, about 1 KB each), not inside parallel map tasks.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

import numpy as np
from datasketch import MinHash, MinHashLSH
from pydantic import BaseModel, ConfigDict, Field

from uxbench.errors import ConfigError, DataError
from uxbench.mining.types import Session

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_PUNCT = re.compile(r"[^\w\s]+|_+")
_SPACE = re.compile(r"\s+")
_SCHEME = "affine32"


class DedupConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(default=0.8, gt=0, le=1)
    """Estimated Jaccard similarity of the shingle sets at or above which two texts are near-duplicates."""
    num_perm: int = Field(default=128, ge=16)
    seed: int = 1
    cjk_ngram: int = Field(default=3, ge=1)
    latin_ngram: int = Field(default=5, ge=1)
    text: Literal["user", "first_user"] = "user"
    """What is compared: all user messages of a conversation joined, or only its first user message."""


def normalise_for_shingles(text: str) -> str:
    """NFKC, casefold, punctuation dropped, whitespace collapsed (and dropped next to CJK characters)."""
    out = _SPACE.sub(" ", _PUNCT.sub(" ", unicodedata.normalize("NFKC", text).casefold())).strip()
    return re.sub(r"(?<=[\u3000-\u9fff]) | (?=[\u3000-\u9fff])", "", out)


def shingles(text: str, config: DedupConfig | None = None) -> set[str]:
    """Character n-grams of the normalised text (n by script); the whole text when shorter than n."""
    cfg = config or DedupConfig()
    norm = normalise_for_shingles(text)
    if not norm:
        return set()
    n = cfg.cjk_ngram if len(_CJK.findall(norm)) >= 0.3 * len(norm.replace(" ", "")) else cfg.latin_ngram
    if len(norm) <= n:
        return {norm}
    return {norm[i : i + n] for i in range(len(norm) - n + 1)}


def session_text(session: Session, which: Literal["user", "first_user"] = "user") -> str:
    users = [t.content for t in session.turns if t.role == "user"]
    if which == "first_user":
        return users[0] if users else ""
    return "\n".join(users)


class NearDuplicateIndex:
    """Streaming index: `add(key, text)` returns the representative's key when `text` is a near-duplicate
    of an earlier text, else None (and the text becomes a representative)."""

    def __init__(self, config: DedupConfig | None = None) -> None:
        self.config = config or DedupConfig()
        cfg = self.config
        self._perm = MinHash(num_perm=cfg.num_perm, seed=cfg.seed, scheme=_SCHEME).permutations
        try:
            self._lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm)
        except ValueError as err:
            raise ConfigError(
                f"near-duplicate threshold {cfg.threshold} with num_perm {cfg.num_perm} is not usable: "
                f"{err}; "
                "lower the threshold or raise num_perm"
            ) from None
        self._order: dict[str, int] = {}
        self._values: dict[str, np.ndarray] = {}

    def _minhash(self, grams: set[str]) -> MinHash:
        cfg = self.config
        m = MinHash(num_perm=cfg.num_perm, seed=cfg.seed, permutations=self._perm, scheme=_SCHEME)
        m.update_batch([g.encode("utf-8") for g in sorted(grams)])
        return m

    def add(self, key: str, text: str) -> str | None:
        if key in self._order:
            raise DataError(f"conversation {key!r} appears twice in the input to near-duplicate detection",
                            hint="group turns into sessions before deduplicating")
        grams = shingles(text, self.config)
        self._order[key] = len(self._order)
        if not grams:  # a blank text is never compared, never grouped
            return None
        m = self._minhash(grams)
        matches: list[tuple[int, str, float]] = []
        cand: str
        for cand in self._lsh.query(m):
            sim = float(np.count_nonzero(self._values[cand] == m.hashvalues)) / self.config.num_perm
            if sim >= self.config.threshold:
                matches.append((self._order[cand], cand, sim))
        if matches:
            return min(matches)[1]  # the earliest representative it matches
        self._lsh.insert(key, m)
        self._values[key] = m.hashvalues.copy()
        return None
