"""Near-duplicate conversations by their user text, with MinHash LSH (datasketch).

Text -> shingles: NFKC, casefold, punctuation dropped and whitespace collapsed; character 3-grams when the
text is mostly CJK (>= 30% of its characters), else character 5-grams (robust to one changed word in a
short English query, unlike word 3-grams). A shingle is hashed from its code points with numpy, all shingles of
a text at once (a polynomial over the n code points mod 2^64, mixed, its high 32 bits): per-shingle SHA-1 calls, the
library's default, cost 1 us each and most of the stage on real text. Each text gets a MinHash signature of
num_perm 128 values (fixed seed and hashing scheme, so runs are reproducible): by default one permutation
hashing with optimal densification (each shingle hashed once, not 128 times; on the pool's 9,967 texts over
8 seeds it keeps the 128-permutation MinHash's pair precision and recall within 0.3 points, at 0.6 of its CPU
time: `bench/dedup_recall.py`), or the 128-permutation one (``scheme="kperm"``). One pass inserts and queries
an LSH index, so the cost is linear in the number of conversations. An LSH candidate is confirmed only when
the MinHash estimate of the Jaccard similarity reaches the threshold. The first occurrence is kept; later
near-duplicates join its group (the earliest matching representative when several match).

The index is stateful by nature: run it in one process over the whole stream (it holds one MinHash per
kept conversation, about 1 KB each), not inside parallel map tasks. The signatures are not: the pipeline
computes them in the parallel signal stage (`signature`) and the index only compares (`add_signature`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from uxbench.errors import ConfigError, DataError
from uxbench.mining.types import Session

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_PUNCT = re.compile(r"[^\w\s]+|_+")
_CJK_SPACE = re.compile(r"(?<=[\u3000-\u9fff]) | (?=[\u3000-\u9fff])")
_SCHEME = "affine32"
SHINGLE_HASH = "poly64-splitmix-hi32"
"""How shingles are hashed (`shingle_hashes`): part of the dedup checkpoints' key, as the results depend on it."""


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
    scheme: Literal["oph", "kperm"] = "oph"
    """How the signature is drawn (`signature`): one permutation hashing with optimal densification (each
    shingle hashed once), or ``num_perm`` permutations of every shingle (datasketch's affine32 MinHash)."""


_ASCII_PUNCT = str.maketrans({chr(c): " " for c in range(128)
                              if (not chr(c).isalnum() and not chr(c).isspace()) or chr(c) == "_"})
"""`_PUNCT` on ASCII text, one character at a time (str.translate's ASCII path is ~10x the regex's speed)."""


def normalise_for_shingles(text: str) -> str:
    """NFKC, casefold, punctuation dropped, whitespace collapsed (and dropped next to CJK characters)."""
    if text.isascii():  # NFKC already; each punctuation character becomes a space, and split() joins runs
        return " ".join(text.lower().translate(_ASCII_PUNCT).split())
    text = unicodedata.normalize("NFKC", text)
    out = " ".join(_PUNCT.sub(" ", text.casefold()).split())  # split(): the white space that \s matches
    return _CJK_SPACE.sub("", out) if not out.isascii() else out


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


_POLY = np.uint64(0x9E3779B97F4A7C15)  # odd, bits spread over the word: a polynomial hash without structure
_MIX = (np.uint64(30), np.uint64(0xBF58476D1CE4E5B9), np.uint64(27), np.uint64(0x94D049BB133111EB), np.uint64(31))
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF))


def shingle_hashes(text: str, config: DedupConfig | None = None, distinct: bool = True) -> np.ndarray:
    """The distinct 32-bit hashes of `shingles(text)` (same n-grams, same script rule), computed in numpy;
    ``distinct=False`` keeps repeats (a minimum does not need them removed)."""
    cfg = config or DedupConfig()
    norm = normalise_for_shingles(text)
    if not norm:
        return np.empty(0, dtype=np.uint64)
    points = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    # an ASCII text has no CJK character and its spaces are counted by str.count: no pass over `points`
    cjk = 0 if norm.isascii() else sum(int(np.count_nonzero((points >= lo) & (points <= hi)))
                                       for lo, hi in _CJK_RANGES)
    letters = len(points) - norm.count(" ")
    n = cfg.cjk_ngram if cjk >= 0.3 * letters else cfg.latin_ngram
    n = min(n, len(points))  # shorter than n: the whole text is the one shingle
    width = len(points) - n + 1
    hashes = points[:width].copy()
    # in place, one temporary for the mix: the same values with a third of the array allocations
    for k in range(1, n):  # uint64 arithmetic wraps: the polynomial mod 2^64
        hashes *= _POLY
        hashes += points[k : k + width]
    _mix64_hi32(hashes)
    return np.unique(hashes) if distinct else hashes


Permutations = tuple[np.ndarray, np.ndarray]
"""The affine permutations h -> a * h + b mod 2^32 as (num_perm x 1) uint32 columns a and b."""


@lru_cache(maxsize=4)
def permutations(config: DedupConfig) -> Permutations:
    """datasketch's affine32 permutations for the config's (num_perm, seed), drawn as `MinHash` draws them (odd
    multipliers, then offsets, from one ``RandomState(seed)``; equal to the library's, tested). Not imported from
    the library: datasketch imports scipy.integrate, about 0.6-0.9 s of CPU on the driver at a run's start."""
    gen = np.random.RandomState(config.seed)
    a = gen.randint(0, 1 << 31, config.num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, config.num_perm, dtype=np.uint32)
    return a[:, None], b[:, None]


@lru_cache(maxsize=16)
def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """datasketch's `MinHashLSH` choice of b bands of r values (equal weights): the (b, r), b * r <= num_perm, whose
    false positive and false negative probabilities (integrals over the Jaccard similarity below and above the
    threshold) sum least, the first such in the library's order on a tie. The library integrates with
    scipy's ``quad``; the integrands are polynomials of degree b * r <= num_perm, which Gauss-Legendre with
    num_perm // 2 + 1 nodes integrates exactly, all pairs at once (the same choice as the library's, tested)."""
    pairs = np.array([(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)], dtype=float)
    nodes, weights = np.polynomial.legendre.leggauss(num_perm // 2 + 1)

    def integral(low: float, high: float, collides: bool) -> np.ndarray:
        s = (high - low) / 2 * nodes + (high + low) / 2  # the nodes mapped onto [low, high]
        p = 1 - (1 - s[None, :] ** pairs[:, 1:2]) ** pairs[:, 0:1]  # probability that two sets share a band
        return np.asarray(((p if collides else 1 - p) @ weights) * (high - low) / 2)

    error = integral(0.0, threshold, True) * 0.5 + integral(threshold, 1.0, False) * 0.5
    b, r = pairs[int(np.argmin(error))]
    return int(b), int(r)


_ROWS = 8192  # shingles permuted at once: bounds the (num_perm x rows) temporary to 4 MiB at 128 permutations
_MAX32 = np.uint32(0xFFFFFFFF)


@lru_cache(maxsize=4)
def densification(config: DedupConfig) -> np.ndarray:
    """The fixed (text-independent) probe order of every bin for `signature`'s one permutation hashing: row j, a
    random permutation of the bins (``RandomState(seed)``), is the order in which an empty bin j looks for a
    non-empty bin to copy. Two texts with bin j empty follow the same order, so they copy the same bin when the
    first bin non-empty in either is non-empty in both: the probability that position j agrees stays the Jaccard
    similarity (Shrivastava 2017, "optimal densification")."""
    gen = np.random.RandomState(config.seed)
    return np.stack([gen.permutation(config.num_perm) for _ in range(config.num_perm)]).astype(np.intp)


def _fmix32(hashes: np.ndarray) -> None:
    """MurmurHash3's 32-bit finaliser, in place: the shingle hashes made uniform before they are permuted."""
    hashes ^= hashes >> np.uint32(16)
    hashes *= np.uint32(0x85EBCA6B)
    hashes ^= hashes >> np.uint32(13)
    hashes *= np.uint32(0xC2B2AE35)
    hashes ^= hashes >> np.uint32(16)


def _kperm(hashes: np.ndarray, perms: Permutations, num_perm: int) -> np.ndarray:
    """The minimum of each affine permutation over all hashes (datasketch's affine32 MinHash)."""
    a, b = perms
    values = np.full(num_perm, _MAX32, dtype=np.uint32)
    for start in range(0, len(hashes), _ROWS):
        # one row per permutation, so each minimum runs along contiguous memory (4x the speed of a
        # column-wise minimum); uint32 arithmetic wraps: mod 2^32
        block = a * hashes[None, start : start + _ROWS]
        block += b
        np.minimum(values, block.min(axis=1), out=values)
    return values


def _oph(hashes: np.ndarray, probes: np.ndarray, num_perm: int) -> np.ndarray:
    """One permutation hashing: the hash range cut into ``num_perm`` equal bins, the minimum hash in each bin, an
    empty bin filled with the value of the first non-empty bin in its `densification` row. The bins' ranges are
    disjoint, so a copied value never equals another text's own value for that bin."""
    width = np.uint32(-(-(1 << 32) // num_perm))  # ceil: the last bin may be narrower, none is past num_perm
    bins = hashes // width
    values = np.full(num_perm, _MAX32, dtype=np.uint32)
    np.minimum.at(values, bins, hashes)
    filled = values != _MAX32
    if not filled[-1] and bool((hashes == _MAX32).any()):  # the one hash that equals the empty marker
        filled[-1] = True
    if not filled.all():
        empty = np.flatnonzero(~filled)
        order = probes[empty]  # one row of bins per empty bin, argmax: its first non-empty one
        values[empty] = values[order[np.arange(len(empty)), filled[order].argmax(axis=1)]]
    return values


def signature(text: str, config: DedupConfig | None = None, perms: Permutations | None = None) -> bytes | None:
    """The text's MinHash values (``num_perm`` little-endian uint32), None for a text with no shingles.

    The shingle hashes, MurmurHash3's 32-bit finaliser, then by the config's scheme: ``oph`` (`_oph`, one
    permutation hashing, each shingle hashed once: 10.5 M shingle hashes over the pool instead of 128 times
    that), or ``kperm``, the datasketch affine32 scheme (the minimum per affine permutation), computed in
    numpy without the library's per-value Python calls. Computed where the text is (the parallel signal
    stage), so the one serial index only compares. ``perms``: `permutations(config)`, computed once by the
    caller (``kperm`` only)."""
    cfg = config or DedupConfig()
    hashes = shingle_hashes(text, cfg, distinct=False).astype(np.uint32)
    if not len(hashes):
        return None
    _fmix32(hashes)
    a, b = perms if perms is not None else permutations(cfg)
    if cfg.scheme == "oph":  # the one permutation: the seed's first affine one (the others are not used)
        hashes *= a[0]
        hashes += b[0]
        values = _oph(hashes, densification(cfg), cfg.num_perm)
    else:
        values = _kperm(hashes, (a, b), cfg.num_perm)
    return values.astype("<u4").tobytes()


def signatures(texts: Sequence[str], config: DedupConfig | None = None,
               perms: Permutations | None = None) -> list[bytes | None]:
    """`signature` of each text (the same bytes; tested), for a batch at once: the texts' shingles are hashed, mixed
    and binned in a few numpy calls over all of them (grouped by n-gram size), not ~30 calls a text, whose
    overhead was most of the MinHash time of a conversation. ``kperm`` goes text by text."""
    cfg = config or DedupConfig()
    if cfg.scheme != "oph":
        return [signature(text, cfg, perms) for text in texts]
    norms = [normalise_for_shingles(text) for text in texts]
    groups: dict[int, list[int]] = {}  # n-gram size (the length of a text shorter than n) -> text numbers
    for number, norm in enumerate(norms):
        if norm:
            groups.setdefault(min(_ngram(norm, cfg), len(norm)), []).append(number)
    out: list[bytes | None] = [None] * len(texts)
    a, b = perms if perms is not None else permutations(cfg)
    probes = densification(cfg)
    for n, numbers in groups.items():
        points = np.frombuffer("".join([norms[i] for i in numbers]).encode("utf-32-le"), dtype=np.uint32)
        points = points.astype(np.uint64)
        lengths = np.array([len(norms[i]) for i in numbers], dtype=np.intp)
        widths = lengths - (n - 1)
        span = len(points) - n + 1  # every window of the joined texts; those across two texts are dropped
        hashes = points[:span].copy()
        for k in range(1, n):
            hashes *= _POLY
            hashes += points[k : k + span]
        starts = np.cumsum(lengths) - lengths
        firsts = np.cumsum(widths) - widths
        hashes = hashes[np.arange(int(widths.sum())) + np.repeat(starts - firsts, widths)]
        _mix64_hi32(hashes)
        small = hashes.astype(np.uint32)
        _fmix32(small)
        small *= a[0]
        small += b[0]
        values = _oph_rows(small, np.repeat(np.arange(len(numbers)), widths), len(numbers), probes, cfg.num_perm)
        for row, number in zip(values.astype("<u4"), numbers, strict=True):
            out[number] = row.tobytes()
    return out


def _ngram(norm: str, cfg: DedupConfig) -> int:
    """`shingle_hashes`' choice of n for a normalised text: by its share of CJK characters."""
    cjk = 0
    if not norm.isascii():
        points = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
        cjk = sum(int(np.count_nonzero((points >= lo) & (points <= hi))) for lo, hi in _CJK_RANGES)
    return cfg.cjk_ngram if cjk >= 0.3 * (len(norm) - norm.count(" ")) else cfg.latin_ngram


def _mix64_hi32(hashes: np.ndarray) -> None:
    """`shingle_hashes`' mix, in place: splitmix64's finaliser, then the high 32 bits."""
    s1, m1, s2, m2, s3 = _MIX
    shifted = np.empty_like(hashes)
    for shift, multiplier in ((s1, m1), (s2, m2)):
        np.right_shift(hashes, shift, out=shifted)
        hashes ^= shifted
        hashes *= multiplier
    np.right_shift(hashes, s3, out=shifted)
    hashes ^= shifted
    hashes >>= np.uint64(32)


def _oph_rows(hashes: np.ndarray, rows: np.ndarray, count: int, probes: np.ndarray, num_perm: int) -> np.ndarray:
    """`_oph` of ``count`` texts at once (``rows``: the text of each hash): one row of values per text."""
    width = np.uint32(-(-(1 << 32) // num_perm))
    values = np.full((count, num_perm), _MAX32, dtype=np.uint32)
    keys = rows * num_perm
    keys += hashes // width
    np.minimum.at(values.reshape(-1), keys, hashes)  # flat: ufunc.at's fast path
    filled = values != _MAX32
    at_max = hashes == _MAX32
    if at_max.any():  # the one hash that equals the empty marker (its bin is the last)
        filled[rows[at_max], -1] = True
    texts, bins = np.nonzero(~filled)
    source = np.empty_like(bins)  # the bin each empty one copies: the first filled one in its probe order
    pending, step = np.arange(len(bins)), 0
    while len(pending):  # one probe at a time for the empty bins still pending: most find one in the first few
        probe = probes[bins[pending], step]
        found = filled[texts[pending], probe]
        source[pending[found]] = probe[found]
        pending, step = pending[~found], step + 1
    values[texts, bins] = values[texts, source]
    return values


def session_text(session: Session, which: Literal["user", "first_user"] = "user") -> str:
    users = [t.content for t in session.turns if t.role == "user"]
    if which == "first_user":
        return users[0] if users else ""
    return "\n".join(users)


class NearDuplicateIndex:
    """Streaming index: `add(key, text)` (or `add_signature` with the text's `signature`) returns the
    representative's key when the text is a near-duplicate of an earlier text, else None (and the text
    becomes a representative).

    The banding is datasketch's `MinHashLSH` (its choice of b bands of r values for the threshold and
    num_perm, `lsh_bands`); the band tables are plain dicts keyed by the band's bytes, which finds the same candidates
    (two bands collide exactly when their values are equal) without the library's per-band numpy calls:
    the serial index over the pool's 9,967 conversations took 1.6 s through the library."""

    def __init__(self, config: DedupConfig | None = None) -> None:
        self.config = config or DedupConfig()
        cfg = self.config
        bands, rows = lsh_bands(cfg.threshold, cfg.num_perm)
        if bands < 2:  # what the library refuses: too few bands to find candidates
            raise ConfigError(
                f"near-duplicate threshold {cfg.threshold} with num_perm {cfg.num_perm} is not usable: "
                f"it gives {bands} LSH band of {rows} values (at least 2 bands are needed); "
                "lower the threshold or raise num_perm"
            )
        width = np.dtype("<u4").itemsize
        self._bands = [(i * rows * width, (i + 1) * rows * width) for i in range(bands)]
        self._tables: list[dict[bytes, list[str]]] = [{} for _ in self._bands]
        self._order: dict[str, int] = {}
        self._values: dict[str, np.ndarray] = {}

    def add(self, key: str, text: str) -> str | None:
        return self.add_signature(key, signature(text, self.config))

    def add_signature(self, key: str, values: bytes | None) -> str | None:
        """`add` for a text whose `signature` (under this index's config) is ``values``."""
        if key in self._order:
            raise DataError(f"conversation {key!r} appears twice in the input to near-duplicate detection",
                            hint="group turns into sessions before deduplicating")
        self._order[key] = len(self._order)
        if values is None:  # a blank text is never compared, never grouped
            return None
        cfg = self.config
        hashvalues = np.frombuffer(values, dtype="<u4")
        if len(hashvalues) != cfg.num_perm:
            raise DataError(f"conversation {key!r} has a MinHash of {len(hashvalues)} values, not {cfg.num_perm}",
                            hint="its signal stage ran under another dedup config: rerun with --fresh")
        bands = [values[start:end] for start, end in self._bands]
        candidates: set[str] = set()
        for table, band in zip(self._tables, bands, strict=True):
            found = table.get(band)
            if found:
                candidates.update(found)
        matches: list[tuple[int, str]] = []
        for cand in candidates:
            sim = float(np.count_nonzero(self._values[cand] == hashvalues)) / cfg.num_perm
            if sim >= cfg.threshold:
                matches.append((self._order[cand], cand))
        if matches:
            return min(matches)[1]  # the earliest representative it matches
        for table, band in zip(self._tables, bands, strict=True):
            table.setdefault(band, []).append(key)
        self._values[key] = hashvalues
        return None
