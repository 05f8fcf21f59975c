"""Sampling: seeded and order-independent, floors, caps, proportional shares, one case per conversation
across tasks (task priority decides), and eligibility per task."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from uxbench.mining.agents import Candidate
from uxbench.mining.sample import SampleConfig, SampleReport, sample_cases

NONE_ELSE = {"target_bad": 0, "target_good": 0, "target_eval": 0, "target_recovery": 0}


def cand(cid: str, turn: int = 1, kind: str = "bad", dim: str = "verbosity", scen: str = "entertainment",
         **kw: Any) -> Candidate:
    fields: dict[str, Any] = {
        "conversation_id": cid, "kind": kind, "turn_index": turn, "query_turn_index": turn - 1,
        "scenario": scen, "status": "kept", "kept": True, "quality": "high", "stage": "done",
        "signal": "thumbs_down" if kind == "bad" else "thumbs_up",
        ("failure_dimension" if kind == "bad" else "success_dimension"): dim,
    }
    fields.update(kw)
    return Candidate(**fields)


def only(task: str, **kw: Any) -> SampleConfig:
    targets = dict(NONE_ELSE)
    targets.update(kw.pop("targets", {}))
    return SampleConfig(**targets, **kw)


def pool(n: int, dim: str, scen: str, prefix: str | None = None) -> list[Candidate]:
    return [cand(f"{prefix or dim + scen}-{i}", dim=dim, scen=scen) for i in range(n)]


def ids(cases: list[Candidate]) -> list[tuple[str | None, str, int]]:
    return [(c.task, c.conversation_id, c.turn_index) for c in cases]


def test_seeded_deterministic_and_independent_of_input_order() -> None:
    cases = pool(40, "verbosity", "entertainment") + pool(25, "factual_error", "creative_content") + pool(
        10, "task_incomplete", "decision_support")
    cfg = only("judge_bad", targets={"target_bad": 20}, seed=7)
    first = sample_cases(cases, cfg)
    shuffled = cases[:]
    random.Random(3).shuffle(shuffled)
    assert ids(sample_cases(shuffled, cfg)) == ids(first)
    other = sample_cases(cases, cfg.model_copy(update={"seed": 8}))
    assert ids(other) != ids(first) and len(other) == len(first) == 20
    assert all(c.task == "judge_bad" for c in first)
    assert cases[0].task is None  # the inputs are not modified


def test_floors_reach_small_strata() -> None:
    cases = pool(100, "verbosity", "entertainment")
    cases += pool(3, "factual_error", "creative_content") + pool(3, "emotional_tone", "emotional_support")
    cases += pool(1, "system_error", "work_productivity")
    picked = sample_cases(cases, only("judge_bad", targets={"target_bad": 12}, floor_per_stratum=2,
                                      cap_share=1.0))
    counts = Counter(c.dimension for c in picked)
    assert counts["factual_error"] >= 2 and counts["emotional_tone"] >= 2 and counts["system_error"] == 1
    assert len(picked) == 12


def test_dimension_cap_holds_even_if_the_target_is_missed() -> None:
    cases = pool(50, "verbosity", "entertainment") + pool(50, "verbosity", "creative_content")
    cases += pool(5, "factual_error", "entertainment")
    picked = sample_cases(cases, only("judge_bad", targets={"target_bad": 20}, cap_share=0.4))
    counts = Counter(c.dimension for c in picked)
    assert counts == {"verbosity": 8, "factual_error": 5}
    scen = sample_cases(cases, only("judge_bad", targets={"target_bad": 20}, cap_share=1.0,
                                    scenario_cap_share=0.25))
    assert max(Counter(c.scenario for c in scen).values()) <= 5


def test_beyond_the_floors_shares_follow_the_pool() -> None:
    cases = pool(60, "verbosity", "entertainment") + pool(30, "factual_error", "entertainment")
    cases += pool(10, "reliability", "entertainment")
    picked = sample_cases(cases, only("judge_bad", targets={"target_bad": 30}, cap_share=1.0, floor_per_stratum=2))
    counts = Counter(c.dimension for c in picked)
    assert len(picked) == 30
    assert counts["verbosity"] > counts["factual_error"] > counts["reliability"] >= 2
    assert abs(counts["verbosity"] - 30 * 0.6) <= 2


def test_one_case_per_conversation_across_tasks_and_priority() -> None:
    cases = []
    for i in range(30):
        cid = f"conv{i}"
        cases.append(cand(cid, 1, signal="complaint", next_user_turn=2, fired_signals=["complaint"]))
        cases.append(cand(cid, 3, dim="factual_error"))
        cases.append(cand(cid, 5, kind="good", dim="accurate_answer"))
    cfg = SampleConfig(target_bad=10, target_good=10, target_eval=10, target_recovery=5, cap_share=1.0)
    picked = sample_cases(cases, cfg)
    convs = Counter(c.conversation_id for c in picked)
    assert max(convs.values()) == 1 and len(picked) == 30
    assert Counter(c.task for c in picked) == {"recovery": 5, "judge_bad": 10, "judge_good": 10, "eval": 5}
    assert [c.task for c in picked] == sorted(
        (c.task for c in picked), key=["judge_bad", "judge_good", "eval", "recovery"].index)  # type: ignore[arg-type]
    assert all(c.turn_index == 1 for c in picked if c.task == "recovery")
    assert all(c.kind == "good" for c in picked if c.task == "judge_good")
    eval_first = sample_cases(cases, cfg.model_copy(update={"task_priority": ("eval", "recovery", "judge_bad",
                                                                              "judge_good")}))
    assert Counter(c.task for c in eval_first) == {"eval": 10, "recovery": 5, "judge_bad": 10, "judge_good": 5}


def test_eligibility_per_task() -> None:
    cases = [
        cand("ctx", needs_context=True, signal="complaint", next_user_turn=2, fired_signals=["complaint"]),
        cand("plain"),
        cand("end", signal="complaint", fired_signals=["complaint"], next_user_turn=None),
        cand("rejected", status="rejected", kept=False),
        cand("failed", status="failed", kept=False),
        cand("no_dim", failure_dimension=None),
    ]
    evals = sample_cases(cases, only("eval", targets={"target_eval": 10}))
    assert {c.conversation_id for c in evals} == {"plain", "end"}
    rec = sample_cases(cases, only("recovery", targets={"target_recovery": 10}))
    assert [c.conversation_id for c in rec] == ["ctx"]
    assert sample_cases(cases, only("judge_good", targets={"target_good": 10})) == []


def test_unlimited_target_takes_every_conversation_once() -> None:
    cases = [*pool(30, "verbosity", "entertainment"), cand("verbosityentertainment-0", 3, dim="factual_error")]
    report = SampleReport()
    picked = sample_cases(cases, only("judge_bad", targets={"target_bad": None}), report=report)
    assert len(picked) == 30
    t = report.tasks["judge_bad"]
    assert (t.target, t.eligible, t.available, t.selected) == (None, 31, 31, 30)
    assert sum(t.strata.values()) == 30


def test_downgraded_cases_come_after_sound_ones() -> None:
    cases = [cand(f"m{i}", quality="medium") for i in range(10)] + [cand(f"h{i}") for i in range(10)]
    picked = sample_cases(cases, only("judge_bad", targets={"target_bad": 10}, cap_share=1.0))
    assert {c.conversation_id[0] for c in picked} == {"h"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_report_matches_selection(seed: int) -> None:
    cases = pool(20, "verbosity", "entertainment") + pool(20, "factual_error", "creative_content")
    report = SampleReport(seed=seed)
    picked = sample_cases(cases, only("judge_bad", targets={"target_bad": 10}, seed=seed, cap_share=0.5), report=report)
    assert report.tasks["judge_bad"].selected == len(picked) == 10
    assert report.tasks["judge_bad"].strata == dict(
        sorted(Counter(f"{c.dimension}|{c.scenario}" for c in picked).items()))
