"""The judge-corrected rate: hand computation on a fixture with known se, sp and theta, the authors' reference
implementation, the flag and the refusal, and a seeded coverage study over the three binomials."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uxbench.metrics.judge_correction import (
    OUTSIDE_RANGE,
    corrected_rate,
    expected_raw_rate,
    rescaled,
)

Z = 1.959963984540054  # the 97.5% normal quantile


def test_fixture_with_known_rates_equals_hand_computation() -> None:
    # se = 80/100, sp = 70/100, theta = 0.6: the judge reports 0.5 * 0.6 + 0.3 = 0.6, here 600 of 1000
    assert expected_raw_rate(0.6, 0.8, 0.7) == pytest.approx(0.6)
    r = corrected_rate(600, 1000, good_hits=80, good_n=100, bad_hits=70, bad_n=100)
    assert r["status"] == "ok" and not r["flags"]
    assert r["value"] == pytest.approx((0.6 + 0.7 - 1) / (0.8 + 0.7 - 1)) == pytest.approx(0.6)
    assert r["youden_j"] == pytest.approx(0.5) and r["producible"] == pytest.approx([0.3, 0.8])
    # The interval by hand: smoothed rates, smoothed counts, centre shift, delta-method half-width.
    z2 = Z * Z
    p, sp, se = (600 + z2 / 2) / (1000 + z2), (70 + 1) / 102, (80 + 1) / 102
    n, m0, m1 = 1000 + z2, 102, 102
    j = sp + se - 1
    theta = (p + sp - 1) / j
    shift = 2 * z2 * (theta * se * (1 - se) / m1 - (1 - theta) * sp * (1 - sp) / m0)
    half = Z * math.sqrt(p * (1 - p) / n + (1 - theta) ** 2 * sp * (1 - sp) / m0 + theta**2 * se * (1 - se) / m1) / j
    assert r["ci_low"] == pytest.approx(theta + shift - half, abs=1e-12)
    assert r["ci_high"] == pytest.approx(theta + shift + half, abs=1e-12)
    assert r["raw"]["value"] == pytest.approx(0.6) and r["sensitivity"]["n"] == 100


@pytest.mark.parametrize(("counts", "expected"), [
    # (k, n, specificity hits, m0, sensitivity hits, m1) -> the interval of `confidence_interval` in the authors'
    # reference implementation (UW-Madison-Lee-Lab/LLM-judge-reporting, llm_judge_reporting/calibration.py at
    # 082884d), run on these inputs; not part of this repository.
    ((600, 1000, 70, 100, 80, 100), (0.46879824406027903, 0.739852364628044)),
    ((571, 1000, 724, 1000, 821, 1000), (0.475575985434297, 0.6063297979380077)),
    ((30, 60, 15, 20, 18, 25), (0.11716125902618041, 0.9346220329553063)),
    ((128, 500, 724, 1000, 821, 1000), (0.0, 0.05198918325211959)),
])
def test_interval_equals_the_reference_implementation(counts: tuple[int, ...], expected: tuple[float, float]) -> None:
    k, n, tn, m0, tp, m1 = counts
    r = corrected_rate(k, n, good_hits=tp, good_n=m1, bad_hits=tn, bad_n=m0)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(expected, abs=1e-12)


def test_the_papers_grm_figures() -> None:
    # UXBench's GRM (Good-Acc 82.1%, Bad-Acc 72.4%, 1,000 cases a class): Task 2's 57.1% becomes 54.1%, and
    # GPT-5 mini's 24.0% lies below the 27.6% floor this judge can produce.
    top = corrected_rate(2798, 4900, good_hits=821, good_n=1000, bad_hits=724, bad_n=1000)
    assert top["value"] == pytest.approx(0.541, abs=5e-4) and not top["flags"]
    low = corrected_rate(1176, 4900, good_hits=821, good_n=1000, bad_hits=724, bad_n=1000)
    assert low["value"] == 0.0 and low["unclipped"] == pytest.approx(-0.066, abs=5e-4)
    assert [f["code"] for f in low["flags"]] == [OUTSIDE_RANGE]
    assert "do not transfer to these replies" in low["flags"][0]["message"]
    assert "27.6%" in low["flags"][0]["message"]


def test_flag_above_the_ceiling_and_clipping() -> None:
    r = corrected_rate(95, 100, good_hits=80, good_n=100, bad_hits=90, bad_n=100)  # 0.95 > se = 0.80
    assert r["value"] == 1.0 and r["unclipped"] > 1 and r["flags"][0]["code"] == OUTSIDE_RANGE
    assert 0.0 <= r["ci_low"] <= r["ci_high"] <= 1.0


@pytest.mark.parametrize(("good_hits", "bad_hits"), [(50, 50), (40, 50), (100, 0)])
def test_uninformative_judge_is_refused(good_hits: int, bad_hits: int) -> None:
    r = corrected_rate(60, 100, good_hits=good_hits, good_n=100, bad_hits=bad_hits, bad_n=100)
    assert r["status"] == "refused" and r["value"] is None and r["ci_low"] is None
    assert r["reason"].startswith("uninformative_judge") and "carry no information" in r["reason"]


def test_missing_calibration_class_is_refused_and_bad_counts_raise() -> None:
    r = corrected_rate(60, 100, good_hits=0, good_n=0, bad_hits=10, bad_n=20)
    assert r["status"] == "refused" and "no liked replies" in r["reason"]
    with pytest.raises(ValueError):
        corrected_rate(5, 4, good_hits=1, good_n=2, bad_hits=1, bad_n=2)
    with pytest.raises(ValueError):
        corrected_rate(1, 4, good_hits=3, good_n=2, bad_hits=1, bad_n=2)
    empty = corrected_rate(0, 0, good_hits=8, good_n=10, bad_hits=8, bad_n=10)
    assert empty["status"] == "ok" and empty["value"] is None


def test_rescaled_to_all_cases() -> None:
    r = rescaled(corrected_rate(600, 1000, good_hits=80, good_n=100, bad_hits=70, bad_n=100), 0.9)
    assert r["value"] == pytest.approx(0.54) and r["scaled_by"] == 0.9
    with pytest.raises(ValueError):
        rescaled(r, 1.5)


def test_coverage_over_the_three_binomials() -> None:
    """Seeded study: draw the test rate and both calibration rates from their binomials; the 95% interval holds
    the true theta in at least 93 of 100 repetitions, at several judges and rates."""
    rng = np.random.default_rng(19)
    for theta, se, sp, n, m in ((0.55, 0.82, 0.72, 1000, 300), (0.2, 0.9, 0.6, 500, 150), (0.8, 0.7, 0.85, 300, 100)):
        p = expected_raw_rate(theta, se, sp)
        covered = 0
        for _ in range(100):
            k = int(rng.binomial(n, p))
            r = corrected_rate(k, n, good_hits=int(rng.binomial(m, se)), good_n=m,
                               bad_hits=int(rng.binomial(m, sp)), bad_n=m)
            covered += r["ci_low"] <= theta <= r["ci_high"]
        assert covered >= 93, (theta, se, sp, covered)
