"""Human-anchored rates: prediction-powered inference (PPI, Angelopoulos et al., Science 2023) for a mean.

A judge labels all N replies; humans label a random subset of n of them. The estimate is the judge's mean over
the replies plus the mean of (human - judge) over the labelled ones (the rectifier), which removes the judge's
bias whatever it is; its variance is small when the judge agrees with the humans:

    theta = mean_N(f) + mean_n(y - f),   Var = var(f) / N + var(y - f) / n  [+ 2 cov(f, y - f) / N]

The bracketed term is there when the labelled replies are also among the N (the usual case here: a study draws
its items from the run's replies); it is zero in the paper's setting of disjoint sets. The interval is normal (z),
clipped to [0, 1]. With `smoothed` (the default) the rectifier's variance is taken with half a pseudo-reply in each
cell of the (human, judge) table, as Agresti & Min (2005) do for matched proportions: when humans and judge rarely
disagree, a few dozen labels often hold no disagreement at all and the plain interval collapses (80% coverage at
30 labels and 95% agreement in our simulations; 99.8% smoothed). `smoothed=False` is the paper's interval exactly.
Sample variances use n - 1.

The human-only estimate (the labelled replies' mean, same normal interval) is reported beside it, with the
ratio of the two widths and the effective number of labels the PPI estimate is worth: the n a human-only
estimate would need for the same width, var(y) / Var.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from uxbench.metrics.proportions import _z

METHOD = "prediction-powered inference (Angelopoulos et al. 2023), normal interval"


def _var(x: np.ndarray[Any, Any]) -> float:
    return float(np.var(x, ddof=1)) if x.size > 1 else 0.0


def _rectifier_variance(rect: np.ndarray[Any, Any], smoothed: bool) -> float:
    """Variance of the rectifier's mean: plain (n - 1), or with the four pseudo-cells of weight 1/2 added (r = +1,
    -1, 0, 0), which for 0/1 labels is Agresti & Min's ((p10 + p01) - (p10 - p01)^2) / (n + 2)."""
    n = rect.size
    if not smoothed:
        return _var(rect) / n
    total, squares, weight = float(rect.sum()), float(np.square(rect).sum()) + 1.0, n + 2.0
    return max(squares / weight - (total / weight) ** 2, 0.0) / weight


def prediction_powered_mean(
    judge_all: ArrayLike, human: ArrayLike, judge_labelled: ArrayLike, *, labelled_in_all: bool = True,
    smoothed: bool = True, confidence: float = 0.95,
) -> dict[str, Any]:
    """PPI estimate of the mean human label.

    `judge_all`: the judge's value (1 good, 0 not good; fractions allowed) on every reply; `human` and
    `judge_labelled`: the human label (1 / 0, 0.5 for a tied majority) and the judge's value on each labelled
    reply. `labelled_in_all`: whether the labelled replies are among `judge_all` (adds their covariance).

    Returns {value, ci_low, ci_high, se, n_labelled, n_all, judge_rate, rectifier, human_only {value, ci_low,
    ci_high, se}, width_ratio (PPI width / human-only width; None when the latter is 0), effective_n, method,
    confidence}.
    """
    f_all = np.asarray(judge_all, dtype=float).reshape(-1)
    y = np.asarray(human, dtype=float).reshape(-1)
    f = np.asarray(judge_labelled, dtype=float).reshape(-1)
    if y.shape != f.shape:
        raise ValueError(f"human and judge_labelled differ in length: {y.size} vs {f.size}")
    if y.size == 0:
        raise ValueError("prediction-powered inference needs at least one labelled reply")
    if f_all.size == 0:
        raise ValueError("prediction-powered inference needs the judge's verdicts on the replies")
    if labelled_in_all and f_all.size < y.size:
        raise ValueError(f"{y.size} labelled replies cannot be among {f_all.size} replies")
    z = _z(confidence)
    n, big_n = int(y.size), int(f_all.size)
    rect = y - f
    judge_rate = float(f_all.mean())
    theta = judge_rate + float(rect.mean())
    var = _var(f_all) / big_n + _rectifier_variance(rect, smoothed)
    if labelled_in_all and n > 1:
        var += 2 * float(np.cov(f, rect, ddof=1)[0, 1]) / big_n
    var = max(var, 0.0)
    se = math.sqrt(var)
    human_mean, human_se = float(y.mean()), math.sqrt(_var(y) / n)
    return {
        "value": min(1.0, max(0.0, theta)), "unclipped": theta,
        "ci_low": min(1.0, max(0.0, theta - z * se)), "ci_high": min(1.0, max(0.0, theta + z * se)), "se": se,
        "n_labelled": n, "n_all": big_n, "judge_rate": judge_rate, "rectifier": float(rect.mean()),
        "human_only": {"value": human_mean, "ci_low": max(0.0, human_mean - z * human_se),
                       "ci_high": min(1.0, human_mean + z * human_se), "se": human_se, "n": n},
        "width_ratio": se / human_se if human_se > 0 else None,
        "effective_n": _var(y) / var if var > 0 else None,
        "method": METHOD + (", rectifier variance smoothed (Agresti & Min 2005)" if smoothed else ""),
        "confidence": confidence,
    }
