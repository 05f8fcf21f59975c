"""How easily simulated user turns are told from real ones: a character n-gram classifier, its cross-validated
AUC with a cluster-bootstrap interval (0.5 = indistinguishable, the MirrorBench / PPol check), beside a
length-only baseline.

TF-IDF over character 2-4-grams within word boundaries (script-agnostic: works for Chinese without a segmenter),
logistic regression, 5-fold cross-validation grouped by cluster: a real conversation, a simulated persona (its
trials are one cluster). Each distinct text (normalised: width, case, punctuation and spaces) is kept once per
side, and clusters that share a text across the sides are one group, so the same message can never be on both
sides of a split and be recognised rather than discriminated. The classes are balanced by sampling the larger
side down (seeded, by text digest). The out-of-fold scores give the AUC; the interval resamples clusters. The
length-only baseline is the same cross-validation with two features, the message's length in characters and in
words (log): what length alone gives away. Needs scikit-learn (`pip install 'uxbench[learn]'`)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from uxbench.metrics.auc import auc
from uxbench.sim.markers import normalize

MAX_PER_SIDE = 2000
FOLDS = 5
READING = ("0.5 = the classifier cannot tell simulated user messages from real ones, 1 = it always can. A high AUC "
           "says their wording differs (templates, length, language, topic: the two sides also talk to different "
           "assistants about different things); it does not say that the reactions differ (see the reaction "
           "figures), and a low one does not say the users behave alike. The length-only AUC shows how much "
           "message length alone gives away.")


def _sample(texts: Sequence[tuple[str, str]], n: int, seed: int) -> list[tuple[str, str]]:
    keyed = sorted(texts, key=lambda t: hashlib.sha256(f"{seed}\0{t[0]}\0{t[1]}".encode()).hexdigest())
    return keyed[:n]


def _distinct(texts: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each normalised text once (its first cluster in sorted order), empty texts dropped."""
    seen: set[str] = set()
    out = []
    for cluster, text in sorted(texts):
        key = normalize(text)
        if key and key not in seen:
            seen.add(key)
            out.append((cluster, text))
    return out


def _linked_groups(rows: list[tuple[str, str, int]]) -> list[str]:
    """Each row's fold group: its cluster, merged with every cluster of the other side that holds the same text
    (a copy of a conversation, a templated line a real user also wrote), so a text is never both trained on
    under one label and tested under the other."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for cluster, text, _ in rows:
        a, b = find(f"c:{cluster}"), find(f"t:{normalize(text)}")
        if a != b:
            parent[max(a, b)] = min(a, b)
    return [find(f"c:{cluster}") for cluster, _, _ in rows]


def discriminator_auc(real: Sequence[tuple[str, str]], sim: Sequence[tuple[str, str]], *, seed: int = 0,
                      n_boot: int = 1000, max_per_side: int = MAX_PER_SIDE) -> dict[str, Any]:
    """AUC of telling `sim` from `real` user turns, each given as (cluster id, text), and the length-only
    baseline's (`length_baseline`)."""
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n_real": 0, "n_sim": 0,
                           "method": "char 2-4-gram tf-idf + logistic regression, 5-fold cv grouped by cluster "
                                     "(conversation; persona on the simulated side), distinct texts",
                           "ideal": 0.5, "reading": READING}
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold
    except ImportError:
        out["note"] = "not computed: needs scikit-learn (pip install 'uxbench[learn]')"
        return out
    real_t, sim_t = _distinct(real), _distinct(sim)
    n = min(len(real_t), len(sim_t), max_per_side)
    groups_r = {c for c, _ in real_t}
    groups_s = {c for c, _ in sim_t}
    out.update(n_distinct_real=len(real_t), n_distinct_sim=len(sim_t))
    if n < 10 or len(groups_r) < 2 or len(groups_s) < 2:
        out["note"] = (f"not computed: too few distinct messages or clusters (real {len(real_t)} in {len(groups_r)}, "
                       f"simulated {len(sim_t)} in {len(groups_s)})")
        return out
    rows = [(c, t, 0) for c, t in _sample(real_t, n, seed)] + [(c, t, 1) for c, t in _sample(sim_t, n, seed)]
    groups = np.array(_linked_groups(rows))
    texts = [t for _, t, _ in rows]
    y = np.array([label for _, _, label in rows])
    folds = min(FOLDS, len(set(groups[y == 0])), len(set(groups[y == 1])))
    lengths = np.array([[math.log1p(len(t)), math.log1p(len(t.split()))] for t in texts])
    scores = np.zeros(len(rows))
    by_length = np.zeros(len(rows))
    for train, test in GroupKFold(n_splits=folds).split(texts, y, groups):
        if len(set(y[train])) < 2:
            continue
        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, sublinear_tf=True, max_features=200_000)
        x_train = vec.fit_transform([texts[i] for i in train])
        clf = LogisticRegression(max_iter=1000, C=1.0)
        clf.fit(x_train, y[train])
        scores[test] = clf.predict_proba(vec.transform([texts[i] for i in test]))[:, 1]
        short = LogisticRegression(max_iter=1000).fit(lengths[train], y[train])
        by_length[test] = short.predict_proba(lengths[test])[:, 1]
    result = auc(scores.tolist(), (y == 1).tolist(), clusters=groups.tolist(), n_boot=n_boot, seed=seed)
    baseline = auc(by_length.tolist(), (y == 1).tolist(), clusters=groups.tolist(), n_boot=n_boot, seed=seed)
    out.update(value=result["value"], ci_low=result["ci_low"], ci_high=result["ci_high"], n_real=n, n_sim=n,
               n_clusters=result.get("n_clusters"), folds=folds,
               length_baseline={k: baseline[k] for k in ("value", "ci_low", "ci_high")} | {
                   "method": "the same folds, logistic regression on log characters and log words"})
    return out
