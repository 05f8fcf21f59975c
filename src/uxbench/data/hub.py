"""Rows of a Hugging Face dataset: the hub (`mengze-hong/UXBench`) or a local copy of one.

`datasets` is imported only here and only when used (extra `hub`). A local directory is accepted in place
of a repo id, so the same code path runs offline: a `save_to_disk` folder (`state.json` /
`dataset_dict.json`), a folder with one such sub-folder per config, or a folder of data files that
`load_dataset` reads (`test-00000-of-00001.parquet`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from uxbench.data.readers import RowItem
from uxbench.data.schema import TaskName
from uxbench.errors import DataError, MissingDependencyError

CONFIGS_BY_TASK: dict[TaskName, tuple[str, ...]] = {
    "judge": ("task1_judge_bad", "task1_judge_good"),
    "eval": ("task2_eval",),
    "recovery": ("task3_recovery",),
}
ALL_CONFIGS = tuple(c for configs in CONFIGS_BY_TASK.values() for c in configs)
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_BATCH = 256


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        raise MissingDependencyError("datasets", "hub", "Loading a Hugging Face dataset") from None
    return datasets


def is_saved_dataset(path: Path) -> bool:
    """A folder written by `Dataset.save_to_disk` or `DatasetDict.save_to_disk`."""
    return (path / "state.json").is_file() or (path / "dataset_dict.json").is_file()


def configs_for(repo: str, task: TaskName | None) -> list[str | None]:
    """The configs to read when none was named: the official ones for the task; for a local folder
    without per-config sub-folders, the folder itself (None)."""
    local = Path(repo)
    if local.is_dir() and not any((local / c).is_dir() for c in ALL_CONFIGS):
        return [None]
    wanted = CONFIGS_BY_TASK[task] if task else ALL_CONFIGS
    if local.is_dir():
        return [c for c in wanted if (local / c).is_dir()]
    return list(wanted)


class HubDataset:
    """One (repo, config, split), opened on first use and kept open (Arrow data is memory-mapped)."""

    def __init__(self, repo: str, config: str | None, split: str) -> None:
        self.repo = repo
        self.config = config
        self.split = split
        self._ds: Any = None

    @property
    def display(self) -> str:
        return f"hf:{self.repo}" + (f"/{self.config}" if self.config else "")

    def _load(self) -> Any:
        datasets = _datasets()
        local = Path(self.repo)
        target = local / self.config if self.config and (local / self.config).is_dir() else local
        try:
            if local.is_dir() and is_saved_dataset(target):
                ds = datasets.load_from_disk(str(target))
                if isinstance(ds, datasets.DatasetDict):
                    if self.split not in ds:
                        raise DataError(
                            f"has no split '{self.split}' (splits: {', '.join(ds)})", source=self.display
                        )
                    ds = ds[self.split]
                return ds
            if local.is_dir():
                config = None if target != local else self.config
                return datasets.load_dataset(str(target), config, split=self.split)
            return datasets.load_dataset(self.repo, self.config, split=self.split)
        except DataError:
            raise
        except Exception as exc:  # datasets raises many unrelated types (network, hub, config, split)
            raise DataError(
                f"could not load split '{self.split}': {type(exc).__name__}: {str(exc)[:300]}",
                source=self.display,
                hint="check the repo id, config, split and network, and that you accepted the dataset terms",
            ) from None

    def dataset(self) -> Any:
        if self._ds is None:
            self._ds = self._load()
        return self._ds

    def __len__(self) -> int:
        return len(self.dataset())

    def rows(self) -> Iterator[RowItem]:
        position = 0
        for batch in self.dataset().iter(batch_size=_BATCH):
            columns = list(batch)
            for values in zip(*(batch[c] for c in columns), strict=True):
                position += 1
                yield position, dict(zip(columns, values, strict=True))

    def fingerprint(self) -> str:
        """The `datasets` fingerprint (stable for the same files); the split and config are added."""
        ds = self.dataset()
        return f"{self.display}|{self.split}|{getattr(ds, '_fingerprint', '')}|{len(ds)}"
