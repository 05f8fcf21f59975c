"""`report.bias`: the self-preference matrix with family marks, agreement between judges, length bias and
calibration, from run directories whose verdicts the test chose; rendering fits 80 columns."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from runs_support import judge_key, write_eval_run, write_judge_run

from uxbench.data.model_meta import ModelInfo
from uxbench.errors import UxbenchError
from uxbench.report.bias import bias_report, relation
from uxbench.report.bias_render import render_bias

G, B = "good", "bad"
MINI, FLASH = "openai:gpt-4o-mini", "google:gemini-2.5-flash"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bias")
    short, long = "ok.", "a much longer and more detailed reply " * 5
    write_eval_run(root / "gpt", "openai:gpt-4o", [long] * 8 + [short] * 2, {
        MINI: [G] * 8 + [B] * 2,
        FLASH: [G] * 5 + [B] * 5,
    })
    write_eval_run(root / "claude", "anthropic:claude-sonnet-4-5", [long] * 3 + [short] * 7, {
        MINI: [G] * 3 + [B] * 7,
        FLASH: [G] * 6 + [B] * 4,
    })
    return root


def test_self_preference_matrix_and_marks(runs: Path) -> None:
    report = bias_report([runs / "gpt", runs / "claude"], n_boot=200)
    matrix = report["tasks"]["eval"]["self_preference"]
    cells = matrix["cells"]
    gpt_by_mini = cells[judge_key(MINI)]["openai:gpt-4o"]
    assert (gpt_by_mini["rate"]["k"], gpt_by_mini["rate"]["n"]) == (8, 10) and gpt_by_mini["relation"] == "*"
    assert cells[judge_key(MINI)]["anthropic:claude-sonnet-4-5"]["rate"]["value"] == pytest.approx(0.3)
    assert cells[judge_key(FLASH)]["openai:gpt-4o"]["rate"]["value"] == pytest.approx(0.5)
    assert cells[judge_key(FLASH)]["anthropic:claude-sonnet-4-5"]["rate"]["value"] == pytest.approx(0.6)
    assert all(c["relation"] == "" for key in cells for cand, c in cells[key].items()
               if (key, cand) != (judge_key(MINI), "openai:gpt-4o"))
    judges = {j["key"]: j for j in matrix["judges"]}
    assert judges[judge_key(MINI)]["family"] == "GPT" and judges[judge_key(FLASH)]["org"] == "Google"


def test_family_and_organisation_marks() -> None:
    gpt = ModelInfo(org="OpenAI", family="GPT")
    assert relation(gpt, ModelInfo(org="OpenAI", family="gpt")) == "*"
    assert relation(gpt, ModelInfo(org="openai", family="gpt-oss")) == "+"
    assert relation(gpt, ModelInfo(org="Google", family="Gemini")) == ""
    assert relation(None, gpt) == "" and relation(gpt, ModelInfo()) == ""


def test_agreement_pools_the_runs_and_equals_the_hand_computed_kappa(runs: Path) -> None:
    report = bias_report([runs], n_boot=200)  # the parent directory: both runs
    (entry,) = report["tasks"]["eval"]["agreement"]
    # pooled table: both good 8, only the first judge good 3, only the second 3, both bad 6 (n = 20):
    # p_o = 14/20; each judge 11 good / 9 bad: p_e = (121 + 81) / 400; kappa = (0.7 - 0.505) / 0.495
    assert entry["n"] == 20
    assert entry["agreement"]["value"] == pytest.approx(0.7)
    assert entry["kappa"]["value"] == pytest.approx((0.7 - 0.505) / 0.495)


def test_length_bias_sees_a_judge_that_likes_long_replies(runs: Path) -> None:
    report = bias_report([runs], n_boot=200)
    by_judge = {e["judge"]: e for e in report["tasks"]["eval"]["length_bias"]}
    mini = by_judge[judge_key(MINI)]
    assert mini["n"] == 20 and mini["measure"] == "good = 1, bad = 0"
    assert mini["spearman"]["value"] == pytest.approx(1.0)  # every long reply good, every short one bad
    lc = mini["length_controlled"]
    assert lc["groups"]["openai:gpt-4o"]["raw"]["value"] == pytest.approx(0.8)
    flash = by_judge[judge_key(FLASH)]
    assert flash["spearman"]["value"] is not None and abs(flash["spearman"]["value"]) < 0.5


def test_calibration_of_task1_runs_and_notes(tmp_path: Path, runs: Path) -> None:
    task1 = write_judge_run(tmp_path / "t1", "openai:gpt-4o", [("good", True), ("bad", False)] * 3)
    report = bias_report([runs, task1], n_boot=100)
    assert report["calibration"] == [] and any("without probability verdicts" in n for n in report["notes"])
    with pytest.raises(UxbenchError, match="Nothing to analyse"):
        bias_report([task1])
    with pytest.raises(UxbenchError, match="no such directory"):
        bias_report([tmp_path / "missing"])


def test_rendering_fits_80_columns_and_every_format_reads(runs: Path) -> None:
    report = bias_report([runs], n_boot=100)
    table = render_bias(report, "table", width=80)
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "80.0*" in table and "J1 = " in table and "Cohen's kappa" in table
    narrow = render_bias(report, "table", width=50)
    assert max(len(line) for line in narrow.splitlines()) <= 50
    assert "Good % by judge" in narrow and "…" not in narrow
    md = render_bias(report, "md")
    assert "| Candidate | J1 | J2 |" in md
    rows = list(csv.DictReader(io.StringIO(render_bias(report, "csv"))))
    kappa = next(r for r in rows if r["figure"] == "kappa")
    assert float(kappa["value"]) == pytest.approx((0.7 - 0.505) / 0.495) and kappa["n"] == "20"
    assert json.loads(render_bias(report, "json"))["kind"] == "uxbench.bias"
