"""The answers that take no side (skip; pairwise tie and both bad) and the human majority: a skip is no judgment,
a tie or both bad is counted apart from the accuracies, and one annotator's judgments are no majority (`human
results` with 1 of 3 annotators reports none, and says why). The study's language is chosen from its items."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent.parent / "web"))
from web_support import write_eval_run, write_judge_run

from uxbench.cli.main import app
from uxbench.errors import UxbenchError
from uxbench.human.anchored import human_anchored
from uxbench.human.results import export_rows, results_text, study_results, vote
from uxbench.human.study import Study


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_judge_run(tmp_path_factory.mktemp("c") / "t1", "openai:gpt-4o", [i % 3 != 0 for i in range(30)])


def test_vote_needs_two_judgments_and_a_clear_winner() -> None:
    assert vote(["good", None, None], 2) == (None, "single")
    assert vote(["good", "skip", None], 2) == (None, "single")  # a skip is no judgment
    assert vote(["good", "good", "bad"], 2) == ("good", "majority")
    assert vote(["A", "B"], 2) == (None, "tie")
    assert vote(["tie", "tie", "A"], 2) == ("tie", "majority")
    assert vote([None, "skip"], 2) == (None, "none")
    assert vote(["bad"], 1) == ("bad", "majority")  # a study of one annotator


def test_one_annotator_of_three_is_no_human_majority(run_dir: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(run_dir), n=6, annotators=3)
    first, _, _ = study.annotators()
    for item in study.items():
        study.judge(first, item["item_id"], item["label"])
    results = study_results(study, n_boot=100)
    assert results["majority"] == {"n_judged": 6, "n_ties": 0, "n_single": 6, "min_votes": 2, "n_majority": 0,
                                   "n_undecided": 0}
    assert results["majority_accuracy"] is None
    assert all(r["n"] == 0 for r in results["human_judge"].values())
    text = results_text(results)
    assert "Human majority: none yet: of 6 judged items, 0 tied (no majority) and 6 judged by one annotator only " \
           "(a majority needs 2)." in text
    assert "Human majority against the labels" not in text and "Human majority vs each judge" not in text
    assert "annotator-1: 100.0%" in text  # the one annotator's own accuracy is still there


def test_a_second_annotator_makes_majorities_and_skips_are_counted_apart(run_dir: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(run_dir), n=6, annotators=3)
    one, two, _ = study.annotators()
    items = study.items()
    for item in items:
        study.judge(one, item["item_id"], item["label"])
    for item in items[:4]:
        study.judge(two, item["item_id"], item["label"])
    study.judge(two, items[4]["item_id"], "skip")
    results = study_results(study, n_boot=100)
    assert results["majority"]["n_majority"] == 4 and results["majority"]["n_single"] == 2
    assert results["majority_accuracy"]["k"] == 4 and results["majority_accuracy"]["n"] == 4
    second = next(a for a in results["annotators"] if a["annotator"] == two.name)
    assert second["n_judged"] == 5 and second["n_skipped"] == 1 and second["accuracy"]["n"] == 4
    given = Counter([i["label"] for i in items] + [i["label"] for i in items[:4]])
    assert results["answers"] == {"good": given["good"], "bad": given["bad"], "skip": 1}
    text = results_text(results)
    assert "Human majority: 4 of 6 judged items; 0 tied (no majority) and 2 judged by one annotator only" in text
    assert "(1 skipped)" in text and f"Answers: good {given['good']}, bad {given['bad']}, skip 1" in text


def test_pairwise_tie_and_both_bad_take_no_side(run_dir: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "p", str(run_dir), n=4, annotators=2, mode="pairwise")
    a, b = study.annotators()
    items = study.items()
    for item in items:
        study.judge(a, item["item_id"], item["label"])
    study.judge(b, items[0]["item_id"], items[0]["label"])
    study.judge(b, items[1]["item_id"], "tie")
    study.judge(b, items[2]["item_id"], "both_bad")
    study.judge(b, items[3]["item_id"], "both_bad")
    with pytest.raises(UxbenchError, match="tie, both_bad, skip"):
        study.judge(b, items[3]["item_id"], "good")
    results = study_results(study, n_boot=100)
    second = next(r for r in results["annotators"] if r["annotator"] == b.name)
    assert second["n_undecided"] == 3 and second["accuracy"]["n"] == 1 and second["accuracy"]["k"] == 1
    assert results["majority"]["n_majority"] == 1 and results["majority"]["n_ties"] == 3
    assert results["fleiss"]["n_items"] == 4  # tie and both bad are categories of their own
    assert "(3 tie or both bad)" in results_text(results)
    exported = {(r["annotator"], r["item_id"]): r["correct"] for r in export_rows(study)}
    assert exported[(b.name, items[1]["item_id"])] is None and exported[(b.name, items[0]["item_id"])] is True


def test_a_skip_is_no_label_for_the_human_anchored_good_rate(tmp_path: Path) -> None:
    run = write_eval_run(tmp_path / "e", "openai:m", {"openai:judge-x": ["good", "bad", "good", "good"] * 5})
    study = Study.create(tmp_path / "s", str(run), n=8, annotators=2)
    a, b = study.annotators()
    items = study.items()
    for item in items:
        study.judge(a, item["item_id"], "skip")
    study.judge(b, items[0]["item_id"], "good")
    majority = human_anchored(study)
    each = human_anchored(study, annotators="each")
    assert majority["n_labelled"] == 1 and majority["n_ties"] == 0
    labelled = {e["annotator"]: e["n_labelled"] for e in each["estimates"]}
    assert labelled == {a.name: 0, b.name: 1}


def test_the_study_language_follows_its_items_or_lang(run_dir: Path, tmp_path: Path) -> None:
    assert Study.create(tmp_path / "en", str(run_dir), n=4, annotators=1).lang == "en"
    assert Study.create(tmp_path / "zh", str(run_dir), n=4, annotators=1, lang="zh").meta()["lang"] == "zh"
    with pytest.raises(UxbenchError, match="--lang must be one of auto, zh, en"):
        Study.create(tmp_path / "x", str(run_dir), n=4, annotators=1, lang="fr")
    made = CliRunner().invoke(app, ["human", "new", "--from", str(run_dir), "--n", "4", "--out",
                                    str(tmp_path / "cli"), "--lang", "zh"])
    assert made.exit_code == 0 and "pages in Chinese" in made.output
    bad = CliRunner().invoke(app, ["human", "new", "--from", str(run_dir), "--n", "4", "--out",
                                   str(tmp_path / "cli2"), "--lang", "fr"])
    assert bad.exit_code == 2 and "--lang must be one of" in bad.output
