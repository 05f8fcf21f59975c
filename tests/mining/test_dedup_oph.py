"""One permutation hashing with optimal densification (`DedupConfig.scheme` "oph", the default signature)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Literal

import numpy as np
import pytest

from uxbench.mining.dedup import (
    DedupConfig,
    _oph,
    densification,
    permutations,
    shingle_hashes,
    shingles,
    signature,
)
from uxbench.mining.pipeline.config import MineConfig
from uxbench.mining.pipeline.registry import RunContext, dedup_settings, get
from uxbench.mining.pipeline.store import stage_key

OPH = DedupConfig(scheme="oph")
KPERM = DedupConfig(scheme="kperm")
WORDS = ("the of a to in is how do undo git commit merge two columns excel table row value file error python "
         "install server data query index list sort print loop array string number").split()


def values_of(text: str, config: DedupConfig = OPH) -> np.ndarray:
    sig = signature(text, config)
    assert sig is not None
    return np.frombuffer(sig, dtype="<u4")


def reference_oph(text: str, config: DedupConfig) -> list[int]:
    """The scheme written plainly, one shingle and one bin at a time: the hashes as `signature` permutes them
    (fmix32, the seed's first affine map), the minimum per equal slice of the 32-bit range, then each empty
    bin takes the value of the first non-empty bin along its row of `densification`."""
    a, b = (int(x[0, 0]) for x in permutations(config))
    k = config.num_perm
    width = -(-(1 << 32) // k)
    lowest: dict[int, int] = {}
    for h in shingle_hashes(text, config).tolist():
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & 0xFFFFFFFF
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & 0xFFFFFFFF
        h ^= h >> 16
        h = (a * h + b) & 0xFFFFFFFF
        lowest[h // width] = min(lowest.get(h // width, h), h)
    probes = densification(config).tolist()
    return [lowest[j] if j in lowest else lowest[next(p for p in probes[j] if p in lowest)] for j in range(k)]


def test_signature_is_the_plain_scheme() -> None:
    """The vectorised bins and densification equal the plain loop, for short texts (most bins empty), long ones
    (none empty), Chinese, and num_perm that does not divide 2^32."""
    rng = random.Random(2)
    texts = ["a", "abcdef", "hello world", "你好", "怎么把Excel里的两列合并成一列"]
    texts += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 400))) for _ in range(40)]
    for config in (OPH, DedupConfig(num_perm=33, seed=5), DedupConfig(num_perm=256, seed=9)):
        for text in texts:
            assert values_of(text, config).tolist() == reference_oph(text, config), text


def test_deterministic_and_equal_for_equal_texts() -> None:
    text = "How do I undo the last git commit? I pushed it already."
    assert signature(text) == signature(text) == signature(text, DedupConfig())
    assert signature("HOW do i undo the last git commit ... i pushed it already") == signature(text)
    assert signature(text) != signature(text.replace("undo", "redo"))
    assert signature(text, DedupConfig(seed=2)) != signature(text)  # the seed draws the permutation
    assert len(values_of(text)) == OPH.num_perm


def test_empty_text_has_no_signature() -> None:
    for text in ("", "   ", " ,. ?! ", "\n\n"):
        assert signature(text) is None and signature(text, KPERM) is None


def test_densification_fills_every_bin_of_short_texts() -> None:
    """Fewer shingles than bins: every bin holds the minimum of some non-empty bin (its own or the one its probe
    row reaches), so the signature has num_perm values drawn from the text's own hashes."""
    width = -(-(1 << 32) // OPH.num_perm)
    for text in ("a", "abcde", "abcdef", "hello world", "你好世界", "undo git commit"):
        values = values_of(text)
        own = {v for j, v in enumerate(values.tolist()) if v // width == j}
        assert own and set(values.tolist()) == own  # copies only of filled bins, no marker left
        assert len(own) <= len(shingles(text))
    assert len(set(values_of("a").tolist())) == 1  # one shingle: 128 copies of it


def test_a_hash_equal_to_the_empty_marker_is_a_value() -> None:
    """0xFFFFFFFF is the empty marker of the last bin, and a possible hash: a bin that holds it is not empty."""
    probes = densification(OPH)
    alone = _oph(np.array([0xFFFFFFFF], dtype=np.uint32), probes, OPH.num_perm)
    assert (alone == 0xFFFFFFFF).all()
    both = _oph(np.array([5, 0xFFFFFFFF], dtype=np.uint32), probes, OPH.num_perm)
    assert both[0] == 5 and both[-1] == 0xFFFFFFFF and set(both.tolist()) == {5, 0xFFFFFFFF}


def _pair(rng: random.Random, n_words: int, keep: float) -> tuple[str, str]:
    """A text of random words and a copy whose last (1 - keep) of the words are replaced."""
    words = [rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(n_words)]
    cut = int(n_words * keep)
    other = words[:cut] + [rng.choice(WORDS) + str(rng.randint(100, 999)) for _ in range(n_words - cut)]
    return " ".join(words), " ".join(other)


@pytest.mark.parametrize(("n_words", "tolerance"), [(8, 0.06), (40, 0.04), (400, 0.04)])
def test_estimated_jaccard_follows_the_exact_one(n_words: int, tolerance: float) -> None:
    """On written pairs of known overlap, from a few shingles (most bins densified) to many: the fraction of equal
    values has no bias (mean error over 60 pairs) and errs no more than the 128-permutation MinHash does."""
    rng = random.Random(n_words)
    errors: dict[str, list[float]] = {"oph": [], "kperm": []}
    for i in range(60):
        a, b = _pair(rng, n_words, keep=(0.3, 0.6, 0.8, 0.9, 1.0)[i % 5])
        sa, sb = shingles(a), shingles(b)
        exact = len(sa & sb) / len(sa | sb)
        for config in (OPH, KPERM):
            est = float(np.count_nonzero(values_of(a, config) == values_of(b, config))) / config.num_perm
            errors[config.scheme].append(est - exact)
    oph, kperm = np.array(errors["oph"]), np.array(errors["kperm"])
    assert abs(oph.mean()) < tolerance / 2, oph.mean()  # no bias
    assert np.abs(oph).mean() < tolerance, np.abs(oph).mean()
    assert np.abs(oph).mean() < 1.5 * np.abs(kperm).mean() + 0.01


@pytest.mark.parametrize("scheme", ["oph", "kperm"])
def test_the_scheme_is_in_the_stage_keys(tmp_path: Path, scheme: Literal["oph", "kperm"]) -> None:
    """Signals (which compute the signatures) and dedup checkpoints of one scheme are not reused by the other."""
    def keys(config: DedupConfig) -> tuple[str, str]:
        mine = MineConfig(inputs=(str(tmp_path / "log.jsonl"),), out=str(tmp_path / "out"), llm=False,
                          dedup=config)
        ctx = RunContext(config=mine, out=tmp_path, work=tmp_path, inputs=[], salt=b"s", n_buckets=1,
                         say=lambda _: None)
        return (stage_key("signals", get("signals").settings(ctx)), stage_key("dedup", dedup_settings(ctx)))

    other = "kperm" if scheme == "oph" else "oph"
    mine, theirs = keys(DedupConfig(scheme=scheme)), keys(DedupConfig(scheme=other))
    assert mine[0] != theirs[0] and mine[1] != theirs[1]
