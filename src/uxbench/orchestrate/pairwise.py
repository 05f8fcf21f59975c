"""`uxbench pairwise RUN_A RUN_B --judge J`: a pairwise judge compares two Task 2/3 runs' replies, case by case.

Cases are matched by case id through the cases stored in each run (the same conversation in both: history and
user message equal). Every pair is judged in both orders; each answer is committed to OUT/pairwise.sqlite as it
comes (keyed by case, judge, order), so a killed comparison resumes with the same command and asks only for
what is missing. The figures (`pairwise_figures`) are computed from the store alone.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from uxbench.data import user_files
from uxbench.data.schema import AnyCase
from uxbench.errors import ConfigError, DataError, ModelError, UxbenchError
from uxbench.metrics.proportions import proportion
from uxbench.metrics.winrate import win_rate
from uxbench.models.model import Model
from uxbench.orchestrate.pool import run_pool
from uxbench.orchestrate.progress import FailureGuard, ProgressEvent, ProgressFn
from uxbench.runs import manifest as mf
from uxbench.runs.pairwise_store import DB, MANIFEST, SUMMARY, PairVerdictRecord, PairwiseStore
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.scoring.judgement import call_totals
from uxbench.scoring.pairwise import ORDERS, Order, PairwiseJudge, PairwiseSettings, combine
from uxbench.scoring.prompts.judge_input import JudgeInput
from uxbench.tasks.base import Task

_CASE: TypeAdapter[AnyCase] = TypeAdapter(AnyCase)


class PairwiseSpec(BaseModel):
    """Everything `uxbench pairwise` was asked."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_a: Path
    run_b: Path
    judge: str
    """PROVIDER:MODEL of the pairwise judge."""
    judge_args: dict[str, str] = Field(default_factory=dict)
    settings: PairwiseSettings = Field(default_factory=PairwiseSettings)
    out: Path | None = None
    """Output directory (default: RUNS_ROOT/pairwise-<model A>-vs-<model B>-<hash of the two run ids>)."""
    runs_root: Path = Path("runs")
    limit: int | None = None
    """Compare a deterministic subset of N shared cases (ranked by a hash of the case id)."""
    concurrency: int | None = None
    use_cache: bool = True
    cache_path: Path | None = None
    max_attempts: int = 6
    timeout_s: float | None = None


@dataclass
class Side:
    """One of the two runs."""

    label: str
    store: RunStore
    manifest: dict[str, Any]
    task: Task
    selected: list[str]

    @property
    def model(self) -> str:
        model = self.manifest.get("model")
        return str(model.get("spec")) if isinstance(model, dict) else str(model)

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.store.path), "run_id": self.manifest.get("run_id"), "model": self.model,
                "task": self.task.name, "task_config": self.manifest.get("task_config")}


@dataclass
class Pair:
    case_id: str
    sample_a: str
    sample_b: str
    item: JudgeInput
    reply_a: str
    reply_b: str
    hashes: dict[str, str] = field(default_factory=dict)
    """Input hash of each order's messages."""


@dataclass
class PairwiseResult:
    out_dir: Path
    figures: dict[str, Any]
    """This judge's figures (`pairwise_figures`) plus the match counts."""


def _open_side(path: Path, label: str) -> Side:
    from uxbench.orchestrate.summary import task_from_manifest

    store = RunStore.open_existing(path)
    manifest = store.read_manifest() or {}
    task = task_from_manifest(manifest, str(store.path / "manifest.json"))
    if not task.generative:
        raise ConfigError(f"Run {label} ({store.path}) is a Task 1 ({task.name}) run: pairwise comparisons need the "
                          "replies of Task 2/3 runs (`uxbench run --task eval|recovery`).")
    selected = store.read_selection()
    if selected is None:
        raise UxbenchError(f"Run {label} ({store.path}) has not finished its generation step: rerun the `uxbench run` "
                           "command that made it, then compare.")
    return Side(label, store, manifest, task, selected)


def _by_case(side: Side, counts: dict[str, int]) -> dict[str, tuple[SampleRecord, bytes | None]]:
    out: dict[str, tuple[SampleRecord, bytes | None]] = {}
    for record, case_json in side.store.iter_with_cases(side.selected):
        if record.case_id in out:
            counts[f"duplicate_case_ids_{side.label.lower()}"] += 1
            continue
        out[record.case_id] = (record, case_json)
    return out


def match_pairs(a: Side, b: Side) -> tuple[list[Pair], dict[str, int]]:
    """The shared cases whose replies can be compared, in run A's data order, and why others could not."""
    counts = {"n_a": 0, "n_b": 0, "n_shared": 0, "n_generation_failed": 0, "n_context_differs": 0,
              "n_without_case": 0, "duplicate_case_ids_a": 0, "duplicate_case_ids_b": 0}
    in_a, in_b = _by_case(a, counts), _by_case(b, counts)
    counts["n_a"], counts["n_b"] = len(in_a), len(in_b)
    pairs: list[Pair] = []
    for case_id, (rec_a, case_a) in in_a.items():
        if case_id not in in_b:
            continue
        counts["n_shared"] += 1
        rec_b, case_b = in_b[case_id]
        if rec_a.status != "ok" or rec_b.status != "ok":
            counts["n_generation_failed"] += 1
            continue
        if case_a is None or case_b is None:
            counts["n_without_case"] += 1
            continue
        item_a = a.task.judge_input(_CASE.validate_json(case_a), rec_a)
        item_b = b.task.judge_input(_CASE.validate_json(case_b), rec_b)
        if [(m.role, m.content) for m in item_a.history] != [(m.role, m.content) for m in item_b.history] \
                or item_a.query != item_b.query:
            counts["n_context_differs"] += 1
            continue
        pairs.append(Pair(case_id, rec_a.sample_id, rec_b.sample_id, item_a, item_a.response, item_b.response))
    return pairs, counts


def _limit(pairs: list[Pair], limit: int | None) -> list[Pair]:
    """A deterministic subset: the `limit` pairs whose case ids hash lowest (stable as --limit grows)."""
    if limit is None:
        return pairs
    if limit <= 0:
        raise ConfigError("--limit must be a positive number of cases.")
    ranked = sorted(pairs, key=lambda p: hashlib.sha256(p.case_id.encode()).hexdigest())
    keep = {p.case_id for p in ranked[:limit]}
    return [p for p in pairs if p.case_id in keep]


def judge_identity(spec: PairwiseSpec, judge: PairwiseJudge) -> tuple[str, dict[str, Any]]:
    info: dict[str, Any] = {"spec": spec.judge, "args": mf.redact_args(spec.judge_args), "mode": judge.mode,
                            "settings": judge.settings(), "template_hashes": judge.template_hashes()}
    return f"{judge.mode}-{mf.slug(spec.judge, 32)}-{mf.content_hash(info, 8)}", info


def default_out(spec: PairwiseSpec, a: Side, b: Side) -> Path:
    digest = mf.content_hash([a.manifest.get("run_id"), b.manifest.get("run_id")], 8)
    return spec.runs_root / f"pairwise-{mf.slug(a.model, 24)}-vs-{mf.slug(b.model, 24)}-{digest}"


def _check_out(out: Path, a: Side, b: Side) -> dict[str, Any]:
    """The comparison manifest of `out` (a new one when empty); an error when it compares other runs."""
    manifest_path = out / MANIFEST
    if manifest_path.is_file():
        try:
            existing = user_files.parse_json(user_files.read_bytes(manifest_path), str(manifest_path))
            if not isinstance(existing, dict):
                raise DataError("should hold a JSON object", source=str(manifest_path))
        except (OSError, DataError) as exc:
            raise UxbenchError(f"{manifest_path} cannot be read ({exc}); choose another --out.") from None
        ids = [(existing.get(k) or {}).get("run_id") for k in ("run_a", "run_b")]
        if ids != [a.manifest.get("run_id"), b.manifest.get("run_id")]:
            raise ConfigError(f"{out} holds a comparison of other runs ({ids[0]} vs {ids[1]}); choose another --out.")
        return dict(existing)
    if out.exists() and any(p.name != ".uxbench.lock" for p in out.iterdir()):
        raise ConfigError(f"{out} exists and is not a pairwise comparison directory; choose another --out.")
    return {"kind": "uxbench.pairwise", "run_a": a.describe(), "run_b": b.describe(), "judges": {}}


def pairwise_figures(pairs: list[Pair], verdicts: dict[str, dict[str, PairVerdictRecord]]) -> dict[str, Any]:
    """Win rate of A over B and position inconsistency over `pairs`, from this judge's verdicts
    (case_id -> {order: record}; only rows whose input hash matches the pair's current prompt count)."""
    n_missing = n_unreadable = a_wins = b_wins = ties = inconsistent = first = readable = 0
    for pair in pairs:
        rows = verdicts.get(pair.case_id, {})
        got = [rows.get(o) for o in ORDERS]
        if any(r is None or r.status != "ok" or r.input_hash != pair.hashes.get(o) for r, o in zip(got, ORDERS,
                                                                                                     strict=True)):
            n_missing += 1
            continue
        ab, ba = got[0], got[1]
        assert ab is not None and ba is not None
        for r in (ab, ba):
            if r.pick in ("A", "B"):
                readable += 1
                first += r.pick == "A"
        outcome = combine(ab.winner, ba.winner)
        if outcome.winner is None:
            n_unreadable += 1
        elif outcome.consistent is False:
            inconsistent += 1
        elif outcome.winner == "a":
            a_wins += 1
        elif outcome.winner == "b":
            b_wins += 1
        else:
            ties += 1
    decided = a_wins + b_wins + ties + inconsistent
    return {
        "n_pairs": len(pairs), "n_decided": decided, "n_missing": n_missing, "n_unreadable": n_unreadable,
        "a_wins": a_wins, "b_wins": b_wins, "ties_both_orders": ties, "position_inconsistent": inconsistent,
        "win_rate_a": win_rate(a_wins, ties + inconsistent, b_wins),
        "position_inconsistency": proportion(inconsistent, decided),
        "first_position_picked": proportion(first, readable),
        "note": "ties = said tie in both orders + position-inconsistent pairs (each counts half a win)",
    }


async def run_pairwise(spec: PairwiseSpec, progress: ProgressFn | None = None) -> PairwiseResult:
    """Judge every matched pair in both orders (only what the store lacks) and return the figures."""
    from uxbench.dirlock import hold_dir_lock
    from uxbench.models.model import create_model
    from uxbench.models.registry import parse_model_spec, validate_provider_args
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.runtime.retry import RetryPolicy

    parse_model_spec(spec.judge)
    validate_provider_args(spec.judge, spec.judge_args, option="--judge-arg")
    a, b = _open_side(spec.run_a, "A"), _open_side(spec.run_b, "B")
    try:
        if a.task.name != b.task.name:
            raise ConfigError(f"Run A is a {a.task.name} run and run B a {b.task.name} run: compare runs of one task.")
        all_pairs, counts = match_pairs(a, b)
    finally:
        a.store.close()
        b.store.close()
    if not all_pairs:
        raise DataError(f"No case can be compared: {counts['n_shared']} case ids are shared by {a.store.path} and "
                        f"{b.store.path} ({counts['n_generation_failed']} with a failed generation, "
                        f"{counts['n_context_differs']} whose conversation differs). Compare runs made on the same "
                        "data.")
    pairs = _limit(all_pairs, spec.limit)
    judge = PairwiseJudge(spec.settings)
    key, info = judge_identity(spec, judge)
    for pair in pairs:
        pair.hashes = {o: mf.content_hash([m.model_dump(mode="json") for m in judge.messages(
            pair.item, pair.reply_a, pair.reply_b, o)], 24) for o in ORDERS}
    out = spec.out if spec.out is not None else default_out(spec, a, b)
    with hold_dir_lock(out, command="uxbench pairwise", what="pairwise output directory"):
        manifest = _check_out(out, a, b)
        manifest["judges"] = {**manifest.get("judges", {}), key: info}
        _write_json(out / MANIFEST, manifest)
        cache = ResponseCache(spec.cache_path or default_cache_path()) if spec.use_cache else None
        model = create_model(spec.judge, spec.judge_args, cache=cache, max_concurrency=spec.concurrency,
                             retry=RetryPolicy(max_attempts=spec.max_attempts, timeout_s=spec.timeout_s))
        started = time.monotonic()
        with PairwiseStore(out) as store:
            try:
                outcome = await _judge_all(store, pairs, key, judge, model, out, progress, spec.judge)
            finally:
                await model.aclose()
            verdicts: dict[str, dict[str, PairVerdictRecord]] = {}
            for rec in store.iter_verdicts(key):
                verdicts.setdefault(rec.case_id, {})[rec.order] = rec
        figures = {"judge": key, "spec": spec.judge, "settings": judge.settings(), "run_a": a.describe(),
                   "run_b": b.describe(), "task": a.task.name, "matching": counts, "limit": spec.limit,
                   **pairwise_figures(pairs, verdicts), "invocation": {
                       **outcome, "elapsed_s": round(time.monotonic() - started, 3), "usage": model.usage.to_dict()}}
        summary = _read_json(out / SUMMARY) or {"kind": "uxbench.pairwise", "judges": {}}
        summary["judges"][key] = figures
        _write_json(out / SUMMARY, summary)
    return PairwiseResult(out_dir=out, figures=figures)


async def _judge_all(store: PairwiseStore, pairs: list[Pair], key: str, judge: PairwiseJudge, model: Model,
                     out: Path, progress: ProgressFn | None, judge_spec: str) -> dict[str, int]:
    emit = progress or (lambda _e: None)
    done = store.done(key)
    todo = [(p, o) for p in pairs for o in ORDERS if done.get((p.case_id, o)) != p.hashes[o]]
    total = 2 * len(pairs)
    already = total - len(todo)
    emit(ProgressEvent("start", already, total, run_dir=out, resumed=already, phase="score"))
    guard = FailureGuard("pairwise judge calls", out, f"Check the judge {judge_spec}, its base_url and API key")
    state = {"done": already}

    def items() -> Iterator[tuple[Pair, Order]]:
        yield from todo

    async def work(entry: tuple[Pair, Order]) -> None:
        pair, order = entry
        base: dict[str, Any] = {"case_id": pair.case_id, "judge": key, "order": order,
                                "input_hash": pair.hashes[order], "sample_a": pair.sample_a, "sample_b": pair.sample_b}
        try:
            verdict = await judge.judge_order(pair.item, pair.reply_a, pair.reply_b, order, model)
        except ModelError as err:
            record = PairVerdictRecord(status="error", error=f"{type(err).__name__}: {err}", **base)
            store.put(record)
            guard.failure(record.error)
        else:
            out_ = verdict.output
            store.put(PairVerdictRecord(status="ok", pick=verdict.pick, winner=verdict.winner,
                                        parse_note=verdict.note, raw_output=out_.text, reasoning=out_.reasoning,
                                        **base, **call_totals([out_])))
            guard.success()
        state["done"] += 1
        emit(ProgressEvent("sample", state["done"], total, phase="score"))

    await run_pool(items(), work, model.limiter.max_concurrency)
    emit(ProgressEvent("end", state["done"], total, run_dir=out, phase="score"))
    return {"asked_now": guard.ok + guard.errors, "failed_now": guard.errors, "already_done": already}


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = user_files.parse_json(user_files.read_bytes(path), str(path))
    except (OSError, DataError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    import json

    from uxbench.fileio import atomic_write_bytes

    atomic_write_bytes(path, (json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8"))


__all__ = ["DB", "PairwiseResult", "PairwiseSpec", "match_pairs", "pairwise_figures", "run_pairwise"]
