"""Blind studies: drawn stratified by class from a run or a data set, one unguessable token per annotator, nothing
of the label or model in what an annotator sees, judgments saved and changed per annotator, and the results
(accuracy per annotator, Fleiss' kappa, human-judge agreement) equal to what the judgments give by hand."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "web"))
from web_support import write_eval_run, write_judge_run

from uxbench.errors import UxbenchError
from uxbench.human.results import export_rows, results_text, study_results
from uxbench.human.study import Study


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_judge_run(tmp_path_factory.mktemp("h") / "t1", "openai:gpt-4o", [i % 3 != 0 for i in range(30)])


def test_a_study_is_stratified_by_class_and_shows_no_label_or_model(run_dir: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(run_dir), n=10, annotators=3)
    items = study.items()
    assert len(items) == 10 and Counter(i["label"] for i in items) == {"good": 5, "bad": 5}
    tokens = [a.token for a in study.annotators()]
    assert len(set(tokens)) == 3 and all(len(t) >= 32 for t in tokens)
    for item in items:
        shown = json.dumps(study.shown(item["item_id"]))
        assert "gpt-4o" not in shown and item["hidden"]["case_id"] not in shown
        assert '"good"' not in shown and '"bad"' not in shown and "label" not in shown
    orders = [study.order(a) for a in study.annotators()]
    assert all(sorted(o) == sorted(i["item_id"] for i in items) for o in orders) and orders[0] != orders[1]
    with pytest.raises(UxbenchError, match="exists already"):
        Study.create(tmp_path / "s", str(run_dir), n=10, annotators=3)


def test_results_equal_the_hand_counts(run_dir: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "s", str(run_dir), n=6, annotators=3, seed=1)
    items = study.items()
    a1, a2, a3 = study.annotators()
    for item in items:  # a1 always right, a2 always "good", a3 right except on the first item
        study.judge(a1, item["item_id"], item["label"])
        study.judge(a2, item["item_id"], "good")
        study.judge(a3, item["item_id"], item["label"])
    first = items[0]
    study.judge(a3, first["item_id"], "bad" if first["label"] == "good" else "good")  # changed: last one counts
    results = study_results(study, n_boot=200)
    acc = {a["annotator"]: a["accuracy"] for a in results["annotators"]}
    assert acc[a1.name]["k"] == 6 and acc[a2.name]["k"] == 3 and acc[a3.name]["k"] == 5
    # Fleiss by hand: per item the three choices; P_i = (sum n_ij^2 - 3) / 6
    rows = [[item["label"], "good", item["label"] if item is not first else
             ("bad" if first["label"] == "good" else "good")] for item in items]
    p_i = [(sum(v * v for v in Counter(r).values()) - 3) / 6 for r in rows]
    shares = Counter(c for r in rows for c in r)
    p_e = sum((v / 18) ** 2 for v in shares.values())
    expected = (sum(p_i) / 6 - p_e) / (1 - p_e)
    assert results["fleiss"]["kappa"] == pytest.approx(expected)
    # the judge (the run's model, wrong on every third case) against the human majority of each item
    judge = results["human_judge"]["openai:gpt-4o"]
    preds = [item["hidden"]["judges"]["openai:gpt-4o"] for item in items]
    majority = [Counter(r).most_common(1)[0][0] for r in rows]
    pairs = [(p, m) for p, m in zip(preds, majority, strict=True) if p is not None]
    assert judge["agreement"]["k"] == sum(p == m for p, m in pairs) and judge["agreement"]["n"] == len(pairs)
    assert "Fleiss' kappa" in results_text(results)
    rows_out = export_rows(study)
    assert len(rows_out) == 18 and {r["annotator"] for r in rows_out} == {a1.name, a2.name, a3.name}
    assert all(a1.token not in json.dumps(r) for r in rows_out)


def test_pairwise_pairs_a_good_and_a_bad_reply(run_dir: Path, tmp_path: Path) -> None:
    study = Study.create(tmp_path / "p", str(run_dir), n=5, annotators=2, mode="pairwise")
    items = study.items()
    assert len(items) == 5 and {i["label"] for i in items} <= {"A", "B"}
    a, b = study.annotators()
    for item in items:
        study.judge(a, item["item_id"], item["label"])
    with pytest.raises(UxbenchError, match="choice"):
        study.judge(b, items[0]["item_id"], "good")
    results = study_results(study, n_boot=100)
    assert results["annotators"][0]["accuracy"]["value"] == 1.0 and results["annotators"][1]["n_judged"] == 0


def test_a_study_from_data_and_from_a_task2_run(tmp_path: Path) -> None:
    study = Study.create(tmp_path / "d", "demo", n=8, annotators=1)
    assert Counter(i["label"] for i in study.items()) == {"good": 4, "bad": 4}
    eval_run = write_eval_run(tmp_path / "t2", "openai:gpt-4o", {"openai:judge-x": ["good", "bad"] * 5})
    study = Study.create(tmp_path / "e", str(eval_run), n=4, annotators=2)
    items = study.items()
    assert all(i["label"] is None for i in items) and {i["stratum"] for i in items} == {"good", "bad"}
    a, b = study.annotators()
    for item in items:
        study.judge(a, item["item_id"], item["hidden"]["judges"]["openai:judge-x"] or "good")
        study.judge(b, item["item_id"], item["hidden"]["judges"]["openai:judge-x"] or "good")
    results = study_results(study, n_boot=100)
    assert results["human_judge"]["openai:judge-x"]["agreement"]["value"] == 1.0
    assert results["annotators"][0]["accuracy"] is None  # no labels: no accuracy


def test_pairwise_between_two_task2_runs(tmp_path: Path) -> None:
    a = write_eval_run(tmp_path / "ra", "openai:model-a", {"openai:judge-x": ["good", "bad"] * 5})
    b = write_eval_run(tmp_path / "rb", "openai:model-b", {"openai:judge-x": ["bad", "bad"] * 5})
    study = Study.create(tmp_path / "s", [str(a), str(b)], n=6, annotators=2, mode="pairwise", seed=3)
    items = study.items()
    assert len(items) == 6 and all(i["label"] is None for i in items)
    for item in items:
        shown = study.shown(item["item_id"])  # the two conversations only (these test replies name their model)
        assert set(shown or {}) == {"a", "b"} and "judge-x" not in json.dumps(shown)
        assert all(set(turn) == {"role", "text"} for side in (shown or {}).values() for turn in side)
        assert sorted(item["hidden"]["models"].values()) == ["openai:model-a", "openai:model-b"]
    one, two = study.annotators()
    for item in items:  # both annotators prefer model A's reply
        side = next(k for k, v in item["hidden"]["models"].items() if v == "openai:model-a")
        study.judge(one, item["item_id"], side)
        study.judge(two, item["item_id"], side)
    results = study_results(study, n_boot=100)
    assert results["preference"]["openai:model-a"]["value"] == 1.0
    assert results["fleiss"]["kappa"] is None or results["fleiss"]["p_bar"] == 1.0
    picks = [i["hidden"]["judges"]["openai:judge-x"] for i in items]
    # judge-x called A's reply good on even cases and B's bad everywhere: it prefers A there, no preference else
    judge = results["human_judge"]["openai:judge-x"]
    assert judge["n"] == sum(p is not None for p in picks) and judge["agreement"]["value"] == 1.0
    with pytest.raises(UxbenchError, match="pairwise"):
        Study.create(tmp_path / "t", [str(a), str(b)], n=6, annotators=2)


def test_human_new_takes_two_runs_for_a_pairwise_study(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from uxbench.cli.main import app

    a = write_eval_run(tmp_path / "ra", "openai:model-a", {"openai:judge-x": ["good", "bad"] * 3})
    b = write_eval_run(tmp_path / "rb", "openai:model-b", {"openai:judge-x": ["bad", "good"] * 3})
    result = CliRunner().invoke(app, ["human", "new", "--from", str(a), "--from", str(b), "--mode", "pairwise",
                                      "--n", "4", "--annotators", "2", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert f"from {a} vs {b}" in result.output and result.output.count("/h/") == 2
    bad = CliRunner().invoke(app, ["human", "new", "--from", str(a), "--from", str(b), "--out", str(tmp_path / "t")])
    assert bad.exit_code == 2 and "--mode pairwise" in bad.output


def test_a_study_leaves_out_the_cases_curation_excluded(run_dir: Path, tmp_path: Path) -> None:
    import shutil

    from uxbench.runs.curation import CURATION_DB, Curation

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    curation = Curation(run / CURATION_DB)
    for cid in ("c00", "c02", "c04"):
        curation.record(cid, "exclude", "wrong label", "tester")
    study = Study.create(tmp_path / "s", str(run), n=30, annotators=1)
    ids = {i["hidden"]["case_id"] for i in study.items()}
    assert len(ids) == 27 and not ids & {"c00", "c02", "c04"}
