"""The plain baseline every trained judge is measured against: TF-IDF of the judged exchange + logistic regression.

Trained on the same training rows as the judge, with the same class weights and the same prior (see
`uxbench.judge_train.prior`), and scored on the same held-out rows, so the paired difference of Avg-Acc
(`paired_bootstrap_diff`, stratified by gold class) and McNemar's test say whether the judge learnt more than
the words of the exchange. A judge that does not beat it is not worth its extra machinery.

Text: the end of the history (its last `HISTORY_CHARS` characters, the turns next to the reply), the question
and the reply, each behind a marker, as one document; character 1-3-grams within word boundaries
(`char_wb`, works for Chinese and English alike), sublinear term frequencies, terms seen in at least two rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from uxbench.errors import ConfigError

HISTORY_CHARS = 1500
MAX_FEATURES = 200_000
NAME = "TF-IDF + logistic regression"
Verdict = Literal["beats", "loses to", "shows no detectable difference from"]
"""What the card says: `The judge {verdict} the baseline.`"""


def document(history: str, query: str, response: str) -> str:
    """The one text the baseline reads of an exchange."""
    return f"[history] {history[-HISTORY_CHARS:]}\n[query] {query}\n[reply] {response}"


@dataclass
class Baseline:
    """A fitted TF-IDF vectoriser and logistic regression; `logit` includes the prior shift."""

    vectorizer: Any
    classifier: Any
    shift: float = 0.0
    """Added to the classifier's log-odds: logit(prior) - logit(the prior the fit stands for)."""

    def logit(self, docs: Sequence[str]) -> NDArray[np.float64]:
        x = self.vectorizer.transform(list(docs))
        return np.asarray(self.classifier.decision_function(x), dtype=np.float64) + self.shift

    def probability(self, docs: Sequence[str]) -> NDArray[np.float64]:
        return np.asarray(1.0 / (1.0 + np.exp(-self.logit(docs))), dtype=np.float64)


def fit_baseline(docs: Sequence[str], y: NDArray[np.bool_], *, sample_weight: NDArray[np.float64],
                 shift: float = 0.0, c: float = 1.0) -> Baseline:
    """Fit the baseline (`y` True = good) with the judge's sample weights."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise ConfigError("the baseline needs scikit-learn: pip install 'uxbench[judge]'") from None
    min_df = 2 if len(docs) >= 20 else 1
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True, min_df=min_df,
                                 max_features=MAX_FEATURES, lowercase=True)
    x = vectorizer.fit_transform(list(docs))
    classifier = LogisticRegression(C=c, solver="liblinear", max_iter=1000).fit(x, y, sample_weight=sample_weight)
    return Baseline(vectorizer, classifier, shift)


def verdict_of(paired: dict[str, Any]) -> Verdict:
    """`beats` when the CI of Avg-Acc(judge) - Avg-Acc(baseline) lies above 0, `loses to` below, else neither."""
    low, high = paired.get("ci_low"), paired.get("ci_high")
    if low is not None and low > 0:
        return "beats"
    if high is not None and high < 0:
        return "loses to"
    return "shows no detectable difference from"


def compare(golds: Sequence[str], judge_verdicts: Sequence[str | None], baseline_verdicts: Sequence[str], *,
            n_boot: int, seed: int) -> dict[str, Any]:
    """The paired comparison of the judge with the baseline on the same cases (a missing verdict is wrong)."""
    from uxbench.metrics.paired import mcnemar, paired_bootstrap_diff

    judge_ok = [v == g for v, g in zip(judge_verdicts, golds, strict=True)]
    base_ok = [v == g for v, g in zip(baseline_verdicts, golds, strict=True)]
    paired = paired_bootstrap_diff(judge_ok, base_ok, list(golds), n_boot=n_boot, seed=seed)
    m = mcnemar(judge_ok, base_ok)
    return {"against": NAME, "paired": paired, "mcnemar": m, "verdict": verdict_of(paired)}
