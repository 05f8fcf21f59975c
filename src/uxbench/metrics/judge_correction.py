"""A judge's Good% corrected for the judge's own error rates (the prevalence correction of a misclassifying test).

A judge with sensitivity se (it calls a liked reply good: Task 1 Good-Acc) and specificity sp (it calls a disliked
reply bad: Task 1 Bad-Acc) turns a true good rate theta into an expected raw rate

    E[p] = (se + sp - 1) * theta + (1 - sp),

so the raw rate lives in [1 - sp, se] and every gap between two models shrinks by the factor J = se + sp - 1
(Youden's J). The estimate inverts it: theta = (p + sp - 1) / (se + sp - 1) (Rogan & Gladen 1978).

The 95% interval carries the uncertainty of all three binomials (the test rate and both calibration rates). It is
the plug-in interval of Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations" (arXiv 2511.21140): the
delta method on smoothed estimates (z^2/2 pseudo-successes added to the test rate, one pseudo-count per outcome to
each calibration rate) with their small-sample centre shift. It assumes the judge's error rates on the replies
being scored equal those measured on the calibration replies; a raw rate outside [1 - sp, se] is evidence against
that, and is flagged. A judge with se + sp <= 1 carries no information about theta and is refused.

Pure functions (numpy/scipy only) so that every layer, and simulated sessions, can use them.
"""

from __future__ import annotations

import math
from typing import Any

from uxbench.metrics.proportions import _z, proportion

METHOD = ("delta method over the test and both calibration binomials, smoothed as in Lee et al. 2025 "
          "(arXiv 2511.21140)")
OUTSIDE_RANGE = "outside_range"
"""Flag code: the raw rate lies outside [1 - sp, se], the rates this judge can produce."""
OUTSIDE_TEXT = "outside what this judge can produce: its Task 1 error rates do not transfer to these replies"
REFUSED_UNINFORMATIVE = "uninformative_judge"
REFUSED_NO_CALIBRATION = "no_calibration"


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def _smoothed_interval(p: float, n: int, sp: float, m0: int, se: float, m1: int, z: float
                       ) -> tuple[float, float] | None:
    """The smoothed delta-method interval (before clipping); None when the smoothed J is not positive."""
    z2 = z * z
    p_s = (n * p + z2 / 2) / (n + z2)
    sp_s = (m0 * sp + 1) / (m0 + 2)
    se_s = (m1 * se + 1) / (m1 + 2)
    n_s, m0_s, m1_s = n + z2, m0 + 2, m1 + 2
    j = sp_s + se_s - 1
    if j <= 0:
        return None
    theta = (p_s + sp_s - 1) / j
    var_sp = sp_s * (1 - sp_s) / m0_s
    var_se = se_s * (1 - se_s) / m1_s
    shift = 2 * z2 * (theta * var_se - (1 - theta) * var_sp)
    half = z * math.sqrt(p_s * (1 - p_s) / n_s + (1 - theta) ** 2 * var_sp + theta**2 * var_se) / j
    return theta + shift - half, theta + shift + half


def corrected_rate(
    k: int, n: int, *, good_hits: int, good_n: int, bad_hits: int, bad_n: int, confidence: float = 0.95,
) -> dict[str, Any]:
    """The judge-corrected good rate of `k` good verdicts out of `n` replies.

    Calibration counts come from replies with real users' labels, judged by the same judge under the same
    protocol: `good_hits` of the `good_n` liked replies were called good (sensitivity), `bad_hits` of the
    `bad_n` disliked replies were called bad (specificity).

    Returns {value (clipped to [0, 1]; None when refused or n == 0), unclipped, ci_low, ci_high, raw (Wilson
    proportion k/n), sensitivity, specificity (Wilson proportions), youden_j, producible ([1 - sp, se]), flags
    (list of {code, message}), status ("ok" | "refused"), reason (why refused), method, confidence}.
    """
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    for name, hits, total in (("good", good_hits, good_n), ("bad", bad_hits, bad_n)):
        if total < 0 or not 0 <= hits <= total:
            raise ValueError(f"calibration {name}: need 0 <= hits <= n, got {hits} of {total}")
    z = _z(confidence)
    se = good_hits / good_n if good_n else None
    sp = bad_hits / bad_n if bad_n else None
    out: dict[str, Any] = {
        "value": None, "unclipped": None, "ci_low": None, "ci_high": None,
        "raw": proportion(k, n, confidence), "sensitivity": proportion(good_hits, good_n, confidence),
        "specificity": proportion(bad_hits, bad_n, confidence), "youden_j": None, "producible": None,
        "flags": [], "status": "ok", "reason": None, "method": METHOD, "confidence": confidence,
    }
    if se is None or sp is None:
        missing = " and ".join(w for w, c in (("liked", good_n), ("disliked", bad_n)) if not c)
        out.update(status="refused", reason=f"{REFUSED_NO_CALIBRATION}: the calibration has no {missing} replies, "
                                            "so the judge's error rates are unknown")
        return out
    j = se + sp - 1
    out.update(youden_j=j, producible=[1 - sp, se])
    if j <= 0:
        out.update(status="refused", reason=(
            f"{REFUSED_UNINFORMATIVE}: sensitivity {se:.3f} + specificity {sp:.3f} = {se + sp:.3f} <= 1, so the "
            "judge's verdicts carry no information about how many replies users would like"))
        return out
    if n == 0:
        return out
    p = k / n
    theta = (p + sp - 1) / j
    if p < 1 - sp or p > se:
        out["flags"].append({"code": OUTSIDE_RANGE, "message": (
            f"raw rate {100 * p:.1f}% is {OUTSIDE_TEXT} (it produces {100 * (1 - sp):.1f}% to {100 * se:.1f}%)")})
    interval = _smoothed_interval(p, n, sp, bad_n, se, good_n, z)
    low, high = interval if interval is not None else (0.0, 1.0)
    out.update(value=_clip(theta), unclipped=theta, ci_low=_clip(low), ci_high=_clip(high))
    return out


def rescaled(corrected: dict[str, Any], share: float) -> dict[str, Any]:
    """A corrected rate of the scored replies as a rate of all cases: value and interval times `share` (the
    scored share of the cases), the cases without a verdict counting as not good, as the raw all-cases rate
    counts them."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share}")
    out = dict(corrected)
    for key in ("value", "unclipped", "ci_low", "ci_high"):
        if out.get(key) is not None:
            out[key] = out[key] * share
    out["scaled_by"] = share
    return out


def expected_raw_rate(theta: float, sensitivity: float, specificity: float) -> float:
    """What a judge with these error rates reports on replies whose true good rate is `theta`."""
    return (sensitivity + specificity - 1) * theta + (1 - specificity)
