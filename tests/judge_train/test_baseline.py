"""The TF-IDF baseline beside every judge: on data where its accuracy is known, `judge train` and `judge eval`
report exactly that accuracy, the paired difference with the judge, and whether the judge beats it."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("judge")

import judge_data  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from uxbench.cli.main import app  # noqa: E402
from uxbench.judge_train.baseline import verdict_of  # noqa: E402
from uxbench.judge_train.train import TrainOptions, train_lite  # noqa: E402


def _marked_rows(n: int, seed: int) -> list[dict[str, Any]]:
    """The label is written in the reply (a word that occurs nowhere else): a bag of character n-grams learns
    it perfectly, so the baseline's Avg-Acc on held-out conversations is exactly 1."""
    rng = random.Random(seed)
    out = []
    for c in range(n):
        good = rng.random() < 0.5
        word = "zqxjgood" if good else "vwkpbad"
        out.append({"cid": f"m{c}#0", "label": "good" if good else "bad", "lang": "en",
                    "query": rng.choice(["how do I cook rice?", "what is a static IP?", "sort a list?"]),
                    "response": f"Here is the answer. {word} {word}. Thanks."})
    return out


def test_baseline_accuracy_known_on_a_fixture_appears_in_train_output_and_card(tmp_path: Path) -> None:
    data = judge_data.write(tmp_path / "marked.jsonl", _marked_rows(80, seed=1))
    out = tmp_path / "judge"
    result = CliRunner().invoke(app, ["judge", "train", "--data", str(data), "--out", str(out), "--encoder",
                                      "hashing", "--n-boot", "200", "--quiet"])
    assert result.exit_code == 0, result.output
    card = json.loads((out / "model_card.json").read_text())
    base = card["baseline"]
    assert base["name"] == "TF-IDF + logistic regression"
    assert base["test"]["avg_acc"]["value"] == 1.0 and base["test"]["n"] == card["test"]["n"]
    paired = base["comparison"]["paired"]
    assert paired["diff"] == pytest.approx(card["test"]["avg_acc"]["value"] - 1.0)
    assert base["comparison"]["verdict"] == verdict_of(paired)
    assert "TF-IDF baseline" in result.stdout and "100.0 [100.0, 100.0]" in result.stdout
    md = (out / "MODEL_CARD.md").read_text()
    assert "Against a plain baseline" in md and f"The judge {base['comparison']['verdict']} the baseline" in md

    # judge eval trains the same baseline from DIR/train.jsonl and scores the same cases
    evaluated = CliRunner().invoke(app, ["judge", "eval", "--judge", f"lite:{out}", "--data", str(out / "test.jsonl"),
                                         "--runs-root", str(tmp_path / "runs"), "--n-boot", "200", "--format",
                                         "json", "--quiet"])
    assert evaluated.exit_code == 0, evaluated.output
    again = json.loads(evaluated.stdout)["baseline"]
    assert again["test"]["avg_acc"] == base["test"]["avg_acc"]
    assert again["comparison"]["paired"]["diff"] == pytest.approx(paired["diff"])
    assert again["trained_on"] == str(out / "train.jsonl")


def test_baseline_at_chance_when_the_text_says_nothing(tmp_path: Path) -> None:
    """Every row has the same text: the baseline can only give one answer, so its Avg-Acc is exactly 0.5."""
    rng = random.Random(3)
    rows = [{"cid": f"s{c}#0", "label": "good" if rng.random() < 0.5 else "bad", "lang": "en",
             "query": "same question?", "response": "same answer."} for c in range(60)]
    data = judge_data.write(tmp_path / "same.jsonl", rows)
    result = train_lite(TrainOptions(data=[str(data)], out=tmp_path / "j", encoder="hashing", n_boot=100,
                                     prior="balanced"))
    assert result.card["baseline"]["test"]["avg_acc"]["value"] == 0.5
    assert result.card["baseline"]["comparison"]["verdict"] == "shows no detectable difference from"


def test_eval_table_and_p_values_are_rounded(tmp_path: Path) -> None:
    data = judge_data.write(tmp_path / "d.jsonl", judge_data.rows(60, seed=11))
    out = tmp_path / "judge"
    assert CliRunner().invoke(app, ["judge", "train", "--data", str(data), "--out", str(out), "--encoder",
                                    "hashing", "--n-boot", "50", "--quiet"]).exit_code == 0
    for fmt in ("table", "md"):
        shown = CliRunner().invoke(app, ["judge", "eval", "--judge", f"lite:{out}", "--data", str(out / "test.jsonl"),
                                         "--against", "scripted:always-good", "--runs-root", str(tmp_path / fmt),
                                         "--n-boot", "50", "--format", fmt, "--quiet"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        assert not re.search(r"\d[eE]-\d", shown.stdout), shown.stdout  # no 8.496565959267228e-41
        assert re.search(r"< 0\.001|0\.\d{3}\b", shown.stdout), shown.stdout
        assert "scripted:always-good" in shown.stdout and "TF-IDF baseline" in shown.stdout
