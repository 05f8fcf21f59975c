"""Task 1 metrics against hand-computed values."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from uxbench.metrics import judge_metrics, turns_bucket, wilson_ci
from uxbench.metrics.proportions import percentile_interval

G, B = "good", "bad"


def _entries(m: dict[str, Any]) -> list[dict[str, Any]]:
    return [m[c][k] for c in ("all", "valid_only") for k in ("good_acc", "bad_acc", "accuracy", "avg_acc",
                                                            "positive_bias", "bad_f1")]


def test_simple_case_by_hand() -> None:
    golds = [G] * 4 + [B] * 4
    preds = [G, G, G, B, B, G, G, G]
    m = judge_metrics(golds, preds, n_boot=500)
    a = m["all"]
    assert (m["n"], m["n_good"], m["n_bad"]) == (8, 4, 4)
    assert a["good_acc"]["value"] == 0.75 and (a["good_acc"]["k"], a["good_acc"]["n"]) == (3, 4)
    assert a["bad_acc"]["value"] == 0.25 and (a["bad_acc"]["k"], a["bad_acc"]["n"]) == (1, 4)
    assert a["avg_acc"]["value"] == 0.5
    assert a["positive_bias"]["value"] == 0.5
    assert a["accuracy"]["value"] == 0.5
    # Bad-F1: tp=1, fp=1 (a good case called bad), fn=3 -> P=.5, R=.25, F1 = 2PR/(P+R) = 1/3.
    f1 = a["bad_f1"]
    assert (f1["tp"], f1["fp"], f1["fn"]) == (1, 1, 3)
    assert f1["precision"] == 0.5 and f1["recall"] == 0.25
    assert f1["value"] == pytest.approx(1 / 3)
    # Nothing unparseable: both conventions agree.
    assert m["valid_only"]["avg_acc"]["value"] == 0.5
    assert m["unparseable"]["k"] == 0 and m["unparseable"]["rate"] == 0.0
    assert m["neutral_escape"] is None
    assert a["good_acc"]["ci_low"] == pytest.approx(wilson_ci(3, 4)[0])


def test_both_conventions_with_unparseable_and_neutral() -> None:
    golds = [G] * 4 + [B] * 4
    preds = [G, G, None, B, B, B, None, "neutral"]
    m = judge_metrics(golds, preds, n_boot=500)
    a, v = m["all"], m["valid_only"]
    assert (a["good_acc"]["value"], a["bad_acc"]["value"]) == (0.5, 0.5)
    # Valid-only: the None answers leave the denominators; neutral stays in as a wrong answer.
    assert (v["good_acc"]["k"], v["good_acc"]["n"]) == (2, 3)
    assert (v["bad_acc"]["k"], v["bad_acc"]["n"]) == (2, 3)
    assert v["avg_acc"]["value"] == pytest.approx(2 / 3)
    assert v["accuracy"]["value"] == pytest.approx(4 / 6)
    # F1, all: tp=2, fp=1, fn=2 -> 4/7. Valid-only: fn=1 -> 4/6.
    assert a["bad_f1"]["value"] == pytest.approx(4 / 7)
    assert v["bad_f1"]["value"] == pytest.approx(2 / 3)
    assert m["unparseable"]["k"] == 2 and m["unparseable"]["n"] == 8 and m["unparseable"]["rate"] == 0.25
    assert m["prediction_counts"] == {"good": 2, "bad": 3, "neutral": 1, "unparseable": 2}
    assert m["confusion"]["bad"] == {"good": 0, "bad": 2, "neutral": 1, "unparseable": 1}
    esc = m["neutral_escape"]
    assert (esc["bad"]["k"], esc["bad"]["n"], esc["bad"]["value"]) == (1, 4, 0.25)
    assert (esc["good"]["k"], esc["good"]["value"]) == (0, 0.0)


def test_reproduces_published_gpt5_figures_in_both_conventions() -> None:
    # 893 of 998 valid good answers right, 554 of 985 valid bad ones; 2 and 15 unparseable.
    golds = [G] * 1000 + [B] * 1000
    preds = [G] * 893 + [B] * 105 + [None] * 2 + [B] * 554 + [G] * 431 + [None] * 15
    m = judge_metrics(golds, preds, n_boot=1000)
    v, a = m["valid_only"], m["all"]
    assert [round(100 * v[k]["value"], 1) for k in ("good_acc", "bad_acc", "avg_acc")] == [89.5, 56.2, 72.9]
    assert (a["good_acc"]["value"], a["bad_acc"]["value"]) == (0.893, 0.554)
    assert a["avg_acc"]["value"] == pytest.approx(0.7235)
    assert m["unparseable"]["k"] == 17
    for e in _entries(m):
        assert e["ci_low"] <= e["value"] <= e["ci_high"]
    # Avg-Acc CI half-width on ~2000 cases is about 2 points.
    assert 0.01 < a["avg_acc"]["ci_high"] - a["avg_acc"]["ci_low"] < 0.06


def _random_case(n: int, seed: int) -> tuple[list[str], list[str | None]]:
    rng = np.random.default_rng(seed)
    golds = rng.choice([G, B], size=n).tolist()
    preds: list[str | None] = []
    for g in golds:
        r = rng.random()
        if r < 0.05:
            preds.append(None)
        elif r < 0.1:
            preds.append("neutral")
        else:
            right = rng.random() < (0.85 if g == G else 0.45)
            preds.append(g if right else (B if g == G else G))
    return golds, preds


def test_cis_contain_point_deterministic_and_json() -> None:
    golds, preds = _random_case(400, 1)
    m1 = judge_metrics(golds, preds, n_boot=800, seed=5)
    m2 = judge_metrics(golds, preds, n_boot=800, seed=5)
    m3 = judge_metrics(golds, preds, n_boot=800, seed=6)
    assert m1 == m2
    assert m1["all"]["avg_acc"]["ci_low"] != m3["all"]["avg_acc"]["ci_low"]
    assert m1["bootstrap"]["n_boot"] == 800 and m1["bootstrap"]["seed"] == 5
    assert m1["all"]["avg_acc"]["n_boot"] == 800
    for e in _entries(m1):
        assert e["ci_low"] <= e["value"] <= e["ci_high"]
    json.dumps(m1, allow_nan=False)


def test_multinomial_bootstrap_matches_index_bootstrap() -> None:
    """The count-table bootstrap must agree with resampling case indices within each class."""
    golds, preds = _random_case(300, 2)
    m = judge_metrics(golds, preds, n_boot=4000, seed=0)
    g = np.array(golds)
    right = np.array([p == gg for gg, p in zip(golds, preds, strict=True)], dtype=float)
    rg, rb = right[g == G], right[g == B]
    rng = np.random.default_rng(123)
    reps = (rg[rng.integers(0, rg.size, (4000, rg.size))].mean(1)
            + rb[rng.integers(0, rb.size, (4000, rb.size))].mean(1)) / 2
    low, high = percentile_interval(reps)
    assert m["all"]["avg_acc"]["ci_low"] == pytest.approx(low, abs=0.012)
    assert m["all"]["avg_acc"]["ci_high"] == pytest.approx(high, abs=0.012)


def test_breakdowns_by_hand() -> None:
    golds = [G, G, B, B, G, B]
    preds = [G, None, B, G, G, None]
    strata: dict[str, list[str | int | None]] = {
        "n_turns": ["3-4", "1", "1", "9+", None, "3-4"],
        "scenario": ["a", "a", "a", "b", "b", "b"],
    }
    m = judge_metrics(golds, preds, strata=strata, n_boot=200)
    turns = m["breakdowns"]["n_turns"]
    assert list(turns) == ["1", "3-4", "9+", "(missing)"]
    one = turns["1"]
    assert (one["n"], one["n_good"], one["n_bad"]) == (2, 1, 1)
    assert (one["good_acc"]["value"], one["bad_acc"]["value"], one["avg_acc"]["value"]) == (0.0, 1.0, 0.5)
    assert one["unparseable"]["k"] == 1
    assert one["avg_acc"]["ci_low"] < 0.5 < one["avg_acc"]["ci_high"]
    assert turns["9+"]["avg_acc"]["value"] is None  # no good case in that group
    sc = m["breakdowns"]["scenario"]
    assert sc["a"]["good_acc"]["value"] == 0.5 and sc["b"]["bad_acc"]["value"] == 0.0


def test_undefined_statistics_are_none() -> None:
    m = judge_metrics([G, G, G], [G, B, None], n_boot=100)
    assert m["all"]["avg_acc"]["value"] is None and m["all"]["avg_acc"]["ci_low"] is None
    assert m["all"]["bad_acc"]["value"] is None
    assert m["all"]["bad_f1"]["value"] == 0.0  # one false alarm, no hit
    empty = judge_metrics([], [], n_boot=10)
    assert empty["n"] == 0 and empty["all"]["good_acc"]["value"] is None
    assert empty["all"]["bad_f1"]["value"] is None
    json.dumps(empty, allow_nan=False)


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="gold"):
        judge_metrics(["fine"], [G])
    with pytest.raises(ValueError, match="prediction"):
        judge_metrics([G], ["maybe"])
    with pytest.raises(ValueError, match="length"):
        judge_metrics([G, B], [G])
    with pytest.raises(ValueError, match="stratum"):
        judge_metrics([G, B], [G, B], strata={"x": [1]})


def test_large_input_runs() -> None:
    golds, preds = _random_case(100_000, 3)
    m = judge_metrics(golds, preds, strata={"s": [i % 7 for i in range(100_000)]}, n_boot=2000)
    assert m["n"] == 100_000 and len(m["breakdowns"]["s"]) == 7
    assert m["all"]["avg_acc"]["ci_high"] - m["all"]["avg_acc"]["ci_low"] < 0.02


@pytest.mark.parametrize(
    ("n", "bucket"), [(0, "0"), (1, "1"), (2, "2"), (3, "3-4"), (4, "3-4"), (5, "5-8"), (8, "5-8"), (9, "9+"),
                      (40, "9+")]
)
def test_turns_bucket(n: int, bucket: str) -> None:
    assert turns_bucket(n) == bucket


def test_turns_bucket_negative() -> None:
    with pytest.raises(ValueError):
        turns_bucket(-1)
