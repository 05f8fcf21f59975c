"""The lite judge's model: a logistic regression on the features, calibrated by Platt scaling.

p(good) = sigmoid(a * (w . x + b) + c), x = [history | query | reply encodings | standardised UX features].
w and b come from a logistic regression fitted on the whole training side; a and c from a one-feature logistic
regression on out-of-fold decision values (folds by conversation, so a conversation never scores itself).
With `class_weight="balanced"` (default) both fits weigh each class equally, so the calibrated log-odds are
those of a balanced prior; `none` calibrates to the training side's base rate.

The prior (`prior`): the share of good replies the probabilities assume. `train` (default): the training
side's share, which a split by conversation gives the test side too, so p(good) means what it says on data like
the training data (a 90%-good log gets probabilities near 0.9, not near 0.5: ECE stays small); `balanced`: 0.5,
what Avg-Acc (the mean of Good-Acc and Bad-Acc) assumes, so the verdict p >= 0.5 weighs both classes alike;
or a number in (0, 1), the share you expect where the judge will be used. The shift is Bayes' rule on the
odds: logit(p) = calibrated logit + logit(prior) - logit(the prior the calibration stands for).

Saved as `model.npz` (arrays only, loaded with allow_pickle=False) and `model.json` (settings and names): no
pickled objects, and scoring needs numpy only (plus the encoder).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from uxbench.data import user_files
from uxbench.errors import ConfigError
from uxbench.judge_train.features import UX_FEATURES, block_names, text_max_chars

FORMAT_VERSION = 1
MODEL_NPZ = "model.npz"
MODEL_JSON = "model.json"
ClassWeight = Literal["balanced", "none"]
PRIOR_NAMES = ("train", "balanced")


def log_odds(p: float) -> float:
    return float(np.log(p) - np.log1p(-p))


def parse_prior(value: str) -> str | float:
    """`train`, `balanced` or a share in (0, 1); ConfigError otherwise."""
    if value in PRIOR_NAMES:
        return value
    try:
        share = float(value)
    except ValueError:
        share = float("nan")
    if not 0.0 < share < 1.0:
        raise ConfigError(f"--prior {value!r}: choose train, balanced, or the share of good replies you expect "
                          "(a number between 0 and 1, e.g. 0.9)")
    return share


def resolve_prior(prior: str | float, y: NDArray[np.bool_]) -> float:
    """The prior's share of good replies (`train`: the training side's)."""
    if prior == "train":
        return float(np.clip(y.mean(), 1e-4, 1 - 1e-4))
    if prior == "balanced":
        return 0.5
    return float(prior)


def _sigmoid(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)), dtype=np.float64)


def balanced_weights(y: NDArray[np.bool_]) -> NDArray[np.float64]:
    n, n_good = len(y), int(y.sum())
    w_good, w_bad = n / (2.0 * max(n_good, 1)), n / (2.0 * max(n - n_good, 1))
    return np.where(y, w_good, w_bad).astype(np.float64)


@dataclass
class LiteModel:
    encoder: str
    encoder_dim: int
    weights: NDArray[np.float64]
    bias: float
    ux_mean: NDArray[np.float64]
    ux_scale: NDArray[np.float64]
    platt_a: float = 1.0
    platt_c: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    def design(self, text: sp.csr_matrix, ux: NDArray[np.float64]) -> sp.csr_matrix:
        scaled = (ux - self.ux_mean) / self.ux_scale
        return sp.hstack([text, sp.csr_matrix(scaled)], format="csr")

    def decision(self, text: sp.csr_matrix, ux: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.design(text, ux) @ self.weights, dtype=np.float64).ravel() + self.bias

    def logit(self, text: sp.csr_matrix, ux: NDArray[np.float64]) -> NDArray[np.float64]:
        """log(p(good) / p(bad)) of each row, calibrated."""
        return self.platt_a * self.decision(text, ux) + self.platt_c

    def probability(self, text: sp.csr_matrix, ux: NDArray[np.float64]) -> NDArray[np.float64]:
        """p(good) of each row."""
        return _sigmoid(self.logit(text, ux))

    def feature_names(self) -> list[str]:
        return [*block_names(self.encoder, self.encoder_dim), *UX_FEATURES]

    def heaviest(self, k: int = 12) -> dict[str, Any]:
        """The UX features by |weight| (per standard deviation), the text blocks by the norm of their weights,
        and the single heaviest weights overall."""
        names = self.feature_names()
        d = self.encoder_dim
        ux_w = self.weights[3 * d :]
        blocks = {part: float(np.linalg.norm(self.weights[i * d : (i + 1) * d]))
                  for i, part in enumerate(("history", "query", "reply"))}
        order = np.argsort(-np.abs(self.weights))[:k]
        return {
            "ux_features": sorted(({"name": n, "weight": float(w)} for n, w in zip(UX_FEATURES, ux_w, strict=True)),
                                  key=lambda e: -abs(e["weight"])),
            "text_block_weight_norms": blocks,
            "top_weights": [{"name": names[i], "weight": float(self.weights[i])} for i in order],
        }

    def save(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        np.savez(out / MODEL_NPZ, weights=self.weights, bias=np.array([self.bias]), ux_mean=self.ux_mean,
                 ux_scale=self.ux_scale, platt=np.array([self.platt_a, self.platt_c]))
        meta = {"format": "uxbench-lite-judge", "version": FORMAT_VERSION, "encoder": self.encoder,
                "encoder_dim": self.encoder_dim, "text_max_chars": text_max_chars(self.encoder),
                "ux_features": list(UX_FEATURES), **self.info}
        (out / MODEL_JSON).write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> LiteModel:
        meta_path, npz_path = path / MODEL_JSON, path / MODEL_NPZ
        if not meta_path.is_file() or not npz_path.is_file():
            raise ConfigError(f"{path} is not a lite judge: {MODEL_JSON} and {MODEL_NPZ} are needed there "
                              "(train one with `uxbench judge train --method lite --out DIR`)")
        meta = user_files.parse_json(user_files.read_bytes(meta_path), str(meta_path))
        if not isinstance(meta, dict):
            raise ConfigError(f"{meta_path}: not a lite judge (not a JSON object)")
        if meta.get("format") != "uxbench-lite-judge" or meta.get("version") != FORMAT_VERSION:
            raise ConfigError(f"{meta_path}: not a lite judge of format version {FORMAT_VERSION}")
        if list(meta.get("ux_features", [])) != list(UX_FEATURES) or \
                meta.get("text_max_chars") != text_max_chars(str(meta.get("encoder"))):
            raise ConfigError(f"{meta_path}: trained with other features than this uxbench computes; retrain")
        with np.load(npz_path, allow_pickle=False) as arrays:
            model = cls(encoder=str(meta["encoder"]), encoder_dim=int(meta["encoder_dim"]),
                        weights=arrays["weights"], bias=float(arrays["bias"][0]), ux_mean=arrays["ux_mean"],
                        ux_scale=arrays["ux_scale"], platt_a=float(arrays["platt"][0]),
                        platt_c=float(arrays["platt"][1]))
        model.info = {k: v for k, v in meta.items()
                      if k not in ("format", "version", "encoder", "encoder_dim", "ux_features", "text_max_chars")}
        expected = 3 * model.encoder_dim + len(UX_FEATURES)
        if model.weights.shape != (expected,):
            raise ConfigError(f"{npz_path}: {model.weights.shape[0]} weights, expected {expected}")
        return model


def prior_info(prior: str | float, share: float, calibrated_at: float) -> dict[str, Any]:
    """What the card and `judge eval` need to know of the prior (the baseline gets the same)."""
    return {"setting": prior, "share_good": share, "calibrated_at": calibrated_at,
            "shift": log_odds(share) - log_odds(calibrated_at), "log_odds": log_odds(share)}


C_GRID = (0.1, 1.0, 10.0, 100.0)
"""The inverse regularisation strengths `c="auto"` tries (chosen by out-of-fold Avg-Acc on the training side)."""


def _oof_avg_acc(oof: NDArray[np.float64], y: NDArray[np.bool_]) -> float:
    """Avg-Acc of out-of-fold decisions at 0 (the balanced-weight boundary); rows without a decision count wrong."""
    known = ~np.isnan(oof)
    said_good = known & (np.nan_to_num(oof) >= 0)
    good_acc = float(said_good[y].mean()) if y.any() else 0.0
    bad_acc = float((known & ~said_good)[~y].mean()) if (~y).any() else 0.0
    return (good_acc + bad_acc) / 2


def fit(text: sp.csr_matrix, ux: NDArray[np.float64], y: NDArray[np.bool_], groups: list[str], *,
        encoder: str, encoder_dim: int, c: float | str = "auto", class_weight: ClassWeight = "balanced",
        prior: str | float = "train", folds: int = 5,
        tick: Callable[[int, int], None] = lambda done, total: None) -> LiteModel:
    """Fit the logistic regression and its Platt calibration (`y` True = good), shifted to `prior`. `c="auto"`:
    each strength of `C_GRID` gets the same folds by conversation, and the one with the best out-of-fold
    Avg-Acc is fitted on the whole side (ties: the stronger regularisation)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    mean = ux.mean(axis=0)
    scale = ux.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LiteModel(encoder, encoder_dim, np.zeros(text.shape[1] + ux.shape[1]), 0.0, mean, scale)
    x = model.design(text, ux)
    sw = balanced_weights(y) if class_weight == "balanced" else np.ones(len(y))

    def lr(strength: float, xs: sp.csr_matrix, ys: NDArray[np.bool_], ws: NDArray[np.float64]) -> Any:
        return LogisticRegression(C=strength, solver="liblinear", max_iter=1000).fit(xs, ys, sample_weight=ws)

    grid = C_GRID if c == "auto" else (float(c),)
    n_groups = len(set(groups))
    n_folds = min(folds, n_groups) if n_groups >= 2 else 0
    total = n_folds * len(grid) + 1
    tick(0, total)
    splits = list(GroupKFold(n_splits=n_folds).split(x, y, groups)) if n_folds else []
    found: dict[float, NDArray[np.float64]] = {}
    for g, strength in enumerate(grid):
        oof_c = np.full(len(y), np.nan)
        for k, (fit_idx, held) in enumerate(splits, 1):
            if len(set(y[fit_idx].tolist())) >= 2:
                oof_c[held] = lr(strength, x[fit_idx], y[fit_idx], sw[fit_idx]).decision_function(x[held])
            tick(g * n_folds + k, total)
        found[strength] = oof_c
    scores = {strength: _oof_avg_acc(o, y) for strength, o in found.items()}
    chosen = grid[0] if len(grid) == 1 or not splits else max(grid, key=lambda s: (scores[s], -s))
    oof = found[chosen]
    full = lr(chosen, x, y, sw)
    model.weights, model.bias = np.asarray(full.coef_[0], dtype=np.float64), float(full.intercept_[0])
    tick(total, total)
    model.info["C_search"] = {"grid": list(grid), "oof_avg_acc": [scores[s] for s in grid], "chosen": chosen,
                              "setting": c}
    known = ~np.isnan(oof)
    if known.sum() >= 2 and len(set(y[known].tolist())) == 2:
        platt = LogisticRegression(C=1e6, max_iter=1000).fit(oof[known].reshape(-1, 1), y[known],
                                                              sample_weight=sw[known])
        model.platt_a, model.platt_c = float(platt.coef_[0][0]), float(platt.intercept_[0])
    calibrated_at = 0.5 if class_weight == "balanced" else resolve_prior("train", y)
    share = resolve_prior(prior, y)
    shift = log_odds(share) - log_odds(calibrated_at)
    model.platt_c += shift
    model.info["calibration"] = {"method": "Platt scaling on out-of-fold decisions (folds by conversation)",
                                 "rows": int(known.sum()), "a": model.platt_a, "c": model.platt_c}
    model.info["prior"] = prior_info(prior, share, calibrated_at)
    model.info["class_weight"] = class_weight
    model.info["C"] = chosen
    return model
