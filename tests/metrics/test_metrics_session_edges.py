"""Intervals that stay honest at the edges: a paired difference never leaves what the metric's range allows, one
persona gives no interval (flagged, not `83.3 [83.3, 83.3]`), a rate of 0 or a proportion of 1 gets a Wilson
interval on the personas, a simulated rate of 0 gives a ratio interval that says so, and what free mode does
not measure is "not measured", never 0."""

from __future__ import annotations

import numpy as np
import pytest

from uxbench.metrics.session import (
    METRIC_RANGES,
    SessionOutcome,
    cluster_ratio,
    paired_comparison,
    session_metrics,
)
from uxbench.metrics.sim_real import compare_reactions
from uxbench.report.render import paired_diff, pct


def _o(cluster: str, trial: int, success: bool, turns: int, acts: tuple[str, ...], sat: tuple[float, ...] = (),
       measured: bool = True) -> SessionOutcome:
    return SessionOutcome(cluster=cluster, trial=trial, success=success, reason="goal_complete" if success else
                          "patience_exhausted", assistant_turns=turns, acts=acts, satisfaction=sat,
                          acts_measured=measured)


def test_paired_intervals_stay_inside_the_range_at_its_edge() -> None:
    """A: every reply complained about (100 per 100 turns), the user unhappy (1); B: no complaint, all happy (5).
    With few personas the widened percentile interval used to leave the range (-100.192 for a -100 floor)."""
    a, b = [], []
    for i in range(3):
        for t in range(2):
            turns = 2 + (i + t) % 3
            a.append(_o(f"p{i}", t, i == 0 and t == 0, turns, ("complain",) * turns, (3.0, 1.0)))
            b.append(_o(f"p{i}", t, True, turns, ("follow_up",) * (turns - 1) + ("stop_success",), (3.0, 5.0)))
    out = paired_comparison(a, b, n_boot=500, seed=3)
    for name, m in out["metrics"].items():
        low, high = METRIC_RANGES[name]
        assert low - high <= m["ci_low"] <= m["diff"] <= m["ci_high"] <= high - low, (name, m)
    assert out["metrics"]["dissatisfied_per_100_turns"]["diff"] == pytest.approx(-100.0)
    assert out["metrics"]["dissatisfied_per_100_turns"]["ci_low"] >= -100.0
    assert out["metrics"]["success_rate"]["ci_high"] <= 1.0


def test_one_persona_gives_no_interval_and_says_so() -> None:
    cell = cluster_ratio(np.array([5.0]), np.array([6.0]), n_boot=200)
    assert cell["value"] == pytest.approx(5 / 6, abs=1e-6) and cell["ci_low"] is None and cell["ci_high"] is None
    assert "one persona" in cell["degenerate"]
    assert pct(cell) == "83.3 (1 persona: no CI)"
    one = [_o("p", t, t == 0, 2, ("complain", "leave")) for t in range(3)]
    paired = paired_comparison(one, [_o("p", t, True, 2, ("follow_up",)) for t in range(3)], n_boot=200)
    m = paired["metrics"]["success_rate"]
    assert m["ci_low"] is None and m["significant"] is False and "(1 persona: no CI)" in paired_diff(m)


def test_a_rate_of_zero_and_a_proportion_of_one_get_wilson_on_the_personas() -> None:
    zero = cluster_ratio(np.zeros(12), np.full(12, 4.0), n_boot=200, scale=100.0, bounds=(0.0, np.inf))
    assert zero["value"] == 0.0 and zero["ci_low"] == 0.0 and zero["ci_high"] > 20.0  # not [0.00, 0.00]
    assert "wilson" in zero["method"]
    everyone = cluster_ratio(np.full(12, 2.0), np.full(12, 2.0), n_boot=200)
    assert everyone["value"] == 1.0 and everyone["ci_high"] == 1.0 and everyone["ci_low"] < 0.8
    every_reply = cluster_ratio(np.full(12, 3.0), np.full(12, 3.0), n_boot=200, scale=100.0, bounds=(0.0, np.inf))
    assert every_reply["value"] == 100.0 and every_reply["ci_low"] < 80.0  # not [100.0, 100.0]


def test_a_simulated_rate_of_zero_gives_a_ratio_interval_that_says_so() -> None:
    real = [["complain", "continue", "continue"], ["continue", "repeat"], ["continue", "continue"]] * 5
    sim = [["continue", "continue"], ["continue"]] * 8
    out = compare_reactions(real, sim, ("continue", "complain", "repeat"), {"complain", "repeat"}, n_boot=300)
    ratio = out["rates"]["complain"]["ratio_sim_over_real"]
    assert ratio["value"] == 0.0 and ratio["ci_low"] == 0.0 and ratio["ci_high"] > 0.0
    assert "no simulated event" in ratio["note"]
    real_zero = compare_reactions(sim, real, ("continue", "complain", "repeat"), {"complain", "repeat"}, n_boot=100)
    assert real_zero["rates"]["complain"]["ratio_sim_over_real"]["value"] is None
    assert "no real event" in real_zero["rates"]["complain"]["ratio_sim_over_real"]["note"]


def test_a_side_where_every_turn_is_the_reaction_keeps_its_uncertainty_in_the_ratio() -> None:
    """Six simulated sessions that continue after every reply: the simulated rate's Wilson interval is wide, and
    the ratio's interval must not be as narrow as the real side alone (every bootstrap replicate says 1.0)."""
    real = [["continue", "continue", "complain"], ["continue", "end"], ["continue", "continue"]] * 20
    sim = [["continue", "continue"]] * 6
    out = compare_reactions(real, sim, ("continue", "complain", "end"), {"complain"}, n_boot=300)
    ratio, sim_rate = out["rates"]["continue"]["ratio_sim_over_real"], out["rates"]["continue"]["sim"]
    real_rate = out["rates"]["continue"]["real"]
    assert sim_rate["value"] == 1.0 and sim_rate["ci_low"] < 0.8
    assert ratio["ci_low"] <= sim_rate["ci_low"] / real_rate["ci_high"] + 1e-12
    assert ratio["ci_low"] < ratio["value"] * 0.8 and "wilson" in ratio["method"].lower()


def test_a_paired_difference_whose_replicates_never_vary_is_not_a_point() -> None:
    """Six personas, every session a success in both runs (two deterministic configurations): not
    `+0.000 [+0.000, +0.000]`, which would claim the runs can never differ; all successes against all failures is
    still a sure difference."""
    good = [_o(f"p{i}", 0, True, 2, ()) for i in range(6)]
    also_good = [_o(f"p{i}", 0, True, 2, ()) for i in range(6)]
    same = paired_comparison(good, also_good, n_boot=200)["metrics"]["success_rate"]
    assert same["diff"] == 0.0 and same["ci_low"] < -0.3 and same["ci_high"] > 0.3 and not same["significant"]
    assert "newcombe" in same["method"] and same["p_value"] == 1.0
    assert "[-0.3" in paired_diff(same)
    bad = [_o(f"p{i}", 0, False, 2, ()) for i in range(6)]
    worse = paired_comparison(good, bad, n_boot=200)["metrics"]["success_rate"]
    assert worse["diff"] == -1.0 and worse["ci_low"] == -1.0 and -1.0 < worse["ci_high"] < 0.0
    assert worse["significant"] and worse["p_value"] < 0.05


def test_free_mode_acts_are_not_measured_rather_than_zero() -> None:
    free = [_o(f"p{i}", 0, i % 2 == 0, 3, ("free", "free"), measured=False) for i in range(6)]
    metrics = session_metrics(free, n_boot=100)
    assert metrics["signal_rates"]["rates"]["any_dissatisfied"]["value"] is None
    assert pct(metrics["signal_rates"]["rates"]["complain"]) == "not measured"
    assert metrics["success_rate"]["value"] == 0.5
    structured = [_o(f"p{i}", 0, True, 3, ("complain", "follow_up"), (3.0, 2.0)) for i in range(6)]
    paired = paired_comparison(structured, free, n_boot=100)
    assert "dissatisfied_per_100_turns" not in paired["metrics"]
    assert "free mode has no acts" in paired["not_measured"]["dissatisfied_per_100_turns"]
    assert "final_satisfaction" in paired["not_measured"]


def test_identical_inputs_give_identical_intervals_whatever_their_order() -> None:
    outcomes = [_o(f"p{i % 5}", i // 5, i % 3 == 0, 2 + i % 3, ("complain",) * (i % 2)) for i in range(20)]
    first = session_metrics(outcomes, n_boot=300, seed=7)
    assert session_metrics(list(reversed(outcomes)), n_boot=300, seed=7) == first


def test_a_gap_against_a_side_without_events_keeps_that_sides_uncertainty() -> None:
    """The simulated users never complained (0 of 40 turns over 8 sessions): the bootstrap gap would be as narrow
    as the real side alone; Newcombe's interval keeps the simulated rate's own Wilson width."""
    real = [["complain", "continue", "continue", "continue"]] * 30
    sim = [["continue"] * 5] * 8
    out = compare_reactions(real, sim, ("continue", "complain"), {"complain"}, n_boot=300)
    gap = out["cooperativeness_gap"]
    assert gap["value"] == pytest.approx(0.25)
    assert gap["ci_low"] <= 0.25 - (out["dissatisfied"]["sim"]["ci_high"] - 0.0) * 0.9
    assert "newcombe" in gap["method"]


def _varied(seed: int, n_personas: int, trials: int, *, acts: bool = True, state: bool = True) -> list[SessionOutcome]:
    import random

    rng = random.Random(seed)
    out = []
    for p in range(n_personas):
        for t in range(trials):
            success = rng.random() < 0.5
            turns = rng.randint(1, 6)
            out.append(SessionOutcome(
                cluster=f"p{p}", trial=t, success=success,
                reason="goal_complete" if success else rng.choice(["patience_exhausted", "max_turns", "error"]),
                assistant_turns=turns,
                acts=tuple(rng.choice(["complain", "follow_up", "rephrase", "thank"]) for _ in range(turns)),
                satisfaction=tuple(float(rng.randint(1, 5)) for _ in range(turns)) if state and rng.random() < 0.8
                else (),
                acts_measured=acts,
            ))
    return out


def test_the_headline_equals_the_same_cells_of_the_whole_metrics() -> None:
    """`session_headline` (the per-language summary) gives, cell for cell, what `session_metrics` gives for the
    headline's keys, on many shapes: none, one persona, no successes, no acts (free mode), no satisfaction."""
    from uxbench.metrics.session import session_headline, session_metrics
    from uxbench.sim.summary import _headline

    cases = [[], _varied(1, 1, 5), _varied(2, 6, 4), _varied(3, 12, 3, acts=False), _varied(4, 5, 5, state=False),
             [o for o in _varied(5, 8, 3) if not o.success]]
    for outcomes in cases:
        whole = _headline(session_metrics(outcomes, n_boot=200, seed=3))
        assert session_headline(outcomes, n_boot=200, seed=3) == whole
