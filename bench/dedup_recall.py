"""Near-duplicate detection of the MinHash schemes against exact Jaccard similarity, on a mining run's texts.

    uxbench mine run POOL --out /tmp/mine --no-llm
    python bench/dedup_recall.py --work /tmp/mine/work [--seeds 1,2,3] [--threshold 0.8] [--json out.json]

The texts are what the dedup stage compares: `session_text` of each live conversation, read from the run's
04-signals shards (column ``session``) in batch order. The ground truth is every pair of texts whose shingle
sets (`shingles`) have exact Jaccard similarity >= the threshold, found exhaustively by prefix filtering
(shingles ordered rarest first; two sets with J >= t share a shingle among the first |x| - ceil(t|x|) + 1 of
each, so a sparse product of the prefixes lists a superset of the pairs, each then checked exactly).

For each scheme (``kperm``: 128 affine permutations of every shingle; ``oph``: one permutation hashing with
optimal densification) it reports: LSH candidate pairs (sharing a band), flagged pairs (a candidate whose
estimated Jaccard reaches the threshold: the pair test of `NearDuplicateIndex`), their precision and recall
against the truth; the index's own one-pass outcome (duplicates found, and against the same greedy pass run
with exact Jaccard: duplicates whose representative is exactly similar, duplicates missed); and the CPU
seconds of computing every signature (`signature`, shingling included), the least of three runs. With
``--seeds 1,2,...`` it repeats the comparison under other hash seeds and sums the counts over them.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow.parquet as pq
from scipy import sparse

from uxbench.mining.dedup import (
    DedupConfig,
    NearDuplicateIndex,
    lsh_bands,
    permutations,
    session_text,
    shingles,
    signature,
)
from uxbench.mining.types import Session

Pair = tuple[int, int]


def load_texts(work: Path, which: Literal["user", "first_user"]) -> list[str]:
    texts: list[str] = []
    for shard in sorted((work / "04-signals").glob("part-*.parquet")):
        for raw in pq.read_table(shard, columns=["session"]).column("session").to_pylist():
            texts.append(session_text(Session.model_validate_json(raw), which))
    return texts


def exact_pairs(sets: list[set[int]], threshold: float) -> dict[Pair, float]:
    """Every pair (i < j) of non-empty sets with Jaccard >= threshold, and its Jaccard (prefix filtering)."""
    df: dict[int, int] = {}
    for s in sets:
        for g in s:
            df[g] = df.get(g, 0) + 1
    rows: list[int] = []
    cols: list[int] = []
    for i, s in enumerate(sets):
        if not s:
            continue
        ordered = sorted(s, key=lambda g: (df[g], g))  # rarest first, one global order
        need = math.ceil(threshold * len(s) - 1e-9)  # the least overlap of a partner: J >= t gives o >= t|x|
        prefix = ordered[: len(s) - need + 1]
        rows += [i] * len(prefix)
        cols += prefix
    m = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(len(sets), max(df, default=0) + 1))
    shared = sparse.triu(m @ m.T, k=1).tocoo()
    found: dict[Pair, float] = {}
    for i, j in zip(shared.row.tolist(), shared.col.tolist(), strict=True):
        a, b = sets[i], sets[j]
        if min(len(a), len(b)) < threshold * max(len(a), len(b)) - 1e-9:
            continue
        inter = len(a & b)
        jac = inter / (len(a) + len(b) - inter)
        if jac >= threshold:
            found[(i, j)] = jac
    return found


def candidate_pairs(sigs: list[bytes | None], config: DedupConfig) -> set[Pair]:
    """Pairs sharing at least one LSH band (the index's candidates, over all texts, not only representatives)."""
    bands, rows = lsh_bands(config.threshold, config.num_perm)
    out: set[Pair] = set()
    for band in range(bands):
        buckets: dict[bytes, list[int]] = {}
        for i, sig in enumerate(sigs):
            if sig is not None:
                buckets.setdefault(sig[band * rows * 4 : (band + 1) * rows * 4], []).append(i)
        for members in buckets.values():
            out.update((a, b) for k, a in enumerate(members) for b in members[k + 1 :])
    return out


def estimate(a: bytes, b: bytes, num_perm: int) -> float:
    return float(np.count_nonzero(np.frombuffer(a, "<u4") == np.frombuffer(b, "<u4"))) / num_perm


def greedy(n: int, partners: dict[int, list[int]]) -> dict[int, int]:
    """The index's one pass with exact Jaccard: each text joins the earliest earlier representative it matches."""
    reps: set[int] = set()
    dup: dict[int, int] = {}
    for i in range(n):
        found = [p for p in partners.get(i, []) if p < i and p in reps]
        if found:
            dup[i] = min(found)
        else:
            reps.add(i)
    return dup


def ratio(num: int, den: int) -> str:
    return f"{num}/{den} = {num / den:.4f}" if den else f"{num}/0"


def evaluate(texts: list[str], config: DedupConfig, truth: dict[Pair, float],
             exact_dups: dict[int, int], exact_jac: Any, runs: int) -> dict[str, Any]:
    perms = permutations(config)
    seconds = []
    for _ in range(runs):
        start = time.process_time()
        sigs = [signature(t, config, perms) for t in texts]
        seconds.append(time.process_time() - start)
    cands = candidate_pairs(sigs, config)
    flagged = {p for p in cands if estimate(sigs[p[0]] or b"", sigs[p[1]] or b"", config.num_perm)
               >= config.threshold}
    index = NearDuplicateIndex(config)
    reps = [index.add_signature(str(i), sig) for i, sig in enumerate(sigs)]
    dups = {i: int(r) for i, r in enumerate(reps) if r is not None}
    # the search is exhaustive: a candidate it missed that is exactly similar would be a bug in it
    assert not [p for p in cands - truth.keys() if exact_jac(*p) >= config.threshold]
    missed = [j for p, j in truth.items() if p not in flagged]
    true_rep = sum(exact_jac(d, r) >= config.threshold for d, r in dups.items())
    return {
        "scheme": config.scheme, "seed": config.seed,
        "signature_cpu_s_min": round(min(seconds), 3),
        "signature_cpu_s_runs": [round(s, 3) for s in seconds],
        "candidate_pairs": len(cands),
        "candidate_recall": ratio(len(cands & truth.keys()), len(truth)),
        "flagged_pairs": len(flagged),
        "pair_precision": ratio(len(flagged & truth.keys()), len(flagged)),
        "pair_recall": ratio(len(flagged & truth.keys()), len(truth)),
        "index_duplicates": len(dups),
        "index_duplicates_exactly_similar_to_rep": ratio(true_rep, len(dups)),
        "index_duplicates_also_exact_duplicates": ratio(len(dups.keys() & exact_dups.keys()), len(dups)),
        "exact_duplicates_found_by_index": ratio(len(dups.keys() & exact_dups.keys()), len(exact_dups)),
        "same_representative_as_exact": ratio(sum(exact_dups.get(d) == r for d, r in dups.items()), len(dups)),
        "missed_pairs_by_jaccard": {f">={lo / 100:.2f}": sum(lo / 100 <= j < (lo + 5) / 100 or (lo == 95 and j == 1)
                                                           for j in missed) for lo in range(80, 100, 5)},
        "false_pairs_by_jaccard": {f">={lo / 10:.1f}": sum(lo / 10 <= exact_jac(*p) < (lo + 1) / 10
                                                          for p in flagged - truth.keys()) for lo in range(0, 8)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="A mine run's work directory (with 04-signals).")
    parser.add_argument("--threshold", type=float, default=DedupConfig().threshold)
    parser.add_argument("--num-perm", type=int, default=DedupConfig().num_perm)
    parser.add_argument("--seeds", default="1", help="Comma-separated seeds of the hashing (the first one timed "
                        "three times, the others once): the spread shows what one seed's figures owe to chance.")
    parser.add_argument("--json", type=Path, help="Also write the report here.")
    args = parser.parse_args()
    base = DedupConfig(threshold=args.threshold, num_perm=args.num_perm)
    texts = load_texts(args.work, base.text)
    ids: dict[str, int] = {}
    sets = [{ids.setdefault(g, len(ids)) for g in shingles(t, base)} for t in texts]
    start = time.process_time()
    truth = exact_pairs(sets, base.threshold)
    search_s = time.process_time() - start
    partners: dict[int, list[int]] = {}
    for i, j in truth:
        partners.setdefault(j, []).append(i)

    def exact_jac(i: int, j: int) -> float:
        a, b = sets[i], sets[j]
        return len(a & b) / len(a | b) if a or b else 0.0

    exact_dups = greedy(len(texts), partners)
    report = {
        "texts": len(texts), "non_empty": sum(bool(s) for s in sets), "shingles_distinct": len(ids),
        "threshold": base.threshold, "num_perm": base.num_perm, "bands": lsh_bands(base.threshold, base.num_perm),
        "exact_pairs": len(truth), "exact_search_cpu_s": round(search_s, 2),
        "exact_one_pass_duplicates": len(exact_dups),
        "schemes": [evaluate(texts, base.model_copy(update={"scheme": s, "seed": seed}), truth, exact_dups,
                             exact_jac, 3 if k == 0 else 1)
                    for k, seed in enumerate(int(x) for x in args.seeds.split(",")) for s in ("kperm", "oph")],
    }
    for scheme in ("kperm", "oph"):  # totals over the seeds: figures of one seed move by a few pairs
        runs = [r for r in report["schemes"] if r["scheme"] == scheme]
        report[f"{scheme}_over_seeds"] = {key: ratio(*(sum(int(r[key].split("/")[i].split(" ")[0]) for r in runs)
                                                        for i in (0, 1)))
                                           for key in ("pair_precision", "pair_recall",
                                                       "index_duplicates_exactly_similar_to_rep",
                                                       "exact_duplicates_found_by_index")}
        report[f"{scheme}_over_seeds"]["index_duplicates"] = [r["index_duplicates"] for r in runs]
    text = json.dumps(report, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
