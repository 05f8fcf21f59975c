"""Coverage of the trust intervals, measured by seeded simulation (what docs/TRUST.md quotes).

- judge-corrected rate (`metrics.judge_correction.corrected_rate`): the test rate and both calibration rates drawn
  from their binomials; the share of 95% intervals that hold the true theta.
- human-anchored rate (`metrics.ppi.prediction_powered_mean`): N replies with human labels at theta, a judge that
  agrees with them on a share of the replies (its errors leaning to "good"), humans labelling a random subset;
  plain and smoothed rectifier variance.
- minimum detectable difference (`metrics.power`): the power of McNemar's test at the planned size.

    python bench/trust_coverage.py [--reps 2000]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import chi2

from uxbench.metrics.judge_correction import corrected_rate, expected_raw_rate
from uxbench.metrics.power import paired_sample_size
from uxbench.metrics.ppi import prediction_powered_mean


def correction(reps: int) -> None:
    print("judge-corrected rate: theta, se, sp, n, m per class -> coverage, median width")
    rng = np.random.default_rng(1)
    for theta, se, sp, n, m in ((0.55, 0.82, 0.72, 1000, 300), (0.2, 0.9, 0.6, 500, 150), (0.8, 0.7, 0.85, 300, 100),
                                (0.05, 0.82, 0.72, 4900, 1000)):
        p = expected_raw_rate(theta, se, sp)
        hits, widths = 0, []
        for _ in range(reps):
            r = corrected_rate(int(rng.binomial(n, p)), n, good_hits=int(rng.binomial(m, se)), good_n=m,
                               bad_hits=int(rng.binomial(m, sp)), bad_n=m)
            hits += r["ci_low"] <= theta <= r["ci_high"]
            widths.append(r["ci_high"] - r["ci_low"])
        print(f"  {theta}, {se}, {sp}, {n}, {m}: {hits / reps:.4f}, {np.median(widths):.3f}")


def ppi(reps: int) -> None:
    print("human-anchored rate (N = 2000, theta = 0.4): agreement, n labelled -> coverage plain, smoothed, "
          "median width / human-only")
    for agreement, n in ((0.9, 100), (0.75, 200), (0.75, 50), (0.95, 30), (0.95, 100)):
        rng = np.random.default_rng(7)
        plain = smooth = 0
        ratios = []
        for _ in range(reps):
            y = (rng.random(2000) < 0.4).astype(float)
            wrong = rng.random(2000) > agreement
            f = np.where(wrong, (rng.random(2000) < 0.8).astype(float), y)
            pick = rng.choice(2000, size=n, replace=False)
            a = prediction_powered_mean(f, y[pick], f[pick], smoothed=False)
            b = prediction_powered_mean(f, y[pick], f[pick])
            plain += a["ci_low"] <= 0.4 <= a["ci_high"]
            smooth += b["ci_low"] <= 0.4 <= b["ci_high"]
            if b["width_ratio"] is not None:
                ratios.append(b["width_ratio"])
        print(f"  {agreement}, {n}: {plain / reps:.4f}, {smooth / reps:.4f}, {np.median(ratios):.2f}")


def power(reps: int) -> None:
    print("McNemar power at the planned n (target 0.80): psi, difference, n -> power (chi-square, no correction)")
    rng = np.random.default_rng(1987)
    for psi, d in ((0.3, 0.05), (0.12, 0.03), (0.5, 0.1)):
        n = paired_sample_size(d, psi)
        counts = rng.multinomial(n, [(psi + d) / 2, (psi - d) / 2, 1 - psi], size=reps * 10)
        b, c = counts[:, 0], counts[:, 1]
        print(f"  {psi}, {d}, {n}: {np.mean(chi2.sf((b - c) ** 2 / (b + c), 1) < 0.05):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    correction(args.reps)
    ppi(args.reps)
    power(args.reps)


if __name__ == "__main__":
    main()
