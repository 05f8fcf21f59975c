"""Execute a task over a data source: generation (the model under test), then scoring (the judge, Tasks 2/3).

Cases stream from the source through a bounded queue to `concurrency` workers; each finished sample is
committed to the run's SQLite store (with the case itself) before the next is taken, so a crash, kill or Ctrl-C
loses at most the samples in flight, and the rerun (same command) finishes only what is missing. The scoring
step reads the stored generations and is resumable the same way (`orchestrate.scoring_step`). The summary is
computed from the store alone (`orchestrate.summary`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uxbench.dirlock import LOCK_FILE, hold_dir_lock
from uxbench.errors import ConfigError, DataError
from uxbench.fileio import remove_stale_temps
from uxbench.orchestrate.pool import run_pool
from uxbench.orchestrate.preflight import check_models
from uxbench.orchestrate.primary import choose_primary
from uxbench.orchestrate.progress import (
    ABORT_AFTER_ERRORS,
    FailureGuard,
    ProgressEvent,
    ProgressFn,
    RunAborted,
    note,
)
from uxbench.orchestrate.spec import JudgeSpec, RunSpec
from uxbench.runs import manifest as mf
from uxbench.runs.command import command_line
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import SAMPLES_DB, SAMPLES_JSONL, SCORES_JSONL, RunStore
from uxbench.runs.summary import check_summary

__all__ = ["ABORT_AFTER_ERRORS", "JudgeSpec", "ProgressEvent", "RunAborted", "RunResult", "RunSpec", "execute"]


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    interrupted: bool = False


CACHE_HOLD_S = 0.25
"""The response cache commits a run's new answers together, at most this many seconds after the first of them
(runtime/batched_writes.py): a kill loses at most these, which are only asked again; the records and the count
of requests sent are still committed every turn of the loop."""

MAX_SKIPPED_LISTED = 100_000
"""Skipped rows whose reasons a run keeps (in skipped_rows.jsonl); beyond that they are counted only."""


def _sample_id(case_json: bytes, identity_hash: str) -> str:
    return hashlib.sha256(identity_hash.encode() + b"\0" + case_json).hexdigest()[:24]


async def execute(spec: RunSpec, progress: ProgressFn | None = None) -> RunResult:
    # Imported here so `uxbench --help` stays fast.
    from uxbench.data.loaders import load_cases
    from uxbench.models.registry import validate_provider_args
    from uxbench.orchestrate.scoring_step import judge_role
    from uxbench.orchestrate.strategy_step import classifier_role, require_recovery
    from uxbench.runs.curation import curated
    from uxbench.tasks.registry import create_task

    validate_provider_args(spec.model, spec.model_args)  # unknown or bad -M: an error before anything runs
    task = create_task(spec.task, spec.task_options)
    role = None
    if spec.judge is not None:
        if not task.generative:
            raise ConfigError(
                f"Task '{spec.task}' has no judge step: in Task 1 the model under test (--model) is the judge. "
                "Drop --judge, or run --task eval / recovery."
            )
        validate_provider_args(spec.judge.model, spec.judge.args, option="--judge-arg")
        role = judge_role(spec.judge)
    labeller = None
    if spec.strategy_model is not None:
        require_recovery(spec.task)
        validate_provider_args(spec.strategy_model.model, spec.strategy_model.args, option="--strategy-arg")
        labeller = classifier_role(spec.strategy_model)
    calibration = _calibration(spec, role)  # an unusable calibration run stops the run before anything is called
    source = load_cases(spec.data, task=spec.task, split=spec.split, skip_invalid=spec.skip_invalid)  # type: ignore[arg-type]
    if spec.skip_invalid:
        source = source.with_options(max_reasons=MAX_SKIPPED_LISTED)  # every skipped row is listed in the run
    source = curated(source, spec.data, spec.curation)  # cases excluded in `uxbench view` are left out
    source.require_nonempty()  # nothing read is an error that says why, before a run directory exists
    await check_models(_roles(spec))  # a missing key, an unreachable server, no GPU: one error, before anything

    fingerprint = source.fingerprint()  # hashes the whole input: once
    identity = mf.run_identity(
        task=spec.task, task_config=task.config(), template_hashes=task.template_hashes(),
        model_spec=spec.model, model_args=spec.model_args, data_fingerprint=fingerprint,
    )
    identity_hash = mf.content_hash(identity)
    defaults = create_task(spec.task, {}).config()
    run_id = mf.run_name(spec.task, spec.model, identity["task_config"], defaults, identity_hash)
    if spec.out is None:
        run_id, run_dir = mf.run_dir_under(spec.runs_root, run_id, mf.run_name(
            spec.task, spec.model, identity["task_config"], defaults, identity_hash, legacy=True))
    else:
        run_dir = spec.out
    new_dir = not run_dir.exists() or not any(run_dir.iterdir())
    try:
        with hold_dir_lock(run_dir, command=f"uxbench run --task {spec.task}", what="run directory"):
            prepared = _Prepared(task=task, role=role, labeller=labeller, source=source, identity=identity,
                                 identity_hash=identity_hash, run_id=run_id, run_dir=run_dir, new_dir=new_dir,
                                 calibration=calibration)
            return await _execute_locked(spec, prepared, progress)
    except BaseException:
        if new_dir:
            _remove_if_nothing_done(run_dir)
        raise


def _roles(spec: RunSpec) -> list[tuple[str, str, dict[str, str]]]:
    roles = [("--model", spec.model, spec.model_args)]
    if spec.judge is not None:
        roles.append(("--judge", spec.judge.model, spec.judge.args))
    if spec.strategy_model is not None:
        roles.append(("--strategy-model", spec.strategy_model.model, spec.strategy_model.args))
    return roles


def _remove_if_nothing_done(run_dir: Path) -> None:
    """A run directory this invocation created and that holds no finished sample goes again: it would only be
    a directory without a summary for `report` and `leaderboard` to trip over."""
    import shutil

    store = RunStore(run_dir)
    try:
        finished = bool(store.done_ids()) if (run_dir / SAMPLES_DB).exists() else False
    except Exception:  # a store that cannot be read holds nothing worth keeping either
        finished = False
    finally:
        store.close()
    if not finished:
        shutil.rmtree(run_dir, ignore_errors=True)


@dataclass
class _Prepared:
    """What `execute` checked and computed before taking the run directory's lock."""

    task: Any
    role: Any
    labeller: Any
    source: Any
    identity: dict[str, Any]
    identity_hash: str
    run_id: str
    run_dir: Path
    new_dir: bool
    """The directory did not exist (or was empty) before this invocation."""
    calibration: dict[str, Any] | None = None
    """The judge's calibration record (`orchestrate.calibration`), when --calibration was given."""


def _calibration(spec: RunSpec, role: Any) -> dict[str, Any] | None:
    if spec.calibration is None:
        return None
    if role is None:
        raise ConfigError("--calibration corrects a judge's Good% (Tasks 2/3): it needs --judge and --task eval or "
                          "recovery.")
    from uxbench.orchestrate.calibration import calibration_record, load_calibration_run

    return calibration_record(role.info, load_calibration_run(spec.calibration))


async def _execute_locked(spec: RunSpec, prepared: _Prepared, progress: ProgressFn | None) -> RunResult:
    """The run, with this process holding the run directory's lock (a second process gets a clear error)."""
    from uxbench.models.model import create_model
    from uxbench.orchestrate.scoring_step import judges_in_manifest, score_step
    from uxbench.orchestrate.strategy_step import classifiers_in_manifest, strategy_step
    from uxbench.orchestrate.summary import run_summary, usage_key
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.runtime.retry import RetryPolicy

    task, role, labeller, source = prepared.task, prepared.role, prepared.labeller, prepared.source
    identity, identity_hash, run_id, run_dir = (prepared.identity, prepared.identity_hash, prepared.run_id,
                                                prepared.run_dir)

    fingerprint = identity["data_fingerprint"]
    store = RunStore(run_dir)
    previous = _prepare_dir(store, identity, identity_hash, spec.fresh)
    if store.path.exists():
        remove_stale_temps(store.path)  # a file half-written by a killed run

    cache = (ResponseCache(spec.cache_path or default_cache_path(), hold_s=CACHE_HOLD_S) if spec.use_cache
             else None)
    retry = RetryPolicy(max_attempts=spec.max_attempts, timeout_s=spec.timeout_s)
    model = create_model(spec.model, spec.model_args, max_concurrency=spec.concurrency, cache=cache, retry=retry)
    model.on_send = lambda: store.count_sent("model")
    concurrency = model.limiter.max_concurrency
    judges = judges_in_manifest(previous or {})
    primary, primary_note = (previous or {}).get("primary_judge"), None
    if role is not None:
        primary, primary_note = choose_primary(previous or {}, role.key, role.spec.model, spec.make_primary,
                                               set(store.judges()) if previous else set())
        judges[role.key] = role.info
    classifiers = classifiers_in_manifest(previous or {})
    if labeller is not None:
        classifiers[labeller.key] = labeller.info
    calibrations = dict((previous or {}).get("calibrations") or {})
    if prepared.calibration is not None:
        calibrations[role.key] = prepared.calibration
    manifest: dict[str, Any] = {
        "run_id": run_id,
        "identity_hash": identity_hash,
        "identity": identity,
        "task": spec.task,
        "task_config": identity["task_config"],
        "template_hashes": identity["template_hashes"],
        "model": {"spec": spec.model, "args": mf.redact_args(spec.model_args)},
        "judges": judges,
        "primary_judge": primary,
        **({"strategy_classifiers": classifiers} if classifiers else {}),
        **({"calibrations": calibrations} if calibrations else {}),
        "data": {"source": spec.data or "demo", "description": source.description,
                 "fingerprint": fingerprint, "split": spec.split, "demo": source.is_demo},
        "options": {"limit": spec.limit, "concurrency": concurrency, "max_attempts": spec.max_attempts,
                    "cache": str(cache.path) if cache else None, "skip_invalid": spec.skip_invalid},
        "environment": mf.environment(),
    }
    store.write_manifest(manifest)

    emit = progress or (lambda _e: None)
    if primary_note:
        emit(note(primary_note))
    started = time.monotonic()
    judge_model = strategy_model = None
    try:
        selected, resumed = await _generate(store, task, model, source, spec, identity_hash, concurrency, emit,
                                            prepared.new_dir)
        store.write_selection(selected)
        if role is not None:
            judge_model = create_model(
                role.spec.model, role.spec.args, cache=cache, retry=retry,
                max_concurrency=role.spec.concurrency or spec.concurrency,
            )
            judge_model.on_send = lambda: store.count_sent(usage_key(role.key))
            await score_step(store, task, role, judge_model, selected=selected,
                             concurrency=judge_model.limiter.max_concurrency, progress=progress)
        if labeller is not None:
            strategy_model = create_model(
                labeller.spec.model, labeller.spec.args, cache=cache, retry=retry,
                max_concurrency=labeller.spec.concurrency or spec.concurrency,
            )
            strategy_model.on_send = lambda: store.count_sent(usage_key(labeller.key))
            await strategy_step(store, labeller, strategy_model, selected=selected,
                                concurrency=strategy_model.limiter.max_concurrency, progress=progress)
    except (asyncio.CancelledError, KeyboardInterrupt, RunAborted):
        store.close()
        raise
    finally:
        await model.aclose()
        if judge_model is not None:
            await judge_model.aclose()
        if strategy_model is not None:
            await strategy_model.aclose()
        if cache is not None:
            cache.close()  # the answers it still holds (CACHE_HOLD_S)
    elapsed = time.monotonic() - started

    # samples.jsonl and scores.jsonl: written in the summary's pass over the records and scores, after summary.json
    with store.exporting_jsonl() as export, store.exporting_scores_jsonl(selected) as scores:
        summary = run_summary(store, task, manifest, spec.summary, selected=selected, each=export,
                              scores_sink=scores, extra={
            "skipped_rows": _skipped(source),
            "read": source.read_report.model_dump(mode="json"),
            "invocation": {
                "command": command_line(), "elapsed_s": round(elapsed, 3), "resumed_samples": resumed,
                "usage": model.usage.to_dict() | (judge_model.usage.to_dict() if judge_model is not None else {})
                | (strategy_model.usage.to_dict() if strategy_model is not None else {}),
                "concurrency": {"max": concurrency, "final": model.limiter.current_limit},
            },
        })
        check_summary(summary, str(store.path / "summary.json"))  # the writer meets the readers' models
        store.write_summary(summary)
    store.close()
    emit(ProgressEvent("end", len(selected), len(selected), run_dir=run_dir))
    return RunResult(run_dir=run_dir, summary=summary)


async def _generate(
    store: RunStore, task: Any, model: Any, source: Any, spec: RunSpec, identity_hash: str, concurrency: int,
    emit: ProgressFn, new_dir: bool,
) -> tuple[list[str], int]:
    """The generation step: run every selected case that has no successful record yet."""
    done = store.done_ids()
    if store.rebuilt is not None:
        records, scores, unreadable = store.rebuilt
        emit(note(f"{SAMPLES_DB} was missing: {records} records and {scores} scores were read back from "
                  f"{SAMPLES_JSONL} and {SCORES_JSONL}" + (f" ({unreadable} unreadable lines left out)" if unreadable
                                                           else "") + "; only what they lack is run again."))
    chosen = _limit_selection(source, spec.limit)
    # The bar counts the cases that run: invalid rows skipped, duplicates and curated cases are not among them.
    # A new run (nothing done, no --limit, no --skip-invalid: an invalid row stops it) does not read the input
    # twice for it: the bar starts at the rows' count (cheap), and once every case has been read it takes off
    # what the rows' count holds beyond the cases (rows of another task, exact duplicates, curated cases).
    fresh = not done and chosen is None and not spec.skip_invalid
    if fresh:
        total, already = source.count(), 0
    else:
        total, already = _count_selected(source, chosen, done, identity_hash)
        _check_read(store, source, spec, total, emit)
    selected: list[str] = []
    # The bar starts at the samples already done, and `done` only grows from there.
    state = {"done": already, "hits": 0, "counted": 0, "resumed": 0, "total": total}
    by_class: dict[str, tuple[int, int]] = {}
    guard = FailureGuard("samples", None if new_dir else store.path, "Check the model name, base_url and API key")

    def take(index: int, case: Any, case_json: bytes) -> tuple[int, Any, str, bytes] | None:
        """The work item of the `index`-th case read, or None when it is not to run now."""
        if chosen is not None and index not in chosen:
            return None
        sid = _sample_id(case_json, identity_hash)
        selected.append(sid)
        if sid in done:
            state["resumed"] += 1
            if sid in store.cases_missing:
                store.put_case(sid, case_json)
            return None
        return index, case, sid, case_json

    def all_read() -> None:
        if fresh:  # every case has been read
            state["total"] = len(selected)
            _check_read(store, source, spec, len(selected), emit)

    def pending() -> Any:
        for index, case in enumerate(source):
            # pydantic's own JSON encoder: field order is fixed by the schema, so the bytes are stable
            item = take(index, case, case.__pydantic_serializer__.to_json(case))
            if item is not None:
                yield item
        all_read()

    async def pending_ahead(ahead: Any) -> Any:  # the same, from cases read in another process (data.read_ahead)
        index = 0
        async for case, case_json in ahead:
            item = take(index, case, case_json)
            index += 1
            if item is not None:
                yield item
        all_read()

    async def work(item: tuple[int, Any, str, bytes]) -> None:
        index, case, sid, case_json = item
        record: SampleRecord = await task.run_sample(case, model, sample_id=sid, index=index)
        store.put(record, case_json)
        state["done"] += 1
        if record.status != "error":  # a conversation too long for the model: the model works
            guard.success()
        else:
            guard.failure(record.error)
        metric_name, hit = task.progress_metric(record)
        if hit is not None:
            state["counted"] += 1
            state["hits"] += int(hit)
            if record.gold is not None:
                hits, counted = by_class.get(str(record.gold), (0, 0))
                by_class[str(record.gold)] = (hits + int(hit), counted + 1)
        emit(ProgressEvent("sample", state["done"], state["total"], metric_name,
                           state["hits"] / state["counted"] if state["counted"] else None,
                           metric_by_class=dict(by_class) if by_class else None))

    from uxbench.data.read_ahead import for_run  # a large input's cases read in a second process
    emit(ProgressEvent("start", already, total, run_dir=store.path, resumed=already))
    reader = for_run(source)
    try:
        await run_pool(pending() if reader is None else pending_ahead(reader), work, concurrency)
    finally:
        if reader is not None:
            await reader.aclose()
    return selected, state["resumed"]


def _check_read(store: RunStore, source: Any, spec: RunSpec, total: int, emit: ProgressFn) -> None:
    """After a whole pass over the input: the note on skipped rows, and an error when no case is left to run."""
    if source.skipped.count:
        emit(note(_write_skipped(store, source)))
    if total == 0:
        raise DataError(
            f"No cases were read from {source.description}: there is nothing to run. Check that the input holds "
            f"{spec.task} rows (`uxbench data validate --task {spec.task} PATH`)."
        )


def _count_selected(source: Any, chosen: set[int] | None, done: set[str], identity_hash: str) -> tuple[int, int]:
    """(cases selected, of those with a finished record), by a pass over the data: the file's row count would
    include invalid rows skipped, exact duplicates and curated cases, and the directory may hold records of
    cases this run does not select (a larger --limit before, or curation)."""
    total = already = 0
    for index, case in enumerate(source):
        if chosen is not None and index not in chosen:
            continue
        total += 1
        if done and _sample_id(case.__pydantic_serializer__.to_json(case), identity_hash) in done:
            already += 1
    return total, already


SKIPPED_ROWS = "skipped_rows.jsonl"
"""The invalid rows `--skip-invalid` left out, one JSON object each (file, line, field, reason)."""


def _write_skipped(store: RunStore, source: Any) -> str:
    """Write every skipped row's reason into the run directory; returns the note that says so."""
    from uxbench.fileio import atomic_write_lines

    report = source.skipped
    path = store.path / SKIPPED_ROWS
    atomic_write_lines(path, (entry.model_dump_json().encode("utf-8") for entry in report.entries))
    listed = "each" if len(report.entries) == report.count else f"the first {len(report.entries)}"
    return (f"{report.count} invalid rows were skipped (--skip-invalid) and are not among the cases that run; "
            f"{listed} with its file, line and reason: {path}")


def _limit_selection(source: Any, limit: int | None) -> set[int] | None:
    """Indices of a deterministic subset of `limit` cases, balanced over the gold label when there is one.

    Taking the first N rows would give only bad cases on Task 1 files (bad rows come first); instead cases are
    ranked by a hash of their id, so `--limit 100` is stable across runs and contains `--limit 50`.
    """
    import hashlib

    if limit is None:
        return None
    if limit <= 0:
        raise ConfigError("--limit must be a positive number of cases.")
    groups: dict[str, list[tuple[str, int]]] = {}
    for index, case in enumerate(source):
        key = hashlib.sha256(f"{case.id}\0{index}".encode()).hexdigest()
        groups.setdefault(str(getattr(case, "label", "")), []).append((key, index))
    if sum(len(g) for g in groups.values()) <= limit:
        return None
    for members in groups.values():
        members.sort()
    # round-robin over groups in label order: balanced classes, deterministic
    picked: set[int] = set()
    cursors = {label: 0 for label in groups}
    while len(picked) < limit:
        for label in sorted(groups):
            if len(picked) >= limit:
                break
            i = cursors[label]
            if i < len(groups[label]):
                picked.add(groups[label][i][1])
                cursors[label] = i + 1
    return picked


def _skipped(source: Any) -> dict[str, Any]:
    report = getattr(source, "skipped", None)
    if report is None:
        return {"count": 0}
    if hasattr(report, "model_dump"):
        dumped = dict(report.model_dump(mode="json"))
        dumped["entries"] = dumped.get("entries", [])[:20]  # all of them are in SKIPPED_ROWS
        if dumped.get("count"):
            dumped["listed_in"] = SKIPPED_ROWS
        return dumped
    return {"count": int(getattr(report, "count", 0))}


def _prepare_dir(
    store: RunStore, identity: dict[str, Any], identity_hash: str, fresh: bool
) -> dict[str, Any] | None:
    """Check the directory can hold this run; returns the manifest of the run it already holds (None if new or
    discarded with --fresh)."""
    existing = store.read_manifest() if store.path.exists() else None
    if existing is not None and fresh:
        store.discard()
        return None
    if existing is not None:
        if existing.get("identity_hash") != identity_hash:
            old = existing.get("identity") or {}
            changed = [k for k in identity if old.get(k) != identity[k]] or ["unknown"]
            raise ConfigError(
                f"{store.path} holds a run with a different configuration (differs in: {', '.join(changed)}). "
                "Choose another --out, or pass --fresh to discard it and start over."
            )
    elif (store.path / SAMPLES_DB).is_file():
        # a run whose damaged manifest was moved aside (`manifest_fix`): a sample is kept only when its id, derived
        # from this configuration, matches; the new manifest is written before any sample runs
        return None
    elif store.path.exists() and any(p.name != LOCK_FILE for p in store.path.iterdir()):
        raise ConfigError(f"{store.path} exists and is not a uxbench run directory; choose another --out.")
    return existing

