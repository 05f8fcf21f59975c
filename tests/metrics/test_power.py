"""Sample size and minimum detectable difference of a paired comparison: the textbook formula (Connor 1987) by
hand, statsmodels' normal power where the two agree, a Monte Carlo McNemar test at the computed size, and Holm's
adjustment by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from uxbench.metrics.power import (
    avg_acc_design,
    independent_discordance,
    mdd_entry,
    minimum_detectable_difference,
    paired_power,
    paired_sample_size,
)
from uxbench.metrics.ranking import holm

ZA, ZB = 1.959963984540054, 0.8416212335729143  # alpha 0.05 two-sided, power 0.8


def test_sample_size_is_the_textbook_formula() -> None:
    psi, d = 0.30, 0.02
    by_hand = (ZA * math.sqrt(psi) + ZB * math.sqrt(psi - d * d)) ** 2 / d**2  # 5884.30
    assert paired_sample_size(d, psi) == math.ceil(by_hand) == 5885
    # statsmodels 0.15 NormalIndPower().solve_power(effect_size=d / sqrt(psi), alpha=0.05, power=0.8, ratio=0)
    # = 5886.65: the same test with the null's variance psi also under the alternative (psi - d^2 here), run
    # outside this repository; the two agree within 0.05% when d^2 << psi
    assert paired_sample_size(d, psi) == pytest.approx(5886.645382027142, rel=5e-4)


def test_detectable_difference_inverts_the_sample_size() -> None:
    for n, psi in ((5885, 0.30), (4900, 0.12), (500, 0.4), (300, 0.1)):
        d = minimum_detectable_difference(n, psi)
        assert d is not None and paired_power(n, d, psi) == pytest.approx(0.8, abs=1e-9)
    assert minimum_detectable_difference(5885, 0.30) == pytest.approx(0.02, abs=2e-5)
    assert minimum_detectable_difference(100, 0.0) is None and minimum_detectable_difference(2, 0.3) is None
    assert "no difference is detectable" in (mdd_entry(100, 0.05)["note"] or "")  # 0.079 > psi


def test_power_of_mcnemar_at_that_size_by_simulation() -> None:
    psi, d = 0.30, 0.05
    n = paired_sample_size(d, psi)
    rng = np.random.default_rng(1987)
    counts = rng.multinomial(n, [(psi + d) / 2, (psi - d) / 2, 1 - psi], size=20000)
    b, c = counts[:, 0], counts[:, 1]
    power = float(np.mean(chi2.sf((b - c) ** 2 / (b + c), 1) < 0.05))
    assert power == pytest.approx(0.80, abs=0.015)


def test_designs_and_refusals() -> None:
    assert independent_discordance(0.5, 0.02) == pytest.approx(0.51 * 0.51 + 0.49 * 0.49)
    n_eff, psi_eff = avg_acc_design(0.2, 500, 0.3, 500)
    assert n_eff == pytest.approx(1000) and psi_eff == pytest.approx(0.25)  # balanced: mean class discordance
    with pytest.raises(ValueError, match="disagree on more than"):
        paired_sample_size(0.1, 0.05)
    with pytest.raises(ValueError):
        paired_sample_size(0.0, 0.3)
    with pytest.raises(ValueError):
        independent_discordance(0.99, 0.1)


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.02), max(0.04, 1 x 0.04); back in input order
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0]) and holm([]) == []
