"""Task 1 with the rubric formulation: records, the rubric's identity in the run, and the summary (per-dimension
means by gold class, ties between liked and disliked cases)."""

from __future__ import annotations

import json

import pytest

from uxbench.data.schema import JudgeCase, Message
from uxbench.models.api import GenerateConfig, ModelOutput
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.judge import JudgeOptions, JudgeTask


class Replies:
    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    async def generate(self, messages: list[Message], config: GenerateConfig | None = None) -> ModelOutput:
        return ModelOutput(text=self.texts.pop(0))


def case(label: str, i: int) -> JudgeCase:
    return JudgeCase.model_validate({"id": f"c{i}", "history": [], "query": "Name a grey cat",
                                     "response": "Ash", "label": label, "lang": "en"})


async def test_rubric_records_and_summary() -> None:
    task = JudgeTask(JudgeOptions(formulation="rubric", rubric="helpsteer2"))
    answers = [
        ('{"helpfulness": 4, "correctness": 4, "coherence": 4, "complexity": 1, "verbosity": 2}', "good"),
        ('{"helpfulness": 3, "correctness": 3, "coherence": 3, "complexity": 1, "verbosity": 2}', "good"),
        ('{"helpfulness": 3, "correctness": 3, "coherence": 3, "complexity": 0, "verbosity": 4}', "bad"),
        ('{"helpfulness": 1, "correctness": 2, "coherence": 3, "complexity": 0, "verbosity": 1}', "bad"),
        ("I cannot score this.", "bad"),
    ]
    records = [await task.run_sample(case(gold, i), Replies(text), sample_id=f"s{i}", index=i)
               for i, (text, gold) in enumerate(answers)]
    assert [r.prediction for r in records] == ["good", "good", "good", "bad", None]
    assert records[0].score == pytest.approx(1.0) and records[1].score == pytest.approx(0.75)
    assert records[0].extra["rubric_scores"]["verbosity"] == 2
    assert "no rubric scores" in (records[4].parse_note or "")
    summary = task.summarize(records, options=SummaryOptions(n_boot=100))
    rubric = summary["rubric"]
    assert rubric["id"] == "helpsteer2" and rubric["threshold"] == 0.5
    assert rubric["dimensions"]["helpfulness"]["good"] == {"mean": 3.5, "n": 2, "n_na": 0}
    assert rubric["dimensions"]["helpfulness"]["bad"]["mean"] == 2.0
    ties = rubric["pair_ties"]  # liked 1.0, 0.75; disliked 0.75, 0.5 -> 4 pairs, one tie, three liked higher
    assert ties["n_pairs"] == 4 and ties["tie_share"]["value"] == 0.25 and ties["liked_higher"]["value"] == 0.75
    assert summary["n_unparseable"] == 1
    json.dumps(summary)


async def test_the_rubric_content_enters_the_identity_and_the_config(tmp_path: object) -> None:
    flask = JudgeTask(JudgeOptions(formulation="rubric", rubric="flask"))
    mt = JudgeTask(JudgeOptions(formulation="rubric"))
    assert any(k.startswith("rubric:flask") for k in flask.template_hashes())
    assert flask.template_hashes() != mt.template_hashes()
    config = flask.config()
    assert config["rubric"] == "flask" and config["rubric_spec"]["id"] == "flask"
    assert "rubric_spec" not in JudgeTask().config()


async def test_likert_summary_reports_ties() -> None:
    task = JudgeTask(JudgeOptions(formulation="likert", likert_scale=4))
    golds = ["good", "good", "bad", "bad"]
    records = [await task.run_sample(case(g, i), Replies(t), sample_id=f"s{i}", index=i)
               for i, (t, g) in enumerate(zip(["3", "4", "3", "3"], golds, strict=True))]
    ties = task.summarize(records, options=SummaryOptions(n_boot=50))["likert"]["pair_ties"]
    assert ties["tie_share"]["value"] == 0.5 and ties["liked_higher"]["value"] == 0.5
