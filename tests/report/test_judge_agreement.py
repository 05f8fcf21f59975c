"""`uxbench bias` over Task 1 runs of three judges (scripted rule files) on the same cases: Fleiss' kappa of the
labels and of the Likert scores equals the hand computation, and each run's tie share is shown."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_support import invoke, write_jsonl

from uxbench.metrics.agreement import fleiss_kappa
from uxbench.report.bias import bias_report
from uxbench.report.bias_render import render_bias

ANSWERS = {  # judge -> its 1-4 score of cases c0..c5 (c0-c2 liked, c3-c5 disliked)
    "a": [4, 3, 3, 2, 1, 3],
    "b": [4, 4, 3, 1, 1, 2],
    "c": [3, 3, 3, 3, 2, 1],
}


def test_fleiss_kappa_across_task1_judges_and_ties(tmp_path: Path) -> None:
    rows = [{"cid": f"c{i}", "ground_truth": 1 if i < 3 else -1, "query": f"question {i}",
             "agent_response_full": f"reply number {i}"} for i in range(6)]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    runs = []
    for judge, scores in ANSWERS.items():
        rules = tmp_path / f"{judge}.json"
        rules.write_text(json.dumps([{"pattern": f"reply number {i}", "response": str(s)}
                                     for i, s in enumerate(scores)]), encoding="utf-8")
        out = tmp_path / f"run-{judge}"
        result = invoke("run", "--model", f"scripted:file:{rules}", "--quiet", "--data", data, "--out", out,
                        "--formulation", "likert", "--likert-scale", "4", "--lang", "en")
        assert result.exit_code == 0, result.output
        runs.append(out)
    report = bias_report(runs, n_boot=200)
    (group,) = report["judge_agreement"]["groups"]
    threshold = 3  # 1-4: 3 and 4 are good
    labels = [["good" if ANSWERS[j][i] >= threshold else "bad" for j in ANSWERS] for i in range(6)]
    scores = [[str(ANSWERS[j][i]) for j in ANSWERS] for i in range(6)]
    assert group["labels"]["kappa"] == pytest.approx(fleiss_kappa(labels)["kappa"])
    assert group["scores"]["kappa"] == pytest.approx(fleiss_kappa(scores)["kappa"])
    assert group["n_shared_cases"] == 6 and group["labels"]["ci_low"] is not None
    ties = {t["model"].split(":")[-1]: t for t in report["judge_agreement"]["ties"]}
    assert len(ties) == 3
    # judge c: liked 3,3,3 vs disliked 3,2,1 -> 3 of 9 pairs tie
    c_ties = next(t for t in report["judge_agreement"]["ties"] if "c.json" in t["model"])
    assert c_ties["tie_share"]["value"] == pytest.approx(3 / 9)
    table = render_bias(report, "table", width=100)
    assert "Fleiss' kappa" in table and "Same score %" in table
    assert "fleiss_kappa_scores" in render_bias(report, "csv")
