"""Task 1 (UX Judge) metrics: Good-/Bad-Acc, Avg-Acc, Bad-F1 and positive bias, with CIs.

Two denominators are reported side by side, because the published numbers switched between them:
- "all": every case counts; unparseable and neutral answers are wrong.
- "valid_only": only cases with a parseable answer (prediction not None) count, the published leaderboard's
  convention. A neutral answer is a valid answer, and in binary terms a wrong one.

Bootstrap intervals resample cases within each gold class (class sizes preserved). They are drawn as
multinomial tables of each class's (prediction category) counts, which equals resampling case indices
in distribution but costs O(n_boot) whatever the number of cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from uxbench.metrics.proportions import (
    finite_or_none,
    multinomial_resample,
    percentile_interval,
    proportion,
    wilson_mean_ci,
)

GOLDS = ("good", "bad")
# Prediction categories, in the column order of every count table below; None = unparseable.
CATEGORIES: tuple[str | None, ...] = ("good", "bad", "neutral", None)
_G, _B, _N, _U = 0, 1, 2, 3
CONVENTIONS = {
    "all": "every case counts; unparseable and neutral answers count as wrong",
    "valid_only": (
        "only cases with a parseable answer count (published leaderboard convention); "
        "neutral is a valid but wrong answer"
    ),
}
TURNS_BUCKETS = ("0", "1", "2", "3-4", "5-8", "9+")
MISSING_STRATUM = "(missing)"


def turns_bucket(n: int) -> str:
    """Bucket a turn count: "1", "2", "3-4", "5-8", "9+" ("0" for an empty history)."""
    if n < 0:
        raise ValueError(f"turn count must be >= 0, got {n}")
    if n <= 2:
        return str(n)
    if n <= 4:
        return "3-4"
    if n <= 8:
        return "5-8"
    return "9+"


def _tables(golds: Sequence[str], preds: Sequence[str | None]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Count tables (good-gold row, bad-gold row) over CATEGORIES."""
    if len(golds) != len(preds):
        raise ValueError(f"golds and preds differ in length: {len(golds)} vs {len(preds)}")
    col = {c: i for i, c in enumerate(CATEGORIES)}
    tab = np.zeros((2, len(CATEGORIES)), dtype=np.int64)
    for i, (g, p) in enumerate(zip(golds, preds, strict=True)):
        if g not in GOLDS:
            raise ValueError(f"case {i}: gold must be 'good' or 'bad', got {g!r}")
        if p not in col:
            raise ValueError(f"case {i}: prediction must be good, bad, neutral or None, got {p!r}")
        tab[0 if g == "good" else 1, col[p]] += 1
    return tab[0], tab[1]


def _ratio(num: NDArray[Any], den: NDArray[Any]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(den > 0, num / np.where(den > 0, den, 1), np.nan), dtype=float)


def _stats(cg: NDArray[np.int64], cb: NDArray[np.int64], convention: str) -> dict[str, NDArray[np.float64]]:
    """Every bootstrapped statistic from count tables of shape (..., 4); NaN where undefined."""
    if convention == "all":
        den_g, den_b = cg.sum(-1), cb.sum(-1)
    else:
        den_g, den_b = cg.sum(-1) - cg[..., _U], cb.sum(-1) - cb[..., _U]
    good_acc = _ratio(cg[..., _G], den_g)
    bad_acc = _ratio(cb[..., _B], den_b)
    tp, fp = cb[..., _B], cg[..., _B]
    fn = den_b - tp
    return {
        "avg_acc": (good_acc + bad_acc) / 2.0,
        "positive_bias": good_acc - bad_acc,
        "bad_f1": _ratio(2 * tp, 2 * tp + fp + fn),
    }


def _boot_entry(
    point: float, reps: NDArray[np.float64], confidence: float, n_boot: int, seed: int
) -> dict[str, Any]:
    value = finite_or_none(point)
    low, high = percentile_interval(reps, confidence) if value is not None else (float("nan"), float("nan"))
    return {
        "value": value,
        "ci_low": finite_or_none(low),
        "ci_high": finite_or_none(high),
        "method": "stratified bootstrap",
        "n_boot": n_boot,
        "seed": seed,
    }


def _convention(
    cg: NDArray[np.int64],
    cb: NDArray[np.int64],
    boot_g: NDArray[np.int64],
    boot_b: NDArray[np.int64],
    convention: str,
    confidence: float,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    point = _stats(cg, cb, convention)
    reps = _stats(boot_g, boot_b, convention)
    n_g = int(cg.sum() - (cg[_U] if convention == "valid_only" else 0))
    n_b = int(cb.sum() - (cb[_U] if convention == "valid_only" else 0))
    tp, fp = int(cb[_B]), int(cg[_B])
    out: dict[str, Any] = {
        "description": CONVENTIONS[convention],
        "good_acc": proportion(int(cg[_G]), n_g, confidence),
        "bad_acc": proportion(tp, n_b, confidence),
        "accuracy": proportion(int(cg[_G]) + tp, n_g + n_b, confidence),
    }
    for name in ("avg_acc", "positive_bias", "bad_f1"):
        out[name] = _boot_entry(float(point[name]), reps[name], confidence, n_boot, seed)
    out["bad_f1"].update(
        tp=tp,
        fp=fp,
        fn=n_b - tp,
        precision=finite_or_none(tp / (tp + fp)) if tp + fp else None,
        recall=finite_or_none(tp / n_b) if n_b else None,
    )
    return out


def _confusion(c: NDArray[np.int64]) -> dict[str, int]:
    return {("unparseable" if k is None else k): int(v) for k, v in zip(CATEGORIES, c, strict=True)}


def _stratum_key(value: str | int | None) -> str:
    return MISSING_STRATUM if value is None else str(value)


def _natural(key: str) -> tuple[int, int, str]:
    """Sort numeric-looking keys ("2", "3-4", "9+") by their leading number, others by text, missing last."""
    if key == MISSING_STRATUM:
        return (2, 0, key)
    digits = ""
    for ch in key:
        if not ch.isdigit():
            break
        digits += ch
    return (0, int(digits), key) if digits else (1, 0, key)


def _breakdown(
    golds: Sequence[str], preds: Sequence[str | None], values: Sequence[str | int | None], confidence: float
) -> dict[str, Any]:
    """Per-value metrics ("all" convention). Avg-Acc gets a Wilson-MOVER interval: strata are often
    tiny, where a percentile bootstrap collapses to a point."""
    groups: dict[str, list[int]] = {}
    for i, v in enumerate(values):
        groups.setdefault(_stratum_key(v), []).append(i)
    out: dict[str, Any] = {}
    for key in sorted(groups, key=_natural):
        idx = groups[key]
        cg, cb = _tables([golds[i] for i in idx], [preds[i] for i in idx])
        n_g, n_b, k_g, k_b = int(cg.sum()), int(cb.sum()), int(cg[_G]), int(cb[_B])
        avg: dict[str, Any] = {"value": None, "ci_low": None, "ci_high": None, "method": "wilson-mover"}
        if n_g and n_b:
            low, high = wilson_mean_ci(k_g, n_g, k_b, n_b, confidence)
            avg.update(value=(k_g / n_g + k_b / n_b) / 2, ci_low=low, ci_high=high)
        out[key] = {
            "n": len(idx),
            "n_good": n_g,
            "n_bad": n_b,
            "good_acc": proportion(k_g, n_g, confidence),
            "bad_acc": proportion(k_b, n_b, confidence),
            "avg_acc": avg,
            "unparseable": proportion(int(cg[_U] + cb[_U]), len(idx), confidence),
        }
    return out


def judge_metrics(
    golds: Sequence[str],
    preds: Sequence[str | None],
    *,
    strata: Mapping[str, Sequence[str | int | None]] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Task 1 metrics as a JSON-serialisable dict; all rates are fractions in 0..1.

    golds: "good" / "bad". preds: "good" / "bad" / "neutral" / None (unparseable). strata: breakdown name
    -> one value per case (None becomes "(missing)"). Raises ValueError on unknown labels or length mismatch.

    Keys: n, n_good, n_bad, prediction_counts, confusion (gold -> prediction counts), unparseable
    ({value, rate, k, n, ci_low, ci_high}), neutral_escape (None unless some answer is neutral, else
    {"bad": share of bad cases answered neutral, "good": same for good}), "all" and "valid_only" (each:
    good_acc, bad_acc, accuracy as Wilson proportions; avg_acc, positive_bias, bad_f1 as bootstrap
    entries {value, ci_low, ci_high}), breakdowns (stratum -> value -> n, n_good, n_bad, good_acc, bad_acc,
    avg_acc with a Wilson-MOVER CI, unparseable; "all" convention), bootstrap (settings), confidence.
    A statistic that is undefined (e.g. no bad cases) has value None.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    cg, cb = _tables(golds, preds)
    n = len(golds)
    rng = np.random.default_rng(seed)
    boot_g, boot_b = multinomial_resample(cg, n_boot, rng), multinomial_resample(cb, n_boot, rng)
    n_unparseable = int(cg[_U] + cb[_U])
    unparseable = proportion(n_unparseable, n, confidence)
    unparseable["rate"] = unparseable["value"]
    n_neutral = int(cg[_N] + cb[_N])
    result: dict[str, Any] = {
        "n": n,
        "n_good": int(cg.sum()),
        "n_bad": int(cb.sum()),
        "prediction_counts": _confusion(cg + cb),
        "confusion": {"good": _confusion(cg), "bad": _confusion(cb)},
        "unparseable": unparseable,
        "neutral_escape": (
            {
                "bad": proportion(int(cb[_N]), int(cb.sum()), confidence),
                "good": proportion(int(cg[_N]), int(cg.sum()), confidence),
            }
            if n_neutral
            else None
        ),
    }
    for conv in CONVENTIONS:
        result[conv] = _convention(cg, cb, boot_g, boot_b, conv, confidence, n_boot, seed)
    breakdowns: dict[str, Any] = {}
    for name, values in (strata or {}).items():
        if len(values) != n:
            raise ValueError(f"stratum {name!r} has {len(values)} values for {n} cases")
        breakdowns[name] = _breakdown(golds, preds, values, confidence)
    result["breakdowns"] = breakdowns
    result["bootstrap"] = {
        "method": "percentile bootstrap, cases resampled within each gold class",
        "n_boot": n_boot,
        "seed": seed,
    }
    result["confidence"] = confidence
    return result
