"""JudgeTask.run_sample / summarize with a duck-typed fake model and with the real scripted provider."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TypeAlias

import pytest

from uxbench.data.schema import CaseLabels, EvalCase, JudgeCase, Message
from uxbench.errors import ConfigError, FatalModelError, TransientModelError
from uxbench.models.api import GenerateConfig, ModelOutput, Usage
from uxbench.runs.records import SampleRecord
from uxbench.tasks.base import SummaryOptions
from uxbench.tasks.judge import JudgeOptions, JudgeTask

Reply: TypeAlias = ModelOutput | Exception | str


class FakeModel:
    """Answers calls in order from a list (a str becomes a ModelOutput; an exception is raised)."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[Message], GenerateConfig | None]] = []

    async def generate(self, messages: list[Message], config: GenerateConfig | None = None) -> ModelOutput:
        self.calls.append((messages, config))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            return ModelOutput(text=reply, usage=Usage(input_tokens=10, output_tokens=2), latency_s=0.5)
        return reply


def make_case(label: str = "bad", **kw: object) -> JudgeCase:
    fields: dict[str, object] = {
        "id": f"case-{label}",
        "history": [
            Message(role="user", content="我想学做饭"),
            Message(role="assistant", content="好呀，想学什么菜？"),
        ],
        "query": "番茄炒蛋先放番茄还是先放蛋？",
        "response": "先炒蛋，盛出后再炒番茄，最后合在一起。",
        "label": label,
        "labels": CaseLabels(
            scenario="信息与知识查询",
            scenario_key="information_query",
            failure_dimension="冗余啰嗦",
            failure_dimension_key="verbosity",
            success_dimension="准确回答",
            difficulty="hard",
        ),
    }
    fields.update(kw)
    return JudgeCase.model_validate(fields)


async def run(task: JudgeTask, case: JudgeCase, model: FakeModel, index: int = 0) -> SampleRecord:
    return await task.run_sample(case, model, sample_id=f"s{index}", index=index)


@pytest.mark.parametrize(
    ("reply", "prediction", "note_start"),
    [
        ("好", "good", "final line"),
        ("差", "bad", "final line"),
        ("不好", "bad", "final line"),
        ("<think>用户要简洁</think>\n结论：差", "bad", "marker"),
        ("我无法判断。", None, "no verdict found"),
        ("", None, "empty output"),
    ],
)
async def test_binary_outputs(reply: str, prediction: str | None, note_start: str) -> None:
    model = FakeModel([reply])
    record = await run(JudgeTask(), make_case(), model)
    assert record.status == "ok" and record.error is None
    assert record.prediction == prediction
    assert (record.parse_note or "").startswith(note_start)
    assert record.raw_output == reply and record.gold == "bad"
    assert record.score is None and record.extra["lang"] == "zh"
    assert record.usage == Usage(input_tokens=10, output_tokens=2) and record.latency_s == 0.5
    assert record.strata == {
        "scenario": "information_query",
        "dimension": "verbosity",
        "difficulty": "hard",
        "n_turns": 2,
    }
    (messages, config) = model.calls[0]
    assert config == GenerateConfig(temperature=0.0)
    assert [m.role for m in messages] == ["system", "user"]


async def test_good_case_uses_the_success_dimension_and_reasoning_is_kept() -> None:
    out = ModelOutput(text="", reasoning="……结论：好", usage=Usage(output_tokens=30))
    record = await run(JudgeTask(), make_case("good"), FakeModel([out]))
    assert record.strata["dimension"] == "准确回答"  # no key mapped: the label as given
    assert record.prediction == "good" and (record.parse_note or "").startswith("from reasoning")
    assert record.reasoning == "……结论：好"


async def test_english_binary_and_the_model_error_path() -> None:
    case = make_case(query="Is tomato a fruit?", response="Botanically yes.", history=[], lang="en")
    ok = await run(JudgeTask(), case, FakeModel(["Bad."]))
    assert ok.prediction == "bad" and ok.extra["lang"] == "en"
    failed = await run(JudgeTask(), case, FakeModel([TransientModelError("server said 503")]))
    assert failed.status == "error" and failed.prediction is None
    assert failed.error == "TransientModelError: server said 503"
    assert failed.gold == "bad" and failed.strata["n_turns"] == 1


async def test_non_model_errors_are_not_swallowed() -> None:
    with pytest.raises(ZeroDivisionError):
        await run(JudgeTask(), make_case(), FakeModel([ZeroDivisionError()]))


async def test_wrong_case_type_is_a_config_error() -> None:
    case = EvalCase(id="e1", query="hi")
    with pytest.raises(ConfigError, match="judge cases"):
        await JudgeTask().run_sample(case, FakeModel([]), sample_id="s", index=0)


async def test_user_modeling_makes_two_calls_and_keeps_the_profile() -> None:
    profile = ModelOutput(
        text="<think>嗯</think>\n新手厨师，想要简单直接的步骤。",
        usage=Usage(input_tokens=50, output_tokens=20),
        latency_s=1.0,
        cached=True,
    )
    verdict = ModelOutput(
        text="好", usage=Usage(input_tokens=80, output_tokens=1), latency_s=0.25, cached=True
    )
    model = FakeModel([profile, verdict])
    task = JudgeTask(JudgeOptions(strategy="user_modeling"))
    record = await run(task, make_case(), model)
    assert len(model.calls) == 2
    first, second = model.calls[0][0], model.calls[1][0]
    assert make_case().response not in first[-1].content  # the profile is inferred without the reply
    assert "新手厨师，想要简单直接的步骤。" in second[-1].content and "<think>" not in second[-1].content
    assert record.extra["profile"] == "新手厨师，想要简单直接的步骤。"
    assert record.prediction == "good" and record.raw_output == "好"
    assert record.usage == Usage(input_tokens=130, output_tokens=21)
    assert record.latency_s == 1.25 and record.cached is True


async def test_user_modeling_failure_in_second_call_keeps_the_first() -> None:
    task = JudgeTask(JudgeOptions(strategy="user_modeling"))
    record = await run(
        task, make_case(), FakeModel(["学生", FatalModelError("context too long", status=400)])
    )
    assert record.status == "error" and record.extra["profile"] == "学生"
    assert record.usage.input_tokens == 10 and "FatalModelError" in (record.error or "")
    empty = await run(task, make_case(), FakeModel(["", "差"]))
    assert empty.prediction == "bad" and "profile_note" in empty.extra


async def test_cached_only_when_every_call_was_cached() -> None:
    task = JudgeTask(JudgeOptions(strategy="user_modeling"))
    outputs = [ModelOutput(text="学生", cached=True), ModelOutput(text="差", cached=False)]
    assert (await run(task, make_case(), FakeModel(outputs))).cached is False


@pytest.mark.parametrize(
    ("reply", "threshold", "prediction", "score"),
    [
        ("4", None, "good", 4.0),
        ("3", None, "bad", 3.0),
        ("3", 3, "good", 3.0),
        ("5", None, "good", 5.0),
        ("1", None, "bad", 1.0),
        ("9", None, None, None),
        ("评分：2", None, "bad", 2.0),
    ],
)
async def test_likert_thresholding(
    reply: str, threshold: int | None, prediction: str | None, score: float | None
) -> None:
    task = JudgeTask(JudgeOptions(formulation="likert", likert_scale=5, likert_threshold=threshold))
    record = await run(task, make_case(), FakeModel([reply]))
    assert record.prediction == prediction and record.score == score
    assert record.parse_note


@pytest.mark.parametrize(
    ("reply", "prediction"), [("中", "neutral"), ("好", "good"), ("不太好", "bad"), ("?", None)]
)
async def test_three_class(reply: str, prediction: str | None) -> None:
    task = JudgeTask(JudgeOptions(formulation="three_class"))
    assert (await run(task, make_case(), FakeModel([reply]))).prediction == prediction


async def test_generation_settings_are_passed_through() -> None:
    task = JudgeTask(JudgeOptions(temperature=0.7, max_tokens=512, reasoning_effort="low"))
    model = FakeModel(["好"])
    await run(task, make_case(), model)
    assert model.calls[0][1] == GenerateConfig(temperature=0.7, max_tokens=512, reasoning_effort="low")


async def test_progress_metric_and_config() -> None:
    task = JudgeTask(JudgeOptions(formulation="likert", likert_scale=7))
    hit = await run(task, make_case(), FakeModel(["2"]))
    miss = await run(task, make_case(), FakeModel(["no idea"]))
    err = await run(task, make_case(), FakeModel([TransientModelError("x")]))
    assert task.progress_metric(hit) == ("acc", True)
    assert task.progress_metric(miss) == ("acc", False)  # unparseable counts as a miss
    assert task.progress_metric(err) == ("acc", None)
    config = task.config()
    assert config["task"] == "judge" and config["likert_threshold"] == 5 and config["formulation"] == "likert"
    json.dumps(config)


HAS_METRICS = importlib.util.find_spec("uxbench.metrics.judge") is not None


@pytest.mark.skipif(not HAS_METRICS, reason="uxbench.metrics.judge not written yet")
async def test_summarize_counts_and_metrics() -> None:
    task = JudgeTask(JudgeOptions(formulation="likert", likert_scale=5))
    replies = ["5", "2", "4", "1", "oops"]
    golds = ["good", "bad", "bad", "bad", "good"]
    records = [
        await run(task, make_case(g), FakeModel([r]), i)
        for i, (r, g) in enumerate(zip(replies, golds, strict=True))
    ]
    records.append(await run(task, make_case(), FakeModel([TransientModelError("down")]), 9))
    summary = task.summarize(records, options=SummaryOptions(n_boot=50))
    assert summary["n_samples"] == 6 and summary["n_ok"] == 5 and summary["n_errors"] == 1
    assert summary["n_unparseable"] == 1 and summary["formulation"] == "likert"
    metrics = summary["metrics"]
    assert metrics["n"] == 5 and metrics["n_good"] == 2 and metrics["n_bad"] == 3
    assert metrics["confusion"]["bad"]["good"] == 1  # the "4" on a bad case
    assert metrics["all"]["good_acc"]["value"] == 0.5  # "oops" counts as wrong
    assert set(metrics["breakdowns"]) == {"scenario", "dimension", "difficulty", "n_turns"}
    assert set(metrics["breakdowns"]["n_turns"]) == {"2"}
    assert summary["likert"]["histogram"] == {"1": 1, "2": 1, "3": 0, "4": 1, "5": 1}
    assert summary["likert"]["mean_score_by_gold"] == {"good": 5.0, "bad": 7 / 3}
    json.dumps(summary)


# ------------------------------------------------------------------ the real scripted provider


HAS_MODEL = importlib.util.find_spec("uxbench.models.model") is not None


@pytest.mark.skipif(not HAS_MODEL, reason="uxbench.models.model not written yet")
async def test_with_the_scripted_provider(tmp_path: Path) -> None:
    from uxbench.models.model import create_model

    zh = await JudgeTask().run_sample(
        make_case("good"), create_model("scripted:always-bad"), sample_id="a", index=0
    )
    assert zh.status == "ok" and zh.raw_output == "差" and zh.prediction == "bad"
    en_case = make_case(query="Tomato first or egg first?", response="Egg first.", history=[])
    en = await JudgeTask().run_sample(en_case, create_model("scripted:always-good"), sample_id="b", index=1)
    assert en.raw_output == "good" and en.prediction == "good"

    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            {
                "rules": [{"pattern": "刻画这位用户", "response": "做饭新手，想要一句话的答案。"}],
                "default": "结论：差",
            }
        ),
        encoding="utf-8",
    )
    model = create_model(f"scripted:file:{rules}")
    task = JudgeTask(JudgeOptions(strategy="user_modeling"))
    record = await task.run_sample(make_case(), model, sample_id="c", index=2)
    assert record.extra["profile"] == "做饭新手，想要一句话的答案。"
    assert record.prediction == "bad" and record.parse_note == "marker '结论'"
    assert record.usage.input_tokens > 0
