"""Differences between two groups of clustered observations (tool calls of sessions with and without premature
disclosure, clustered by task): over all observations, and held within clusters."""

from __future__ import annotations

from uxbench.metrics.cluster_diff import cluster_mean_difference, within_cluster_difference


def test_a_cluster_in_one_group_moves_the_pooled_difference_not_the_within_one() -> None:
    # tasks t1..t4 have both kinds of session, one fewer call with disclosure; t5 (many calls) only has
    # sessions with disclosure, t6 (no call) only sessions without: the pooled difference is confounded
    clusters = ["t1", "t1", "t2", "t2", "t3", "t3", "t4", "t4", "t5", "t5", "t6", "t6"]
    values = [2, 3, 4, 5, 1, 2, 6, 7, 20, 20, 0, 0]
    in_a = [True, False] * 4 + [True, True, False, False]
    pooled = cluster_mean_difference(clusters, values, in_a, n_boot=500)
    within = within_cluster_difference(clusters, values, in_a, n_boot=500)
    assert pooled["a"] == round((2 + 4 + 1 + 6 + 40) / 6, 6) and pooled["b"] == round((3 + 5 + 2 + 7) / 6, 6)
    assert pooled["diff"] > 0  # more calls with disclosure, only because of t5 and t6
    assert within["diff"] == -1.0 and within["n_clusters"] == 4
    assert within["ci_low"] == within["ci_high"] == -1.0  # the same difference in every task


def test_the_within_interval_covers_varying_differences_and_is_widened() -> None:
    clusters = [f"t{i}" for i in range(8) for _ in range(2)]
    values = [v for i in range(8) for v in (i % 3, 0)]
    in_a = [True, False] * 8
    out = within_cluster_difference(clusters, values, in_a, n_boot=2000, seed=3)
    diffs = [i % 3 for i in range(8)]
    assert out["diff"] == sum(diffs) / 8 and out["n_clusters"] == 8
    assert out["ci_low"] < out["diff"] < out["ci_high"]


def test_no_cluster_with_both_groups_gives_no_figure() -> None:
    out = within_cluster_difference(["a", "b"], [1.0, 2.0], [True, False])
    assert out == {"diff": None, "ci_low": None, "ci_high": None, "n_clusters": 0}
    one = within_cluster_difference(["a", "a"], [1.0, 3.0], [True, False])
    assert one["diff"] == -2.0 and one["ci_low"] is None  # one cluster: no interval
