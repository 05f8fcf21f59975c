"""The Hugging Face code path, run on real `datasets` objects saved locally (no network)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from extra_skip import require_extra

require_extra("hub")  # before the variables below: without the extra they would reach every later test

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import datasets  # noqa: E402

from uxbench.data.hub import HubDataset  # noqa: E402
from uxbench.data.loaders import load_cases  # noqa: E402
from uxbench.data.schema import EvalCase, JudgeCase  # noqa: E402
from uxbench.errors import DataError, MissingDependencyError  # noqa: E402


@pytest.fixture(autouse=True)
def _private_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # load_dataset writes Arrow caches; keep them out of the user's home. Offline even when another test
    # module imported `datasets` before the environment variables above were set.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def judge_rows(n: int, *, label: int | None) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "cid": f"uxbench_ux_judge_{i:04d}",
            "source_query": {"turn_index": 2, "message": f"q{i}"},
            "selected_history": [
                {"turn_index": 0, "role": "user", "message": "hi"},
                {"turn_index": 1, "role": "assistant", "message": "hello"},
            ],
            "agent_response_full": f"a{i}",
            "failure_dimension": "冗余啰嗦" if label != 1 else None,
        }
        if label is not None:
            row["ground_truth"] = label
        rows.append(row)
    return rows


@pytest.fixture
def saved_repo(tmp_path: Path) -> Path:
    """A folder laid out like the hub repo: one `save_to_disk` DatasetDict per config."""
    repo = tmp_path / "UXBench"
    configs = {
        "task1_judge_bad": judge_rows(3, label=None),  # label comes from the config name
        "task1_judge_good": judge_rows(2, label=1),
        "task2_eval": [{"cid": "e1", "query": "q", "history": "[]", "dimension": "事实性错误"}],
    }
    for name, rows in configs.items():
        datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)}).save_to_disk(str(repo / name))
    return repo


def test_hf_prefix_with_local_repo_layout(saved_repo: Path) -> None:
    source = load_cases(f"hf:{saved_repo}", task="judge")
    assert source.count() == 5
    cases = list(source)
    assert all(isinstance(c, JudgeCase) for c in cases)
    assert [c.label for c in cases] == ["bad"] * 3 + ["good"] * 2  # type: ignore[union-attr]
    assert cases[0].source == f"hf:{saved_repo}/task1_judge_bad"
    assert [m.content for m in cases[0].history] == ["hi", "hello"]
    assert cases[0].labels.failure_dimension_key == "verbosity"
    assert "task1_judge_bad, task1_judge_good" in source.description
    fp = source.fingerprint()
    assert fp == load_cases(f"hf:{saved_repo}", task="judge").fingerprint()
    assert [c.id for c in source] == [c.id for c in cases]  # re-iterable


def test_hf_explicit_config_and_eval(saved_repo: Path) -> None:
    cases = list(load_cases(f"hf:{saved_repo}:task2_eval"))
    assert len(cases) == 1 and isinstance(cases[0], EvalCase)
    assert cases[0].labels.failure_dimension_key == "factual_error"
    assert [c.id for c in load_cases(f"hf:{saved_repo}", task="eval")] == ["e1"]
    with pytest.raises(DataError, match="no config folder"):
        load_cases(f"hf:{saved_repo}", task="recovery")


def test_hf_missing_split(saved_repo: Path) -> None:
    source = load_cases(f"hf:{saved_repo}:task2_eval", split="train")
    with pytest.raises(DataError, match="split 'train'"):
        list(source)


def test_saved_dataset_directory_is_detected(tmp_path: Path) -> None:
    target = tmp_path / "task1_judge_good"
    datasets.Dataset.from_list(judge_rows(2, label=None)).save_to_disk(str(target))
    source = load_cases(target)
    assert [c.label for c in source] == ["good", "good"]  # type: ignore[union-attr]
    assert load_cases(f"hf:{target}").count() == 2


def test_load_dataset_on_a_parquet_folder(tmp_path: Path) -> None:
    folder = tmp_path / "judge_bad_export"
    folder.mkdir()
    datasets.Dataset.from_list(judge_rows(4, label=-1)).to_parquet(
        str(folder / "test-00000-of-00001.parquet")
    )
    source = load_cases(f"hf:{folder}", task="judge")
    cases = list(source)
    assert [c.id for c in cases] == [f"uxbench_ux_judge_{i:04d}" for i in range(4)]
    assert source.count() == 4
    assert len(source.fingerprint()) == 64


def test_hub_errors_become_data_errors(tmp_path: Path) -> None:
    source = load_cases("hf:no-such-owner/no-such-dataset-xyz", task="eval")
    with pytest.raises(DataError) as info:
        list(source)
    assert "hf:no-such-owner/no-such-dataset-xyz/task2_eval" in str(info.value)


def test_bare_repo_id_goes_to_the_hub_loader() -> None:
    source = load_cases("mengze-hong/UXBench", task="recovery")
    assert source.files == ["hf:mengze-hong/UXBench/task3_recovery"]
    assert not source.is_demo


def test_missing_datasets_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail like an absent package
    source = HubDataset("mengze-hong/UXBench", "task2_eval", "test")
    with pytest.raises(MissingDependencyError, match=r"uxbench\[hub\]"):
        len(source)
