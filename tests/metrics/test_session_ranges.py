"""`uxbench sim run`'s summary intervals stay inside their metric's range: a count per assistant turn (acts,
thumbs, skims) is at most 100 per 100 turns, turns to success at least 1 (was: `Dislikes /100 turns 60.00
[47.75, 108.99]`, `94.74 [87.80, 100.23]` after the few-persona widening)."""

from __future__ import annotations

from uxbench.metrics.session import SessionOutcome, session_metrics


def _outcomes() -> list[SessionOutcome]:
    # three personas, nearly every reply disliked, complained about and skimmed; successes after 1 or 2 replies
    out = []
    for i, disliked in enumerate((4, 5, 5)):
        for trial in range(2):
            turns = 5 if trial == 0 else 1 + i % 2
            bad = min(disliked, turns)
            out.append(SessionOutcome(cluster=f"p{i}", trial=trial, success=True, reason="goal_complete",
                                      assistant_turns=turns, acts=("complain",) * bad, dislikes=bad,
                                      likes=turns - bad, skims=bad))
    return out


def test_per_turn_rates_and_turns_to_success_stay_in_range() -> None:
    metrics = session_metrics(_outcomes(), n_boot=500, seed=1)
    cells = [metrics["feedback"]["dislike"], metrics["feedback"]["like"],
             *metrics["signal_rates"]["rates"].values()]
    for cell in cells:
        if cell.get("ci_low") is None:
            continue
        assert 0.0 <= cell["ci_low"] <= cell["value"] <= cell["ci_high"] <= 100.0, cell
    assert max(c["ci_high"] for c in cells if c.get("ci_high") is not None) == 100.0  # clipped, not dropped
    turns = metrics["turns_to_success"]
    assert turns["ci_low"] is None or 1.0 <= turns["ci_low"] <= turns["value"], turns
