"""The standard normal's quantile, cdf and upper tail from the standard library.

scipy.stats computes the same values (within an ulp) but costs about a second to import on a small machine, and
every run's summary and report needs only these: the modules on that path use this one instead.
"""

from __future__ import annotations

import math
from statistics import NormalDist

_STANDARD = NormalDist()


def ppf(p: float) -> float:
    """The quantile: x with P(Z <= x) = p, for 0 < p < 1."""
    return _STANDARD.inv_cdf(p)


def cdf(x: float) -> float:
    """P(Z <= x), from erfc so that the far left tail keeps its precision."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def sf(x: float) -> float:
    """P(Z > x), from erfc so that the far tail keeps its precision."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))
