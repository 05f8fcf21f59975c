"""How many cases a difference needs, and the smallest difference a given number of cases can detect.

Two systems scored on the same cases differ on the discordant ones: A right and B wrong (share p10), or the other
way round (p01). The difference of their rates is delta = p10 - p01 and the discordance is psi = p10 + p01. The
paired (McNemar) test at level alpha has power 1 - beta at

    n = (z_{1-alpha/2} sqrt(psi) + z_{1-beta} sqrt(psi - delta^2))^2 / delta^2        (Connor 1987)

cases; solving the same equation for delta gives the minimum detectable difference at n cases:

    delta = sqrt(psi) (z_a sqrt(n) + z_b sqrt(n + z_b^2 - z_a^2)) / (n + z_b^2).

Task 1's Avg-Acc is the mean of two class accuracies, so its difference has variance (psi_good / n_good +
psi_bad / n_bad) / 4 under no difference: the same formulas hold with an effective n and psi (`avg_acc_design`).

With no pilot, a stated rate p stands in: the two systems' outcomes taken as independent, with rates p +/- delta/2,
psi = p1 (1 - p2) + p2 (1 - p1). Systems that agree more often than chance have a smaller psi and need fewer cases,
so this is an upper bound for the usual case.
"""

from __future__ import annotations

import math
from typing import Any

from uxbench.metrics import normal

METHOD = "McNemar test, normal approximation (Connor 1987)"


def _zs(alpha: float, power: float) -> tuple[float, float]:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    return normal.ppf(1 - alpha / 2), normal.ppf(power)


def _check_psi(psi: float) -> None:
    if not 0.0 <= psi <= 1.0:
        raise ValueError(f"the discordance must be in [0, 1], got {psi}")


def paired_sample_size(difference: float, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Cases (shared by both systems) for the paired test to detect `difference` with this power.

    Raises ValueError when the difference is not possible at that discordance (|delta| must be < psi)."""
    _check_psi(discordance)
    za, zb = _zs(alpha, power)
    delta = abs(difference)
    if delta == 0:
        raise ValueError("the difference to detect must not be 0")
    if delta >= discordance:
        raise ValueError(f"a difference of {delta:g} needs the systems to disagree on more than that share of cases "
                         f"(the discordance is {discordance:g})")
    n = (za * math.sqrt(discordance) + zb * math.sqrt(discordance - delta**2)) ** 2 / delta**2
    return math.ceil(n - 1e-9)


def minimum_detectable_difference(n: float, discordance: float, *, alpha: float = 0.05, power: float = 0.8
                                  ) -> float | None:
    """The smallest difference of rates the paired test detects with this power at `n` shared cases and this
    discordance; None when n is too small for the formula (n + z_b^2 < z_a^2) or the systems never disagree."""
    _check_psi(discordance)
    za, zb = _zs(alpha, power)
    if n <= 0 or discordance == 0 or n + zb**2 - za**2 < 0:
        return None
    return math.sqrt(discordance) * (za * math.sqrt(n) + zb * math.sqrt(n + zb**2 - za**2)) / (n + zb**2)


def paired_power(n: float, difference: float, discordance: float, *, alpha: float = 0.05) -> float:
    """Power of the paired test at `n` cases for a true `difference` at this discordance (normal approximation)."""
    _check_psi(discordance)
    za, _ = _zs(alpha, 0.5)
    delta = abs(difference)
    if delta >= discordance:
        raise ValueError("the difference must be smaller than the discordance")
    return normal.cdf((math.sqrt(n) * delta - za * math.sqrt(discordance)) / math.sqrt(discordance - delta**2))


def independent_discordance(rate: float, difference: float) -> float:
    """psi of two independent systems with rates rate +/- difference / 2."""
    p1, p2 = rate + difference / 2, rate - difference / 2
    if not (0.0 <= p2 and p1 <= 1.0):
        raise ValueError(f"rates {p2:g} and {p1:g} are not both in [0, 1]: choose another rate or difference")
    return p1 * (1 - p2) + p2 * (1 - p1)


def avg_acc_design(psi_good: float, n_good: int, psi_bad: float, n_bad: int) -> tuple[float, float]:
    """(effective n, effective psi) of an Avg-Acc difference: Var = (psi_g / n_g + psi_b / n_b) / 4 under no
    difference, and the same difference in both classes takes delta^2 (1 / n_g + 1 / n_b) / 4 off it."""
    if n_good <= 0 or n_bad <= 0:
        raise ValueError("an Avg-Acc design needs cases of both classes")
    n_eff = 4.0 / (1.0 / n_good + 1.0 / n_bad)
    var0 = (psi_good / n_good + psi_bad / n_bad) / 4.0
    return n_eff, var0 * n_eff


def mdd_entry(n: float, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> dict[str, Any]:
    """{value, n, discordance, alpha, power, method, note} for display beside a comparison."""
    value = minimum_detectable_difference(n, discordance, alpha=alpha, power=power)
    note = None
    if discordance == 0:
        note = "the two runs never disagree, so the discordance that sets the detectable difference is unknown"
    elif value is None:
        note = "too few shared cases for the formula"
    elif value >= discordance:
        note = "at this discordance no difference is detectable with these cases"
    return {"value": value, "n": n, "discordance": discordance, "alpha": alpha, "power": power, "method": METHOD,
            "note": note}
