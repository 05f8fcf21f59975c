"""Session metrics against hand computation on a 12-session fixture, and the cluster bootstrap's coverage in a
seeded simulation study."""

from __future__ import annotations

import numpy as np
import pytest

from uxbench.metrics.session import SessionOutcome, auc, cluster_ratio, paired_comparison, pass_hat_k, session_metrics


def approx(value: float) -> object:
    return pytest.approx(value, abs=1e-5)  # figures are stored with 6 decimals


def _o(cluster: str, trial: int, success: bool, reason: str, turns: int, acts: tuple[str, ...],
       sat: tuple[float, ...], likes: int = 0, dislikes: int = 0, chains: tuple[str, ...] = ()) -> SessionOutcome:
    return SessionOutcome(cluster=cluster, trial=trial, success=success, reason=reason, assistant_turns=turns,
                          acts=acts, satisfaction=sat, likes=likes, dislikes=dislikes, chains=chains)


FIXTURE = [
    _o("a", 0, True, "goal_complete", 2, ("follow_up", "stop_success"), (3.0, 3.75, 4.5), likes=1),
    _o("a", 1, True, "goal_complete", 3, ("complain", "follow_up", "stop_success"), (3.0, 2.4, 3.65, 4.4),
       chains=("recovered",)),
    _o("a", 2, False, "patience_exhausted", 2, ("rephrase", "dismiss"), (3.0, 2.4, 1.8), dislikes=2,
       chains=("user_gave_up",)),
    _o("b", 0, True, "goal_complete", 2, ("answer", "stop_success"), (3.0, 3.1, 3.85)),
    _o("b", 1, True, "goal_complete", 4, ("answer", "rephrase", "follow_up", "stop_success"),
       (3.0, 3.1, 2.5, 3.75, 4.5), chains=("recovered",)),
    _o("b", 2, False, "max_turns", 4, ("repeat", "complain", "rephrase", "leave"), (3.0, 2.4, 1.8, 1.2),
       dislikes=1, chains=("failed_recovery",)),
    _o("c", 0, False, "patience_exhausted", 1, ("leave",), (3.0,), chains=("user_gave_up",)),
    _o("c", 1, False, "error", 1, (), (3.0,)),
    _o("c", 2, True, "goal_complete", 2, ("follow_up", "stop_success"), (3.0, 3.75, 4.5), likes=2),
    _o("d", 0, True, "goal_complete", 3, ("complain", "follow_up", "stop_success"), (3.0, 2.4, 3.65, 4.4),
       likes=1, chains=("recovered",)),
    _o("d", 1, False, "out_of_scope", 1, ("leave",), (3.0,)),
    _o("d", 2, False, "patience_exhausted", 3, ("complain", "complain", "dismiss"), (3.0, 2.4, 1.8, 1.2),
       dislikes=3, chains=("user_gave_up",)),
]


def test_session_metrics_equal_hand_computation() -> None:
    m = session_metrics(FIXTURE, n_boot=200)
    assert m["n_sessions"] == 12 and m["n_personas"] == 4
    assert m["success_rate"]["value"] == approx(6 / 12) and m["success_rate"]["n"] == 12
    assert m["turns_to_success"]["value"] == approx(2.5)  # [2, 3, 2, 4, 2, 3]
    assert m["turns_to_success"]["distribution"] == {"2": 3, "3": 2, "4": 1}
    assert m["abandonment_rate"]["value"] == approx(3 / 12)
    assert m["termination"]["max_turns"]["value"] == approx(1 / 12)
    assert m["termination"]["error"]["value"] == approx(1 / 12)
    turns = 2 + 3 + 2 + 2 + 4 + 4 + 1 + 1 + 2 + 3 + 1 + 3  # 28 assistant turns
    rates = m["signal_rates"]["rates"]
    assert m["signal_rates"]["n"] == turns
    assert rates["complain"]["value"] == approx(100 * 5 / turns)
    assert rates["rephrase"]["value"] == approx(100 * 3 / turns)
    assert rates["leave"]["value"] == approx(100 * 3 / turns)
    assert rates["any_dissatisfied"]["value"] == approx(100 * (5 + 3 + 1 + 2 + 3) / turns)
    assert m["feedback"]["like"]["value"] == approx(100 * 4 / turns)
    assert m["feedback"]["dislike"]["value"] == approx(100 * 6 / turns)
    assert m["recovery"]["n"] == 7 and m["recovery"]["recovered"]["value"] == approx(3 / 7)
    finals = [4.5, 4.4, 1.8, 3.85, 4.5, 1.2, 3.0, 3.0, 4.5, 4.4, 3.0, 1.2]
    assert m["satisfaction"]["final"]["value"] == approx(np.mean(finals))
    assert m["satisfaction"]["min"]["value"] == approx(np.mean([3.0, 2.4, 1.8, 3.0, 2.5, 1.2, 3.0, 3.0, 3.0,
                                                                        2.4, 3.0, 1.2]))
    assert m["satisfaction"]["by_turn"][0] == {"turn": 1, "mean": 3.0, "n": 12}
    # pass^k: a 2/3, b 2/3, c 1/3, d 1/3 successes
    assert m["pass_k"]["1"]["value"] == approx((2 / 3 + 2 / 3 + 1 / 3 + 1 / 3) / 4)
    assert m["pass_k"]["2"]["value"] == approx((1 / 3 + 1 / 3 + 0 + 0) / 4)
    assert m["pass_k"]["3"]["value"] == approx(0.0)
    for cell in (m["success_rate"], rates["complain"], m["satisfaction"]["final"]):
        assert cell["ci_low"] <= cell["value"] <= cell["ci_high"] and cell["n_clusters"] == 4


def test_helpers() -> None:
    assert auc([3.0, 4.0, 5.0]) == approx(4.0) and auc([2.0]) == 2.0 and auc([]) is None
    assert pass_hat_k(2, 3, 2) == approx(1 / 3) and pass_hat_k(1, 3, 4) is None


def test_paired_comparison_on_the_same_personas_and_seeds() -> None:
    better = [SessionOutcome(cluster=o.cluster, trial=o.trial, success=True, reason="goal_complete",
                             assistant_turns=o.assistant_turns, acts=("stop_success",), satisfaction=(3.0, 4.5))
              for o in FIXTURE]
    report = paired_comparison(FIXTURE, better, n_boot=500)
    assert report["n_pairs"] == 12 and report["only_a"] == report["only_b"] == 0
    diff = report["metrics"]["success_rate"]
    assert diff["diff"] == approx(0.5) and diff["ci_low"] > 0 and diff["significant"]
    same = paired_comparison(FIXTURE, FIXTURE, n_boot=200)["metrics"]["success_rate"]
    assert same["diff"] == 0 and not same["significant"]


def test_cluster_bootstrap_covers_the_true_value_in_a_seeded_simulation() -> None:
    """30 personas x 4 trials; each persona's success probability drawn from Beta(2, 2) (sessions of a persona
    are correlated), true rate 0.5: the 95% interval must cover it in at least 93 of 100 studies."""
    rng = np.random.default_rng(20260101)
    covered = 0
    for study in range(100):
        p = rng.beta(2, 2, size=30)
        successes = rng.binomial(4, p).astype(float)
        cell = cluster_ratio(successes, np.full(30, 4.0), n_boot=1000, seed=study)
        covered += int(cell["ci_low"] <= 0.5 <= cell["ci_high"])
    assert covered >= 93, covered
