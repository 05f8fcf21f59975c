"""`signatures`, a batch's MinHash signatures at once: the same bytes as `signature` text by text."""

from __future__ import annotations

import random

from uxbench.mining.dedup import DedupConfig, permutations, signature, signatures


def _texts() -> list[str]:
    rng = random.Random(7)
    words = ["install", "python", "error", "list", "sort", "你好", "怎么", "安装", "数据", "ok", "_", "!!", "é"]
    texts = ["", " ", "!!!", "a", "ab", "abcd", "abcde", "你好", "你好吗", "中文中文 and english", "x" * 3]
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) for _ in range(200)]
    texts += ["".join(rng.choice("ab") for _ in range(rng.randint(5, 40))) for _ in range(50)]  # few shingles
    return texts


def test_signatures_equal_signature_per_text() -> None:
    texts = _texts()
    for config in (DedupConfig(), DedupConfig(num_perm=16, seed=3, latin_ngram=4), DedupConfig(scheme="kperm")):
        perms = permutations(config)
        assert signatures(texts, config, perms) == [signature(text, config, perms) for text in texts]
    assert signatures([]) == []
    assert signatures(["", "   "]) == [None, None]
