"""Mining: raw chat logs -> sessions -> de-identified -> gated -> signals -> agents -> sampled test cases.

Nothing else in uxbench depends on this package; it writes files that `uxbench.data` loads.
"""
