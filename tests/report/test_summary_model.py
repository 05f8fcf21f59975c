"""summary.json is validated with the models of `runs.summary`: what uxbench writes passes, a damaged
summary is refused with its first wrong field."""

from __future__ import annotations

from typing import Any

import pytest

from uxbench.errors import UxbenchError
from uxbench.metrics import judge_metrics
from uxbench.runs.summary import check_summary


def judge_summary() -> dict[str, Any]:
    golds = ["good", "bad"] * 10
    preds: list[str | None] = ["good", "bad", "neutral", None] * 5
    metrics = judge_metrics(golds, preds, strata={"scenario": ["s1", None] * 10}, n_boot=50)
    return {"task": "judge", "model": "scripted:x", "demo_data": False, "n_samples": 20, "n_errors": 0,
            "data": {"description": "d", "fingerprint": "f"}, "metrics": metrics, "errors": [], "usage": {}}


def test_what_the_metrics_write_passes() -> None:
    summary = judge_summary()
    assert check_summary(summary, "s.json") is summary
    check_summary({"task": "eval", "model": "m", "metrics": {"anything": "goes"}}, "s.json")  # not modelled yet


@pytest.mark.parametrize(("change", "field"), [
    (lambda s: s["metrics"]["all"]["bad_f1"].update(ci_low="low"), "metrics.all.bad_f1.ci_low"),
    (lambda s: s["metrics"]["breakdowns"]["scenario"]["s1"].update(n=1.5), "metrics.breakdowns.scenario.s1.n"),
    (lambda s: s.update(errors=3), "errors"),
    (lambda s: s.update(demo_data="yes"), "demo_data"),
    (lambda s: s["metrics"].pop("valid_only"), "metrics.valid_only"),
])
def test_wrong_value_types_name_the_field(change: Any, field: str) -> None:
    summary = judge_summary()
    change(summary)
    with pytest.raises(UxbenchError, match=rf"s\.json: field '{field}'"):
        check_summary(summary, "s.json")
    with pytest.raises(UxbenchError, match="must be a JSON object"):
        check_summary([summary], "s.json")
