"""Near-duplicate detection with MinHash LSH: Chinese and English, first occurrence kept, deterministic."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from datasketch import MinHash

from uxbench.errors import ConfigError, DataError
from uxbench.mining.dedup import (
    DedupConfig,
    NearDuplicateIndex,
    lsh_bands,
    normalise_for_shingles,
    permutations,
    session_text,
    shingle_hashes,
    shingles,
    signature,
)
from uxbench.mining.types import Session, Turn

ITEMS = [
    ("a", "How do I undo the last git commit?"),
    ("b", "what is the capital of France"),
    ("c", "how do i undo the last git commit"),
    ("d", "怎么把Excel里的两列合并成一列"),
    ("e", "How do I undo the last Git commit??"),
    ("f", "怎么把 Excel 里的两列合并成一列？"),
    ("g", "怎么把Excel里的两行合并成一行"),
    ("h", "What is the capital of Germany"),
    ("i", ""),
]


def test_shingles_by_script() -> None:
    assert normalise_for_shingles("  How, do   I?  ") == "how do i"
    assert normalise_for_shingles("怎么把 Excel 里的") == "怎么把excel里的"
    assert shingles("你好吗") == {"你好吗"}
    assert shingles("你好世界") == {"你好世", "好世界"}
    assert all(len(g) == 5 for g in shingles("hello world"))
    assert shingles("  ,. ") == set()


def test_shingle_hashes_are_the_shingles_hashed() -> None:
    """One 32-bit hash per distinct shingle (no collisions among a text's own shingles), stable across calls."""
    rng = random.Random(3)
    alphabet = "abcdefghij klmnop 你好世界的合并一列"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3000))) for _ in range(200)]
    texts += [text for _, text in ITEMS]
    for text in texts:
        hashes = shingle_hashes(text)
        assert len(hashes) == len(shingles(text))
        assert (hashes == shingle_hashes(text)).all() and (hashes < 2**32).all()
    assert set(shingle_hashes("abcdefg").tolist()) < set(shingle_hashes("xyabcdefgxy").tolist())  # same grams
    assert shingle_hashes("hello world").tolist() != shingle_hashes("hello worle").tolist()


def test_signature_is_the_librarys_minhash_of_the_shingle_hashes() -> None:
    """Computed in numpy, the ``kperm`` signature equals datasketch's affine32 MinHash of the same hashes."""
    kperm = DedupConfig(scheme="kperm")
    rng = random.Random(5)
    texts = ["".join(rng.choice("abc defgh 你好世界") for _ in range(rng.randint(1, 20_000 if i % 10 == 0 else 400)))
             for i in range(40)]
    for text in texts:
        m = MinHash(num_perm=128, seed=1, scheme="affine32", hashfunc=lambda value: value)
        m.update_batch(shingle_hashes(text).tolist())
        values = signature(text, kperm)
        assert values is not None
        assert np.frombuffer(values, dtype="<u4").tolist() == m.hashvalues.tolist()
    assert signature(" ,. ", kperm) is None


def find_near_duplicates(items: list[tuple[str, str]], config: DedupConfig | None = None) -> dict[str, str]:
    """Duplicate key -> its representative, one pass of the index (as the dedup stage runs it)."""
    index = NearDuplicateIndex(config)
    found = {key: index.add(key, text) for key, text in items}
    return {key: rep for key, rep in found.items() if rep is not None}


@pytest.mark.parametrize("scheme", ["oph", "kperm"])
def test_groups_keep_the_first_occurrence(scheme: Literal["oph", "kperm"]) -> None:
    assert find_near_duplicates(ITEMS, DedupConfig(scheme=scheme)) == {"c": "a", "e": "a", "f": "d"}


def test_threshold_is_configurable() -> None:
    loose = find_near_duplicates(ITEMS, DedupConfig(threshold=0.3))
    assert loose.get("g") == "d"  # 两列 -> 两行 is a near-duplicate at a low threshold
    strict = find_near_duplicates(ITEMS, DedupConfig(threshold=0.95))
    assert strict == {"c": "a", "e": "a", "f": "d"}  # identical after normalisation
    with pytest.raises(ConfigError, match="lower the threshold"):
        NearDuplicateIndex(DedupConfig(threshold=0.99, num_perm=32))


def test_deterministic_across_runs_and_independent_of_later_items() -> None:
    rng = random.Random(7)
    words = "apple banana cherry delta echo fox golf hotel india juliet kilo lima".split()
    items = []
    for i in range(300):
        base = " ".join(rng.choice(words) for _ in range(8))
        items.append((f"k{i}", base))
        if i % 10 == 0:
            items.append((f"k{i}-dup", base + "!"))
    first = find_near_duplicates(items)
    second = find_near_duplicates(items)
    assert first == second
    assert all(first.get(f"k{i}-dup") == f"k{i}" for i in range(0, 300, 10))
    prefix = find_near_duplicates(items[:100])
    assert {k: v for k, v in first.items() if k in dict(items[:100])} == prefix


def test_dedup_sessions_compares_user_text_and_rejects_repeated_ids() -> None:
    def conv(cid: str, *users: str) -> Session:
        turns = []
        for i, u in enumerate(users):
            turns.append(Turn(conversation_id=cid, turn_index=2 * i, role="user", content=u))
            turns.append(
                Turn(conversation_id=cid, turn_index=2 * i + 1, role="assistant", content=f"reply {cid}")
            )
        return Session(conversation_id=cid, turns=turns)

    batch = [
        conv("x", "你好", "帮我写一首关于秋天的诗"),
        conv("y", "你好", "帮我写一首关于秋天的诗。"),
        conv("z", "你好", "明天天气怎么样"),
    ]
    assert find_near_duplicates([(s.conversation_id, session_text(s)) for s in batch]) == {"y": "x"}
    first_only = [(s.conversation_id, session_text(s, "first_user")) for s in batch]
    assert find_near_duplicates(first_only, DedupConfig(text="first_user")) == {"y": "x", "z": "x"}
    index = NearDuplicateIndex()
    index.add("x", "text")
    with pytest.raises(DataError, match="appears twice"):
        index.add("x", "text")


def _library_index(pairs: list[tuple[str, bytes]], config: DedupConfig) -> list[str | None]:
    """The same one-pass grouping through datasketch's own MinHashLSH (what the index replaced)."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=config.threshold, num_perm=config.num_perm)
    kept: dict[str, np.ndarray] = {}
    order: dict[str, int] = {}
    out: list[str | None] = []
    for key, values in pairs:
        order[key] = len(order)
        hv = np.frombuffer(values, dtype="<u4")
        m = MinHash(num_perm=config.num_perm, seed=config.seed, hashvalues=hv, scheme="affine32")
        matches = [(order[c], c) for c in lsh.query(m)
                   if np.count_nonzero(kept[c] == hv) / config.num_perm >= config.threshold]
        if matches:
            out.append(min(matches)[1])
            continue
        lsh.insert(key, m)
        kept[key] = hv
        out.append(None)
    return out


@pytest.mark.parametrize("scheme", ["oph", "kperm"])
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8, 0.95])
def test_band_tables_group_as_the_librarys_lsh(threshold: float, scheme: Literal["oph", "kperm"]) -> None:
    """Signatures of texts with planted near-copies (edits of a few characters to half the text): the index's
    own band tables give the groupings datasketch's MinHashLSH gives (candidates near the threshold included)."""
    rng = random.Random(11)
    words = "the of a to in is how do undo git commit merge two columns excel 合并 两列 你好".split()
    bases = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) for _ in range(150)]
    texts = []
    for i in range(600):
        text = list(rng.choice(bases) if i % 2 else " ".join(rng.choice(words) for _ in range(rng.randint(3, 60))))
        for _ in range(rng.choice([0, 1, 3, len(text) // 20, len(text) // 8, len(text) // 3])):
            text[rng.randrange(len(text))] = rng.choice("abcxyz ")
        texts.append("".join(text))
    config = DedupConfig(threshold=threshold, scheme=scheme)
    pairs = [(f"k{i}", values) for i, text in enumerate(texts) if (values := signature(text, config)) is not None]
    index = NearDuplicateIndex(config)
    ours = [index.add_signature(key, values) for key, values in pairs]
    assert ours == _library_index(pairs, config)
    assert 5 <= sum(rep is not None for rep in ours) < len(pairs) / 2  # some grouped, not all


@pytest.mark.parametrize(("num_perm", "seed"), [(16, 1), (128, 1), (128, 7), (256, 123)])
def test_permutations_are_the_librarys(num_perm: int, seed: int) -> None:
    """Drawn without importing datasketch, the permutations are its affine32 ones, value for value."""
    a, b = permutations(DedupConfig(num_perm=num_perm, seed=seed))
    library_a, library_b = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    assert a.dtype == b.dtype == np.uint32 and a.shape == b.shape == (num_perm, 1)
    assert a.ravel().tolist() == library_a.tolist() and b.ravel().tolist() == library_b.tolist()


@pytest.mark.parametrize("num_perm", [16, 33, 128])
def test_bands_are_the_librarys_choice(num_perm: int) -> None:
    """Gauss-Legendre integrals of the banding's error choose the (b, r) that datasketch's MinHashLSH chooses with
    scipy's quad, at every threshold from 0.05 to 1.0 (a change of b or r would change every grouping)."""
    from datasketch import MinHashLSH

    for step in range(1, 21):
        threshold = step / 20
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm) if lsh_bands(threshold, num_perm)[0] >= 2 else None
        if lsh is not None:
            assert lsh_bands(threshold, num_perm) == (lsh.b, lsh.r), threshold
        else:
            with pytest.raises(ValueError, match="bands"):
                MinHashLSH(threshold=threshold, num_perm=num_perm)


def test_a_mining_run_does_not_import_scipy(tmp_path: Path) -> None:
    """datasketch imports scipy.integrate (most of a second at every run's start): the mining run needs neither."""
    log = tmp_path / "log.jsonl"
    log.write_text("".join(
        json.dumps({"conversation_id": f"c{i}", "turn_index": t, "role": "user" if t % 2 == 0 else "assistant",
                    "content": f"question {i} about git commits, take {t}"}) + "\n"
        for i in range(6) for t in range(4)), encoding="utf-8")
    script = ("import sys\nfrom uxbench.mining.pipeline import MineConfig, run_pipeline\n"
              f"run_pipeline(MineConfig(inputs=({str(log)!r},), out={str(tmp_path / 'out')!r}, llm=False, "
              "workers=1))\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'datasketch')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_ascii_normalisation_is_the_regex_one() -> None:
    """ASCII text takes a str.translate path; it must give what the general (regex) path gives."""
    import re

    punct = re.compile(r"[^\w\s]+|_+")
    rng = random.Random(3)
    alphabet = [chr(c) for c in range(128)] + ["ab", "  ", "\n\n", "x_y", "it's"] * 10
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert normalise_for_shingles(text) == " ".join(punct.sub(" ", text.casefold()).split())
