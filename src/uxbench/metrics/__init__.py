"""Pure metric functions: proportions with CIs, bootstrap, judge metrics, paired tests.

This package imports nothing from the rest of uxbench (only numpy, scipy and the standard library),
so it raises plain `ValueError` on bad input.
"""

from uxbench.metrics.judge import TURNS_BUCKETS, judge_metrics, turns_bucket
from uxbench.metrics.paired import mcnemar, paired_bootstrap_diff
from uxbench.metrics.proportions import (
    Proportion,
    bootstrap_ci,
    percentile_interval,
    proportion,
    wilson_ci,
    wilson_mean_ci,
)

__all__ = [
    "TURNS_BUCKETS",
    "Proportion",
    "bootstrap_ci",
    "judge_metrics",
    "mcnemar",
    "paired_bootstrap_diff",
    "percentile_interval",
    "proportion",
    "turns_bucket",
    "wilson_ci",
    "wilson_mean_ci",
]
