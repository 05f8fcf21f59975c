"""`load_cases`: a re-iterable, streaming source of typed cases from any supported input.

Inputs: None / "demo" (the bundled demo set), a .jsonl / .jsonl.gz / .json / .parquet file, a directory of
them (official export names such as `uxbench_task1_judge_bad_1k.jsonl` say task and label), a local
`save_to_disk` folder, `hf:REPO[:CONFIG]`, or a bare hub repo id such as `mengze-hong/UXBench`.
Iterating re-reads the input every time, so memory stays flat for large files (one 8-byte hash per case
is kept, to leave out exact duplicate rows). Reading nothing is an error, not an empty success: an
iteration that yields no case raises `DataError` saying why (empty input, rows of other tasks only, every
row invalid), and `CaseSource.require_nonempty` checks that up front.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from uxbench.data.hub import REPO_ID, HubDataset, configs_for, is_saved_dataset
from uxbench.data.normalize import TASKS, normalize_row
from uxbench.data.readers import RowItem, count_file, data_files, file_kind, hash_file, iter_file, name_hints
from uxbench.data.schema import AnyCase, JudgeLabel, TaskName
from uxbench.errors import ConfigError, DataError

DEMO_DIR = Path(__file__).with_name("demo")
SKIP_HINT = "fix the row, or pass --skip-invalid to skip invalid rows"
_FINGERPRINT_VERSION = "uxbench-data-v1"


class SkipEntry(BaseModel):
    """Why one row was skipped."""

    source: str
    """File path or `hf:repo/config`."""
    line: int | None = None
    """1-based line (JSONL) or row (JSON, Parquet, HF) number."""
    unit: Literal["line", "row"] = "line"
    """Whether `line` counts lines or rows."""
    field: str | None = None
    """The offending field, when known."""
    reason: str
    """What was wrong."""

    def __str__(self) -> str:
        where = [self.source] + ([f"{self.unit} {self.line}"] if self.line is not None else [])
        where += [f"field '{self.field}'"] if self.field else []
        return f"{', '.join(where)}: {self.reason}"


class SkipReport(BaseModel):
    """Rows skipped during the latest iteration (`count` is exact; `entries` keeps the first few)."""

    count: int = 0
    entries: list[SkipEntry] = Field(default_factory=list)
    max_entries: int = 20

    def add(self, entry: SkipEntry) -> None:
        self.count += 1
        if len(self.entries) < self.max_entries:
            self.entries.append(entry)


class ReadReport(BaseModel):
    """What the latest iteration read besides the cases and the skipped rows (exact counts)."""

    rows: int = 0
    """Rows read, valid or not."""
    other_task_rows: int = 0
    """Rows left out because their `task` field names another task."""
    cases: int = 0
    """Cases yielded."""
    exact_duplicates: int = 0
    """Rows that normalise to a case identical to an earlier one (same id, same text, same file): left out,
    since a run would score them once."""
    duplicate_examples: list[str] = Field(default_factory=list)
    """The first few, as `file, line 9 repeats line 4`."""
    empty_messages: int = 0
    """History messages with no text (null or empty): the judge sees them as `（空）` / `(empty)`."""
    cases_with_empty_messages: int = 0
    """Cases holding at least one such message."""
    max_examples: int = 5

    def notes(self) -> list[str]:
        """One plain sentence per thing the user should know about (nothing when all is normal)."""
        out = []
        if self.exact_duplicates:
            out.append(f"{self.exact_duplicates} exact duplicate rows were left out (each is scored once)"
                       + (f": {'; '.join(self.duplicate_examples)}" if self.duplicate_examples else ""))
        if self.empty_messages:
            out.append(f"{self.empty_messages} history messages in {self.cases_with_empty_messages} cases have no "
                       "text (null or empty); they are shown to the judge as （空） / (empty)")
        if self.other_task_rows:
            out.append(f"{self.other_task_rows} rows of other tasks (their `task` field) were left out")
        return out


@dataclass
class _Part:
    """One physical input: a file or an HF dataset, plus what its name says."""

    display: str
    name: str
    path: Path | None = None
    hub: HubDataset | None = None
    task: TaskName | None = None
    label: JudgeLabel | None = None
    explicit: bool = False  # named by the user: a requested task forces it instead of filtering it out

    @property
    def unit(self) -> Literal["line", "row"]:
        return "line" if self.path is not None and file_kind(self.path) == "jsonl" else "row"

    def rows(self) -> Iterator[RowItem]:
        if self.hub is not None:
            return self.hub.rows()
        assert self.path is not None
        return iter_file(self.path)

    def count(self) -> int:
        return len(self.hub) if self.hub is not None else count_file(self.path)  # type: ignore[arg-type]

    def digest(self) -> str:
        if self.hub is not None:
            return hashlib.sha256(self.hub.fingerprint().encode()).hexdigest()
        assert self.path is not None
        return f"{self.name}:{hash_file(self.path)}"


class CaseSource:
    """A re-iterable stream of cases. Build it with `load_cases`."""

    def __init__(
        self,
        parts: Iterable[_Part],
        *,
        description: str,
        is_demo: bool = False,
        task: TaskName | None = None,
        skip_invalid: bool = False,
        max_reasons: int = 20,
        allow_empty: bool = False,
    ) -> None:
        given = list(parts)
        self._parts = [p for p in given if task is None or p.explicit or p.task in (None, task)]
        self._other_task_parts = [p for p in given if p not in self._parts]
        self.description = description
        self.is_demo = is_demo
        self.task = task
        self.skip_invalid = skip_invalid
        self.max_reasons = max_reasons
        self.allow_empty = allow_empty
        """False (the default): an iteration that yields no case raises `DataError`."""
        self._skipped = SkipReport(max_entries=max_reasons)
        self._read = ReadReport()
        self._fingerprint: str | None = None
        self._exclude: frozenset[str] = frozenset()
        self.curated_out = 0
        """Cases left out by `excluding` in the current (or latest) iteration."""

    def __repr__(self) -> str:
        return f"CaseSource({self.description!r}, task={self.task!r})"

    @property
    def skipped(self) -> SkipReport:
        """Rows skipped so far by the current (or latest) iteration."""
        return self._skipped

    @property
    def read_report(self) -> ReadReport:
        """Rows, duplicates left out and empty messages of the current (or latest) iteration."""
        return self._read

    def part_paths(self) -> list[Path | None]:
        """The local file of each input (None for a dataset hub's)."""
        return [p.path for p in self._parts]

    def iteration_state(self) -> tuple[SkipReport, ReadReport, int]:
        """What the latest iteration left on the source: its skipped rows, read report and curated-out count."""
        return self._skipped, self._read, self.curated_out

    def adopt_iteration_state(self, state: tuple[SkipReport, ReadReport, int]) -> None:
        """Take over `iteration_state()` of a copy of this source that was iterated elsewhere (data.read_ahead)."""
        self._skipped, self._read, self.curated_out = state

    def first_rows(self, n: int = 5) -> list[object]:
        """The first `n` raw rows as read (before normalisation), for telling what the input holds."""
        rows: list[object] = []
        for part in self._parts:
            for _, row in part.rows():
                if not isinstance(row, DataError):
                    rows.append(row)
                if len(rows) >= n:
                    return rows
        return rows

    @property
    def files(self) -> list[str]:
        """Display names of the underlying files or datasets."""
        return [p.display for p in self._parts]

    def with_options(
        self, *, skip_invalid: bool | None = None, max_reasons: int | None = None, allow_empty: bool | None = None
    ) -> CaseSource:
        """A copy sharing the same inputs, with other error handling."""
        clone = CaseSource(
            [*self._parts, *self._other_task_parts],
            description=self.description,
            is_demo=self.is_demo,
            task=self.task,
            skip_invalid=self.skip_invalid if skip_invalid is None else skip_invalid,
            max_reasons=self.max_reasons if max_reasons is None else max_reasons,
            allow_empty=self.allow_empty if allow_empty is None else allow_empty,
        )
        clone._fingerprint = self._fingerprint
        clone._exclude = self._exclude
        return clone

    def excluding(self, case_ids: Iterable[str]) -> CaseSource:
        """A copy that leaves out the cases with these ids (curation); its fingerprint names them, so a run on
        the curated data is a run of its own."""
        clone = self.with_options()
        clone._exclude = self._exclude | frozenset(case_ids)
        clone._fingerprint = None
        return clone

    def require_nonempty(self) -> None:
        """Raise `DataError` saying why unless the source yields at least one case.

        Reads only up to the first case (the whole input when every row is invalid or of another task);
        without skip_invalid, an invalid row before it raises its own error, as a run would.
        """
        iterator = iter(self.with_options(allow_empty=False))
        try:
            next(iterator, None)  # an iteration that yields nothing raises instead of stopping
        finally:
            iterator.close()  # type: ignore[attr-defined]  # a generator

    def __iter__(self) -> Iterator[AnyCase]:
        self._skipped = report = SkipReport(max_entries=self.max_reasons)
        self._read = read = ReadReport()
        self.curated_out = 0
        seen: dict[int, int] = {}  # hash of the case -> where it was first read (part index << 40 | position)
        for index, part in enumerate(self._parts):
            source = "demo" if self.is_demo else part.display
            for position, row in part.rows():
                read.rows += 1
                if self._filtered_out(part, row):
                    read.other_task_rows += 1
                    continue
                try:
                    if isinstance(row, DataError):
                        raise row
                    case = normalize_row(
                        row,
                        task=self.task or part.task,
                        default_label=part.label,
                        source=source,
                        fallback_id=f"{part.name}:{position}",
                    )
                except DataError as err:
                    entry = SkipEntry(
                        source=part.display, line=position, unit=part.unit, field=err.field, reason=err.reason
                    )
                    if not self.skip_invalid:
                        line_source = (
                            part.display if part.unit == "line" else f"{part.display}, row {position}"
                        )
                        raise DataError(
                            err.reason,
                            source=line_source,
                            line=position if part.unit == "line" else None,
                            field=err.field,
                            hint=f"{err.hint}; or {SKIP_HINT}" if err.hint else SKIP_HINT,
                        ) from None
                    report.add(entry)
                    continue
                digest = int.from_bytes(
                    hashlib.blake2b(case.__pydantic_serializer__.to_json(case), digest_size=8).digest(), "big"
                )
                first = seen.setdefault(digest, index << 40 | position)
                if first != index << 40 | position:
                    self._note_duplicate(read, part, position, first)
                    continue
                if case.id in self._exclude:
                    self.curated_out += 1
                    continue
                empty = sum(1 for m in case.history if not m.content.strip())
                read.empty_messages += empty
                read.cases_with_empty_messages += empty > 0
                read.cases += 1
                yield case
        if read.cases == 0 and not self.allow_empty:
            raise DataError(f"no cases were read: {self.empty_reason()}", source=self.description)

    def _note_duplicate(self, read: ReadReport, part: _Part, position: int, first: int) -> None:
        read.exact_duplicates += 1
        if len(read.duplicate_examples) < read.max_examples:
            first_part, first_pos = self._parts[first >> 40], first & ((1 << 40) - 1)
            where = "" if first_part is part else f"{first_part.display} "
            read.duplicate_examples.append(
                f"{part.display}, {part.unit} {position} repeats {where}{first_part.unit} {first_pos}"
            )

    def empty_reason(self) -> str:
        """Why the latest iteration read no case (meaningful after an iteration that yielded none)."""
        read, skipped = self._read, self._skipped
        if not self._parts:
            names = ", ".join(p.name for p in self._other_task_parts[:4])
            return (f"every file here is for another task than {self.task} ({names}); pass another --task, "
                    "or name the file itself")
        if read.rows == 0:
            what = "files hold" if len(self._parts) > 1 else "input holds"
            return f"the {what} no rows (empty, only blank lines, or an empty list)"
        if read.other_task_rows == read.rows:
            return f"all {read.rows} rows are for other tasks than {self.task} (their `task` field)"
        if skipped.count:
            first = f"; the first: {skipped.entries[0]}" if skipped.entries else ""
            return f"all {skipped.count} rows were invalid and skipped{first}"
        if self.curated_out:
            return f"all {self.curated_out} cases are excluded by curation"
        return "no row gave a case"

    def _filtered_out(self, part: _Part, row: object) -> bool:
        """Rows of another task in a mixed file (`task` field) are filtered, not counted as invalid."""
        if self.task is None or not isinstance(row, Mapping):
            return False
        value = row.get("task")
        return (
            isinstance(value, str) and value.strip().lower() in TASKS and value.strip().lower() != self.task
        )

    def count(self) -> int:
        """Number of rows (cheap: no normalisation). An upper bound when rows are filtered or skipped."""
        return sum(p.count() for p in self._parts)

    def fingerprint(self) -> str:
        """sha256 over the input bytes (or HF fingerprints) and the task filter; stable across runs."""
        if self._fingerprint is None:
            digest = hashlib.sha256(_FINGERPRINT_VERSION.encode())
            digest.update(f"|task={self.task}".encode())
            for part in self._parts:
                digest.update(f"|{part.digest()}".encode())
            if self._exclude:
                digest.update(("|excluded=" + "\x1f".join(sorted(self._exclude))).encode())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint


def _file_part(path: Path, root: Path | None, *, explicit: bool) -> _Part:
    rel = path.relative_to(root).as_posix() if root is not None else path.name
    task, label = name_hints(rel)
    return _Part(display=str(path), name=rel, path=path, task=task, label=label, explicit=explicit)


def _hub_parts(spec: str, task: TaskName | None, split: str) -> tuple[list[_Part], str]:
    from uxbench.extras import require

    require("hub", f"hf:{spec}")  # before anything is read or written
    repo, config = spec, None
    if ":" in spec and not Path(spec).exists():
        repo, config = spec.rsplit(":", 1)
    if not repo:
        raise DataError(
            "empty repo id", source=f"hf:{spec}", hint="use hf:owner/name or hf:owner/name:config"
        )
    configs: list[str | None] = [config] if config else configs_for(repo, task)
    if not configs:
        raise DataError(f"no config folder for task {task!r}", source=f"hf:{repo}")
    parts = []
    for cfg in configs:
        hub = HubDataset(repo, cfg, split)
        hint_task, label = name_hints(cfg or Path(repo).name)
        parts.append(
            _Part(
                display=hub.display,
                name=cfg or repo,
                hub=hub,
                task=hint_task,
                label=label,
                explicit=bool(config),
            )
        )
    names = ", ".join(c for c in configs if c) or repo
    return parts, f"hf:{repo} [{names}] split={split}"


MINING_SIGNALS, MINING_CASES = "signals.parquet", "cases"
"""What marks a `uxbench mine run` output directory, and its folder of test cases (written with --model only)."""


def mining_cases(path: Path) -> Path:
    """A `uxbench mine run` output directory stands for its `cases/` folder; an output without one (or its
    missing `cases/`) is an error that says why: only the LLM agents of `mine run --model` write test cases."""
    output = path if (path / MINING_SIGNALS).is_file() else path.parent if path.name == MINING_CASES else None
    if output is None or not (output / MINING_SIGNALS).is_file():
        return path
    cases = output / MINING_CASES
    if cases.is_dir():
        return cases
    raise DataError(
        f"is the output of `uxbench mine run` without test cases: there is no {cases}. Only `mine run --model "
        "PROVIDER:MODEL` writes them (its agents turn the flagged replies into Task 1/2/3 cases; --no-llm stops at "
        f"the signals in {output / MINING_SIGNALS})",
        source=str(output),
        hint=f"rerun `uxbench mine run LOGS --out {output} --model PROVIDER:MODEL` (it resumes after the stages "
             f"done), then `uxbench run --data {cases}`; or train a judge on the signals: `uxbench judge train "
             f"--data {output}`",
    )


def load_cases(
    source: str | Path | None = None,
    *,
    task: TaskName | None = None,
    split: str = "test",
    skip_invalid: bool = False,
) -> CaseSource:
    """Open a case source. Nothing is read until iteration (HF datasets load on first use).

    task: keep only this task (files and configs named for another task are left out; rows of a named
    file are read as this task). split: the HF split. skip_invalid: skip bad rows (see `.skipped`)
    instead of raising `DataError` at the first one.
    """
    if task is not None and task not in TASKS:
        raise ConfigError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")

    def make(parts: list[_Part], description: str, *, is_demo: bool = False) -> CaseSource:
        return CaseSource(
            parts, description=description, is_demo=is_demo, task=task, skip_invalid=skip_invalid
        )

    text = "" if source is None else str(source).strip()
    if source is None or (text == "demo" and not Path(text).exists()):
        parts = [_file_part(p, DEMO_DIR, explicit=False) for p in data_files(DEMO_DIR)]
        return make(parts, f"bundled demo set ({task or 'all tasks'})", is_demo=True)
    if text.startswith("hf:"):
        parts, description = _hub_parts(text[3:].strip(), task, split)
        return make(parts, description)
    path = Path(text).expanduser()
    path = mining_cases(path)
    if path.is_file():
        if file_kind(path) is None:
            raise DataError(
                "unsupported file type", source=text, hint="use .jsonl, .jsonl.gz, .json or .parquet"
            )
        return make([_file_part(path, None, explicit=True)], f"file {path}")
    if path.is_dir():
        if is_saved_dataset(path):
            parts, description = _hub_parts(str(path), task, split)
            return make(parts, description)
        files = data_files(path)
        if not files:
            raise DataError("no .jsonl, .json or .parquet files in this directory", source=text)
        parts = [_file_part(p, path, explicit=False) for p in files]
        return make(parts, f"directory {path} ({len(files)} files)")
    if REPO_ID.fullmatch(text):
        parts, description = _hub_parts(text, task, split)
        return make(parts, description)
    raise DataError(
        "no such file or directory",
        source=text,
        hint="give a .jsonl/.json/.parquet file, a directory, hf:<repo>[:<config>], or none for the demo",
    )
