"""How easily simulated user turns are told from real ones: a character n-gram classifier, its cross-validated
AUC with a cluster-bootstrap interval (0.5 = indistinguishable, the MirrorBench / PPol check).

TF-IDF over character 2-4-grams within word boundaries (script-agnostic: works for Chinese without a segmenter),
logistic regression, 5-fold cross-validation grouped by conversation (a conversation's turns are never on both
sides of a split), the classes balanced by sampling the larger side down (seeded, by text digest). The out-of-fold
scores give the AUC; the interval resamples conversations. Needs scikit-learn (`pip install 'uxbench[learn]'`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from uxbench.metrics.auc import auc

MAX_PER_SIDE = 2000
FOLDS = 5


def _sample(texts: Sequence[tuple[str, str]], n: int, seed: int) -> list[tuple[str, str]]:
    keyed = sorted(texts, key=lambda t: hashlib.sha256(f"{seed}\0{t[0]}\0{t[1]}".encode()).hexdigest())
    return keyed[:n]


def discriminator_auc(real: Sequence[tuple[str, str]], sim: Sequence[tuple[str, str]], *, seed: int = 0,
                      n_boot: int = 1000, max_per_side: int = MAX_PER_SIDE) -> dict[str, Any]:
    """AUC of telling `sim` from `real` user turns, each given as (conversation id, text)."""
    out: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "n_real": 0, "n_sim": 0,
                           "method": "char 2-4-gram tf-idf + logistic regression, 5-fold cv grouped by conversation",
                           "ideal": 0.5}
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold
    except ImportError:
        out["note"] = "not computed: needs scikit-learn (pip install 'uxbench[learn]')"
        return out
    real_t = [(c, t) for c, t in real if t.strip()]
    sim_t = [(c, t) for c, t in sim if t.strip()]
    n = min(len(real_t), len(sim_t), max_per_side)
    groups_r = {c for c, _ in real_t}
    groups_s = {c for c, _ in sim_t}
    if n < 10 or len(groups_r) < 2 or len(groups_s) < 2:
        out["note"] = f"not computed: too few turns or conversations (real {len(real_t)}, simulated {len(sim_t)})"
        return out
    # grouped by conversation id on both sides: a conversation present on both (a copy) stays in one fold
    rows = [(c, t, 0) for c, t in _sample(real_t, n, seed)] + [(c, t, 1) for c, t in _sample(sim_t, n, seed)]
    groups = np.array([g for g, _, _ in rows])
    texts = [t for _, t, _ in rows]
    y = np.array([label for _, _, label in rows])
    folds = min(FOLDS, len(set(groups[y == 0])), len(set(groups[y == 1])))
    scores = np.zeros(len(rows))
    for train, test in GroupKFold(n_splits=folds).split(texts, y, groups):
        if len(set(y[train])) < 2:
            continue
        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, sublinear_tf=True, max_features=200_000)
        x_train = vec.fit_transform([texts[i] for i in train])
        clf = LogisticRegression(max_iter=1000, C=1.0)
        clf.fit(x_train, y[train])
        scores[test] = clf.predict_proba(vec.transform([texts[i] for i in test]))[:, 1]
    result = auc(scores.tolist(), (y == 1).tolist(), clusters=groups.tolist(), n_boot=n_boot, seed=seed)
    out.update(value=result["value"], ci_low=result["ci_low"], ci_high=result["ci_high"], n_real=n, n_sim=n,
               n_conversations=result.get("n_clusters"), folds=folds)
    return out
