"""Execute a task over a data source with a model: resumable, crash-safe, memory flat in the sample count.

Cases stream from the source through a bounded queue to `concurrency` workers; each finished sample is
committed to the run's SQLite store before the next is taken, so a crash, kill or Ctrl-C loses at most the
samples in flight, and the rerun (same command) finishes only what is missing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from uxbench.errors import ConfigError, UxbenchError
from uxbench.fileio import remove_stale_temps
from uxbench.runs import manifest as mf
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import SAMPLES_DB, RunStore

ProgressFn = Callable[["ProgressEvent"], None]
ABORT_AFTER_ERRORS = 8
"""Stop a run whose first this-many samples all failed (nothing has worked: likely a configuration error)."""


class RunAborted(UxbenchError):
    """The run was stopped early because every sample so far failed."""


class RunSpec(BaseModel):
    """Everything `uxbench run` was asked."""

    task: str = "judge"
    model: str
    model_args: dict[str, str] = Field(default_factory=dict)
    data: str | None = None
    """Path, `hf:` id or None for the bundled demo set."""
    split: str = "test"
    limit: int | None = None
    concurrency: int | None = None
    task_options: dict[str, Any] = Field(default_factory=dict)
    out: Path | None = None
    runs_root: Path = Path("runs")
    fresh: bool = False
    skip_invalid: bool = False
    use_cache: bool = True
    cache_path: Path | None = None
    max_attempts: int = 6
    timeout_s: float | None = None
    """Per-call timeout enforced by the runtime (providers also have their own)."""


@dataclass
class ProgressEvent:
    kind: str  # "start" | "sample" | "end"
    done: int
    total: int
    metric_name: str = ""
    metric_value: float | None = None
    run_dir: Path | None = None
    resumed: int = 0


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    interrupted: bool = False


def _sample_id(case_json: bytes, identity_hash: str) -> str:
    import hashlib

    return hashlib.sha256(identity_hash.encode() + b"\0" + case_json).hexdigest()[:24]


async def execute(spec: RunSpec, progress: ProgressFn | None = None) -> RunResult:
    # Imported here so `uxbench --help` stays fast.
    from uxbench.data.loaders import load_cases
    from uxbench.models.model import create_model
    from uxbench.models.registry import parse_model_spec
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.runtime.retry import RetryPolicy
    from uxbench.tasks.registry import create_task

    parse_model_spec(spec.model)
    task = create_task(spec.task, spec.task_options)
    source = load_cases(spec.data, task=spec.task, split=spec.split, skip_invalid=spec.skip_invalid)  # type: ignore[arg-type]

    fingerprint = source.fingerprint()  # hashes the whole input: once
    identity = mf.run_identity(
        task=spec.task, task_config=task.config(), template_hashes=task.template_hashes(),
        model_spec=spec.model, model_args=spec.model_args, data_fingerprint=fingerprint,
    )
    identity_hash = mf.content_hash(identity)
    run_id = f"{spec.task}-{mf.slug(spec.model)}-{identity_hash[:10]}"
    run_dir = spec.out if spec.out is not None else spec.runs_root / run_id
    store = RunStore(run_dir)
    _prepare_dir(store, identity, identity_hash, spec.fresh)
    if store.path.exists():
        remove_stale_temps(store.path)  # a file half-written by a killed run

    cache = None
    if spec.use_cache:
        cache = ResponseCache(spec.cache_path or default_cache_path())
    model = create_model(
        spec.model, spec.model_args, max_concurrency=spec.concurrency, cache=cache,
        retry=RetryPolicy(max_attempts=spec.max_attempts, timeout_s=spec.timeout_s),
    )
    concurrency = model.limiter.max_concurrency
    store.write_manifest({
        "run_id": run_id,
        "identity_hash": identity_hash,
        "identity": identity,
        "task": spec.task,
        "task_config": identity["task_config"],
        "template_hashes": identity["template_hashes"],
        "model": {"spec": spec.model, "args": mf.redact_args(spec.model_args)},
        "data": {"source": spec.data or "demo", "description": source.description,
                 "fingerprint": fingerprint, "split": spec.split, "demo": source.is_demo},
        "options": {"limit": spec.limit, "concurrency": concurrency, "max_attempts": spec.max_attempts,
                    "cache": str(cache.path) if cache else None, "skip_invalid": spec.skip_invalid},
        "environment": mf.environment(),
    })

    done = store.done_ids()
    chosen = _limit_selection(source, spec.limit)
    selected: list[str] = []
    queue: asyncio.Queue[tuple[int, Any, str] | None] = asyncio.Queue(maxsize=concurrency * 2)
    total = source.count() if chosen is None else len(chosen)
    state = {"done": 0, "hits": 0, "counted": 0, "ok": 0, "errors": 0}
    first_error: list[str] = []
    metric_name = ""
    emit = progress or (lambda _e: None)
    already = 0

    async def produce() -> None:
        nonlocal already
        for index, case in enumerate(source):
            if chosen is not None and index not in chosen:
                continue
            # pydantic's own JSON encoder: field order is fixed by the schema, so the bytes are stable
            sid = _sample_id(case.__pydantic_serializer__.to_json(case), identity_hash)
            selected.append(sid)
            if sid in done:
                already += 1
                state["done"] += 1
                continue
            await queue.put((index, case, sid))
        for _ in range(concurrency):
            await queue.put(None)

    async def work() -> None:
        nonlocal metric_name
        while (item := await queue.get()) is not None:
            index, case, sid = item
            record: SampleRecord = await task.run_sample(case, model, sample_id=sid, index=index)
            store.put(record)
            state["done"] += 1
            if record.status == "ok":
                state["ok"] += 1
            else:
                state["errors"] += 1
                message = record.error or "unknown error"
                if len(first_error) < 3 and message not in first_error:
                    first_error.append(message)
                if state["ok"] == 0 and state["errors"] >= ABORT_AFTER_ERRORS:
                    # Nothing has worked yet: a wrong base URL, key or model name. Stop instead of
                    # spending retries on every remaining sample.
                    raise RunAborted(
                        f"The first {state['errors']} samples all failed, so the run was stopped. First error: "
                        f"{first_error[0].rstrip('.')}. Check the model name, base_url and API key; finished "
                        f"samples are saved in {run_dir}, and rerunning the same command retries the failed ones."
                    )
            metric_name, hit = task.progress_metric(record)
            if hit is not None:
                state["counted"] += 1
                state["hits"] += int(hit)
            emit(ProgressEvent("sample", state["done"], total, metric_name,
                               state["hits"] / state["counted"] if state["counted"] else None))

    emit(ProgressEvent("start", 0, total, run_dir=run_dir, resumed=len(done)))
    started = time.monotonic()
    interrupted = False
    try:
        await _run_all([produce(), *(work() for _ in range(concurrency))])
    except (asyncio.CancelledError, KeyboardInterrupt, RunAborted):
        interrupted = True
        raise
    finally:
        await model.aclose()
        if interrupted:
            store.close()
    elapsed = time.monotonic() - started

    summary = task.summarize(store.iter_records(selected))
    summary.update({
        "run_id": run_id,
        "run_dir": str(run_dir),
        "task": spec.task,
        "model": spec.model,
        "demo_data": source.is_demo,
        "data": {"description": source.description, "fingerprint": fingerprint},
        "n_selected": len(selected),
        "errors": first_error,
        "complete": summary.get("n_samples", 0) - summary.get("n_errors", 0) == len(selected),
        "skipped_rows": _skipped(source),
        "usage": model.usage.to_dict(),
        "timing": {"elapsed_s": round(elapsed, 3), "resumed_samples": already},
        "concurrency": {"max": concurrency, "final": model.limiter.current_limit},
    })
    store.write_summary(summary)
    store.export_jsonl(selected)
    store.close()
    emit(ProgressEvent("end", state["done"], total, run_dir=run_dir))
    return RunResult(run_dir=run_dir, summary=summary)


async def _run_all(coros: list[Coroutine[Any, Any, None]]) -> None:
    """Run coroutines together; the first exception cancels the others (a TaskGroup, for Python 3.10)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


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
        return dict(report.model_dump(mode="json"))
    return {"count": int(getattr(report, "count", 0))}


def _prepare_dir(store: RunStore, identity: dict[str, Any], identity_hash: str, fresh: bool) -> None:
    existing = store.read_manifest() if store.path.exists() else None
    if existing is not None and fresh:
        store.close()
        for name in (SAMPLES_DB, SAMPLES_DB + "-wal", SAMPLES_DB + "-shm", "summary.json", "samples.jsonl"):
            (store.path / name).unlink(missing_ok=True)
        return
    if existing is not None:
        if existing.get("identity_hash") != identity_hash:
            old = existing.get("identity") or {}
            changed = [k for k in identity if old.get(k) != identity[k]] or ["unknown"]
            raise ConfigError(
                f"{store.path} holds a run with a different configuration (differs in: {', '.join(changed)}). "
                "Choose another --out, or pass --fresh to discard it and start over."
            )
    elif store.path.exists() and any(store.path.iterdir()):
        raise ConfigError(f"{store.path} exists and is not a uxbench run directory; choose another --out.")

