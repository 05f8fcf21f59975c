"""A learned follow-up classifier (optional; the rules stay the default): is the user dissatisfied with the
reply, judging by their next message?

Features: TF-IDF of character n-grams (2-4, within words) of the follow-up and, separately, of the question
before the reply; the rules' own signals on the same triple (`analyse_followup`: each detector's score when it
gives one, else its flag, and the similarity); whether the reply held code; the follow-up's length. Model:
logistic regression (scikit-learn, the `learn` extra), classes weighted by their frequency, C = 1, decision
threshold 0.5 unless the training chose another: nothing is tuned on the items it is measured on.

Saved as JSON (vocabularies, IDF weights, coefficients), never as a pickle, so loading a model directory runs
no code from it; `load` checks the format version.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from uxbench.data import user_files
from uxbench.errors import ConfigError, DataError
from uxbench.mining.signals.config import DEFAULT_CONFIG, SignalConfig
from uxbench.mining.signals.followup import analyse_followup

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

FORMAT = "uxbench-learned-followup"
FORMAT_VERSION = 1
MODEL_FILE = "model.json"
RULE_SIGNALS = ("complaint", "dismiss", "repeat", "rephrase", "continuation", "topic_change", "praise", "builds_on")
NGRAMS = (2, 4)
INSTALL_HINT = "the learned classifier needs scikit-learn: pip install 'uxbench[learn]'"


@dataclass(frozen=True)
class Triple:
    """The question, the reply, and the user's next message."""

    prev_user: str | None
    assistant: str
    next_user: str


def _sklearn() -> None:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None


def rule_features(t: Triple, config: SignalConfig = DEFAULT_CONFIG) -> list[float]:
    """The rules' view of one follow-up: per detector its score (its flag when it has no score), the
    similarity to the question, code in the reply, log length of the follow-up."""
    f = analyse_followup(t.prev_user, t.assistant, t.next_user, config)
    out = []
    for name in RULE_SIGNALS:
        hit = getattr(f, name)
        score = getattr(hit, "score", None)
        out.append(float(score) if isinstance(score, (int, float)) else float(bool(hit.fired)))
    out.append(float(f.similarity or 0.0))
    out.append(float("```" in t.assistant or "\n    " in t.assistant))
    out.append(math.log1p(len(t.next_user)) / 8)
    return out


RULE_FEATURE_NAMES = (*RULE_SIGNALS, "similarity", "reply_has_code", "log_length")


def _vectorizer(vocabulary: dict[str, int] | None = None) -> TfidfVectorizer:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer="char_wb", ngram_range=NGRAMS, lowercase=True, sublinear_tf=True,
                           min_df=1 if vocabulary else 2, vocabulary=vocabulary)


class FollowupClassifier:
    """Character n-grams + rule features -> P(dissatisfied)."""

    def __init__(self, next_vec: TfidfVectorizer, prev_vec: TfidfVectorizer, model: LogisticRegression,
                 threshold: float = 0.5, config: SignalConfig = DEFAULT_CONFIG, info: dict[str, Any] | None = None
                 ) -> None:
        self.next_vec, self.prev_vec, self.model = next_vec, prev_vec, model
        self.threshold, self.config, self.info = threshold, config, info or {}

    @classmethod
    def fit(cls, triples: Sequence[Triple], gold: Sequence[bool], *, config: SignalConfig = DEFAULT_CONFIG,
            threshold: float = 0.5, seed: int = 0) -> FollowupClassifier:
        _sklearn()
        from sklearn.linear_model import LogisticRegression

        if len(set(gold)) < 2:
            raise ConfigError("training needs dissatisfied and not dissatisfied follow-ups; the labels hold one kind")
        next_vec, prev_vec = _vectorizer(), _vectorizer()
        next_vec.fit([t.next_user for t in triples])
        prev_vec.fit([t.prev_user or "" for t in triples])
        clf = cls(next_vec, prev_vec, LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000,
                                                         random_state=seed), threshold, config)
        clf.model.fit(clf._matrix(triples), np.asarray(gold, dtype=int))
        return clf

    def _matrix(self, triples: Sequence[Triple]) -> csr_matrix:
        from scipy.sparse import csr_matrix, hstack

        rules = csr_matrix(np.asarray([rule_features(t, self.config) for t in triples], dtype=float))
        return hstack([self.next_vec.transform([t.next_user for t in triples]),
                       self.prev_vec.transform([t.prev_user or "" for t in triples]), rules]).tocsr()

    def predict_proba(self, triples: Sequence[Triple]) -> list[float]:
        if not triples:
            return []
        return [float(p) for p in self.model.predict_proba(self._matrix(triples))[:, 1]]

    def top_features(self, k: int = 15) -> list[tuple[str, float]]:
        """The k features with the largest weights towards `dissatisfied` (to read what it learned)."""
        names = ([f"next:{g}" for g in self.next_vec.get_feature_names_out()]
                 + [f"prev:{g}" for g in self.prev_vec.get_feature_names_out()]
                 + [f"rule:{n}" for n in RULE_FEATURE_NAMES])
        coef = self.model.coef_[0]
        order = np.argsort(-coef)[:k]
        return [(names[i], float(coef[i])) for i in order]

    # -- JSON, no pickle -------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        def vec(v: TfidfVectorizer) -> dict[str, Any]:
            return {"vocabulary": {g: int(i) for g, i in v.vocabulary_.items()}, "idf": v.idf_.tolist()}

        return {
            "format": FORMAT, "version": FORMAT_VERSION, "ngrams": list(NGRAMS), "threshold": self.threshold,
            "signal_config": self.config.model_dump(mode="json"), "rule_features": list(RULE_FEATURE_NAMES),
            "next": vec(self.next_vec), "prev": vec(self.prev_vec),
            "coef": self.model.coef_[0].tolist(), "intercept": float(self.model.intercept_[0]), "info": self.info,
        }

    def save(self, directory: Path) -> Path:
        from uxbench.fileio import atomic_write_bytes

        directory.mkdir(parents=True, exist_ok=True)
        path = directory / MODEL_FILE
        atomic_write_bytes(path, orjson.dumps(self.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
        return path

    @classmethod
    def load(cls, directory: Path | str) -> FollowupClassifier:
        _sklearn()
        from sklearn.linear_model import LogisticRegression

        path = Path(directory) / MODEL_FILE
        try:
            data = user_files.parse_json(user_files.read_bytes(path), str(path))
            if not isinstance(data, dict):
                raise DataError("should hold a JSON object", source=str(path))
        except (OSError, DataError) as err:
            raise ConfigError(f"cannot read the learned classifier {path}: {err} (train one with "
                              "`uxbench mine train-signals --out DIR`)") from None
        if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
            raise ConfigError(f"{path} is not a learned follow-up classifier of format {FORMAT} version "
                              f"{FORMAT_VERSION}: retrain it with `uxbench mine train-signals`")
        if list(data["rule_features"]) != list(RULE_FEATURE_NAMES):
            raise ConfigError(f"{path} was trained with other rule features: retrain it")

        def vec(d: dict[str, Any]) -> TfidfVectorizer:
            v = _vectorizer(d["vocabulary"])
            v.fit(["-"])  # sets the fitted state; the vocabulary is fixed, the IDF weights are replaced
            v.idf_ = np.asarray(d["idf"], dtype=float)
            return v

        model = LogisticRegression()
        model.classes_ = np.asarray([0, 1])
        model.coef_ = np.asarray([data["coef"]], dtype=float)
        model.intercept_ = np.asarray([data["intercept"]], dtype=float)
        return cls(vec(data["next"]), vec(data["prev"]), model, float(data["threshold"]),
                   SignalConfig.load(data["signal_config"]), data.get("info") or {})
