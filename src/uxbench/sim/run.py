"""`uxbench sim run`: sessions -> the run directory, resumable, concurrent, optionally over several processes.

1. `spec.prepare` reads the personas and computes the identity and the plan (before any directory exists).
2. The run directory's lock is taken (`dirlock`); a directory holding another configuration is refused.
3. Sessions without a stored record run on a bounded pool (`--concurrency` in flight); every model call goes
   through the model layer: the adaptive limiter of its endpoint, retries, the response cache (the session's
   seed is in every request, so trials never share a cached conversation). Each finished session is committed
   at the end of the event loop's turn in which it finished (runtime/batched_writes.py): a kill loses at most
   the sessions in flight, and the same command resumes.
   `--procs N` shards the pending sessions over N processes (one event loop tops out near 10 useful
   concurrent sessions when the client does real work, SIMULATORS.md lesson 24); they write one store, the parent
   shows the progress and writes the summary.
4. With `--judge`, every session lacking that judge's per-turn estimates is judged (resumable the same way).
5. The summary is computed from the store alone; sessions.jsonl, acts.jsonl and summary.json are written
   atomically.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uxbench.dirlock import hold_dir_lock
from uxbench.errors import ConfigError
from uxbench.fileio import remove_stale_temps
from uxbench.orchestrate.pool import run_pool
from uxbench.orchestrate.progress import FailureGuard
from uxbench.runs.command import command_line
from uxbench.sim.assess import ModelAssessor, RulesAssessor
from uxbench.sim.realize import SCRIPTED_SPECS, ModelRealiser
from uxbench.sim.scripted import ScriptedRealiser
from uxbench.sim.session import Parties, SessionPlan, run_session
from uxbench.sim.spec import Prepared, SimSpec, prepare
from uxbench.sim.store import KIND, SimStore
from uxbench.sim.summary import SATISFACTION_JUDGE_PREFIX, SessionDigest, session_digest, summary_rows
from uxbench.sim.types import SessionRecord

EMBEDDED_REPLY_TOKENS = 64
"""Replies of the embedded demo model (both roles): short, so the offline demo takes minutes, not hours."""


@dataclass
class SimEvent:
    kind: str
    """start | turn (a message of a session in flight) | session | judge_start | judge | end"""
    done: int
    total: int
    turns: int = 0
    successes: int = 0
    errors: int = 0
    resumed: int = 0
    run_dir: Path | None = None


ProgressFn = Callable[[SimEvent], None]


@dataclass
class SimResult:
    run_dir: Path
    summary: dict[str, Any]


def validate(spec: SimSpec) -> None:
    """Every model name and argument checked before anything runs (a bad -M is an error, not a failed session)."""
    from uxbench.models.registry import validate_provider_args

    validate_provider_args(spec.model.model, spec.model.args, option="--model-arg")
    _check_scripted_user(spec.simulator.model)
    if spec.simulator.model not in SCRIPTED_SPECS:
        validate_provider_args(spec.simulator.model, spec.simulator.args, option="--simulator-arg")
    elif spec.simulator.args:
        raise ConfigError(f"--simulator-arg does not apply to {spec.simulator.model} (code, not a model).")
    if spec.assessor.model != "rules":
        _check_assessor(spec.assessor.model, spec.assessor.args)
    elif spec.assessor.args:
        raise ConfigError("--assessor-arg needs --assessor PROVIDER:MODEL (the rules assessor has no arguments).")
    if spec.judge is not None:
        validate_provider_args(spec.judge.model, spec.judge.args, option="--judge-arg")
    if spec.simulator.model == "scripted:user-uncooperative" and spec.mode != "structured":
        raise ConfigError("scripted:user-uncooperative is a structured-mode simulator (it declines the facts it is "
                          "asked for); drop --mode free.")
    plan_agent = spec.model.model in ("scripted:reference-agent", "scripted:weak-agent")
    if plan_agent and not spec.tasks:
        raise ConfigError(f"{spec.model.model} is a tool agent: it needs tool tasks (--tasks tau2:airline).")
    if plan_agent and spec.agent_prompt != "oracle":
        raise ConfigError(f"{spec.model.model} follows the task's resolution steps, which only the oracle prompt "
                          "gives: add --agent-prompt oracle.")


def _check_assessor(spec: str, args: dict[str, str]) -> None:
    """--assessor is `rules` or PROVIDER:MODEL: an error names the option and both forms."""
    import difflib

    from uxbench.models.registry import validate_provider_args

    forms = "rules (code: the goal items' literal checks) or PROVIDER:MODEL (`uxbench providers`)"
    if ":" not in spec:
        hint = " Did you mean 'rules'?" if difflib.get_close_matches(spec.lower(), ["rules"], n=1) else ""
        raise ConfigError(f"--assessor takes {forms}, not '{spec}'.{hint}")
    try:
        validate_provider_args(spec, args, option="--assessor-arg")
    except ConfigError as err:
        if "--assessor" in str(err):
            raise
        raise ConfigError(f"--assessor '{spec}': {err} (--assessor takes {forms})") from None


def _check_scripted_user(simulator: str) -> None:
    """`--simulator scripted:usr` is a typo of the scripted realiser, not a model: say so before anything runs."""
    import difflib

    from uxbench.models.providers.scripted import SCRIPTS

    name = simulator.removeprefix("scripted:")
    if simulator.startswith("scripted:") and simulator not in SCRIPTED_SPECS and not name.startswith("file:") \
            and name not in SCRIPTS:
        close = difflib.get_close_matches(simulator, SCRIPTED_SPECS, n=1)
        hint = f"Did you mean '{close[0]}'? " if close else ""
        raise ConfigError(f"Unknown simulator '{simulator}'. {hint}The scripted users are {', '.join(SCRIPTED_SPECS)}"
                          f"; scripted models ({', '.join('scripted:' + s for s in SCRIPTS)}) also work as a "
                          "simulator's model.")


class _Models:
    """The models of one process, built once, closed at the end."""

    def __init__(self, spec: SimSpec) -> None:
        from uxbench.models.model import create_model
        from uxbench.runtime.cache import ResponseCache, default_cache_path
        from uxbench.runtime.retry import RetryPolicy

        self.cache = ResponseCache(spec.cache_path or default_cache_path()) if spec.use_cache else None
        retry = RetryPolicy(max_attempts=spec.max_attempts, timeout_s=spec.timeout_s)

        def make(role: Any) -> Any:
            return create_model(role.model, role.args, max_concurrency=spec.concurrency, cache=self.cache,
                                retry=retry)

        self.all: list[Any] = []
        self.assistant = make(spec.model)
        self.all.append(self.assistant)
        if spec.simulator.model in SCRIPTED_SPECS:
            realiser: Any = ScriptedRealiser(spec.simulator.model)
            self.simulator = None
        else:
            self.simulator = make(spec.simulator)
            self.all.append(self.simulator)
            realiser = ModelRealiser(self.simulator, temperature=spec.sim_temperature, max_tokens=spec.sim_max_tokens)
        if spec.assessor.model == "rules":
            assessor: Any = RulesAssessor()
            self.assessor = None
        else:
            self.assessor = make(spec.assessor)
            self.all.append(self.assessor)
            assessor = ModelAssessor(self.assessor)
        self.judge = make(spec.judge) if spec.judge is not None else None
        if self.judge is not None:
            self.all.append(self.judge)
        from uxbench.models.api import GenerateConfig

        prices = {"assistant": _price(self.assistant)}
        if self.simulator is not None:
            prices["simulator"] = _price(self.simulator)
        if self.assessor is not None:
            prices["assessor"] = _price(self.assessor)
        tasks = None
        if spec.tasks:
            from uxbench.sim.task_sources import task_source

            tasks = task_source(spec.tasks[0].partition(":")[0])
        self.parties = Parties(
            assistant=self.assistant, realiser=realiser, assessor=assessor, prices=prices,
            assistant_config=GenerateConfig(temperature=spec.temperature, max_tokens=spec.max_tokens),
            tasks=tasks, max_tool_calls=spec.max_tool_calls,
        )

    def count_sent(self, store: SimStore) -> None:
        """Every request a session party's model sends is counted in the store as it is sent (`Model.on_send`);
        the satisfaction judge's calls are kept with its judgements."""
        for party, model in (("assistant", self.assistant), ("simulator", self.simulator),
                             ("assessor", self.assessor)):
            if model is not None:
                model.on_send = lambda p=party: store.count_sent(p)

    def sessions_in_flight(self, spec: SimSpec) -> int:
        return spec.concurrency or min(64, self.assistant.limiter.max_concurrency)

    async def aclose(self) -> None:
        for model in self.all:
            await model.aclose()
        if self.cache is not None:
            self.cache.close()


def _price(model: Any) -> Any:
    return model.usage.models[model.spec].price


async def execute(spec: SimSpec, progress: ProgressFn | None = None) -> SimResult:
    from uxbench.redact import remember_environment_keys

    validate(spec)
    remember_environment_keys(r.args["api_key_env"] for r in (spec.model, spec.simulator, spec.assessor, spec.judge)
                              if r is not None and r.args.get("api_key_env"))
    prepared = prepare(spec)
    with hold_dir_lock(prepared.run_dir, command="uxbench sim run", what="run directory"):
        return await _execute_locked(spec, prepared, progress or (lambda _e: None))


def _check_dir(store: SimStore, prepared: Prepared, fresh: bool) -> None:
    existing = store.read_manifest() if store.path.exists() else None
    if existing is None:
        return
    if existing.get("kind") != KIND:
        raise ConfigError(f"{store.path} holds something else than a `uxbench sim run` (a Task 1-3 run or a mining "
                          "output); choose another --out.")
    if existing.get("identity_hash") != prepared.identity_hash:
        if not fresh:
            raise ConfigError(f"{store.path} holds a simulation with another configuration (run id "
                              f"{existing.get('run_id')}). Use another --out, or --fresh to discard it.")
    if fresh:
        store.discard()


async def _execute_locked(spec: SimSpec, prepared: Prepared, emit: ProgressFn) -> SimResult:
    from uxbench.runs import manifest as mf
    from uxbench.sim.realize import template_digests

    store = SimStore(prepared.run_dir)
    _check_dir(store, prepared, spec.fresh)
    if store.path.exists():
        remove_stale_temps(store.path)
    manifest: dict[str, Any] = {
        "kind": KIND, "run_id": prepared.run_id, "identity_hash": prepared.identity_hash,
        "identity": prepared.identity, "demo": spec.demo, "mode": spec.mode, "trials": spec.trials,
        "max_turns": spec.max_turns, "lang": spec.lang, "seed": spec.seed,
        "model": {"spec": spec.model.model, "args": mf.redact_args(spec.model.args)},
        "simulator": {"spec": spec.simulator.model, "args": mf.redact_args(spec.simulator.args)},
        "assessor": {"spec": spec.assessor.model, "args": mf.redact_args(spec.assessor.args)},
        "judges": sorted(set((store.read_manifest() or {}).get("judges") or []) |
                         ({SATISFACTION_JUDGE_PREFIX + spec.judge.model} if spec.judge else set())),
        "personas": {"sources": spec.personas, "n": len(prepared.personas),
                     "hashes": {pid: h for pid, h in prepared.identity["personas"]}},
        "schema_version": prepared.identity["schema_version"],
        **({"tool_tasks": {**prepared.identity["tool_tasks"], "n": len(prepared.personas),
                           "skipped": [list(s) for s in prepared.skipped_tasks]}} if spec.tasks else {}),
        "simulator_prompt_digests": template_digests(),
        "options": {"concurrency": spec.concurrency, "procs": spec.procs, "max_attempts": spec.max_attempts,
                    "cache": spec.use_cache},
        "environment": mf.environment(),
    }
    store.write_manifest(manifest)
    store.put_personas([p.persona for p in prepared.personas])
    started = time.monotonic()
    done = store.done_ids()
    pending = [p for p in prepared.plans if p.session_id not in done]
    resumed = len(prepared.plans) - len(pending)
    total = len(prepared.plans)
    emit(SimEvent("start", resumed, total, turns=store.progress()[1], resumed=resumed, run_dir=store.path))
    models: _Models | None = None
    flags: dict[str, list[dict[str, Any]]] = {}  # the gate's flags of the sessions this process runs
    digests: dict[str, SessionDigest] = {}  # and what the summary takes of them (the first MAX_DIGESTS)
    try:
        if spec.procs > 1 and len(pending) > 1:
            await _run_processes(spec, prepared, store, pending, emit, resumed, total)
        else:
            models = _Models(spec)
            models.count_sent(store)
            await run_plans(models, store, pending, models.sessions_in_flight(spec), emit, resumed, total, flags,
                            digests)
        if spec.judge is not None:
            if models is None:
                models = _Models(spec)
                models.count_sent(store)
            await _judge_step(models, store, prepared, emit)
    except (asyncio.CancelledError, KeyboardInterrupt):
        store.close()
        raise
    finally:
        limits = {m.spec: {"max": m.limiter.max_concurrency, "final": m.limiter.current_limit}
                  for m in (models.all if models is not None else [])}
        if models is not None:
            await models.aclose()
    ids = [p.session_id for p in prepared.plans]
    with store.exporting_log() as log:  # sessions.jsonl, in the summary's one pass over the sessions
        summary = summarize(store, manifest, ids, n_boot=spec.n_boot, seed=spec.ci_seed, flags=flags, each=log,
                            digests=digests)
        summary["invocation"] = {"command": command_line(), "elapsed_s": round(time.monotonic() - started, 3),
                                 "resumed_sessions": resumed, "procs": spec.procs, "concurrency": limits}
        store.write_summary(summary)
    store.close()
    emit(SimEvent("end", total, total, run_dir=store.path))
    return SimResult(store.path, summary)


def summarize(store: SimStore, manifest: dict[str, Any], session_ids: list[str] | None = None, *,
              n_boot: int = 2000, seed: int = 0, flags: dict[str, list[dict[str, Any]]] | None = None,
              each: Callable[[bytes], None] | None = None,
              digests: dict[str, SessionDigest] | None = None) -> dict[str, Any]:
    """The summary from the store alone (and acts.jsonl, written beside it); `flags`: the gate's flags of the
    sessions this process ran, found as each ended (the same as the store's records give); `each`: called with
    every session's lines of sessions.jsonl (`SimStore.exporting_log`); `digests`: the digests of sessions this
    process ran, made as each ended (`summary.session_digest` of the stored record: the same as a read gives),
    used in place of reading those sessions when no judge has judged any (a digest holds no judgement)."""
    judges = store.judges()
    judgements = {key: store.judgements(key) for key in judges}
    failed = {key: store.failed_judgements(key) for key in judges}
    result: dict[str, Any] = {}
    known: dict[str, SessionDigest] = digests if digests and not judges else {}
    sessions = store.iter_sessions_known(known, session_ids)
    store.export_acts(summary_rows(sessions, store.personas(), manifest, result, judgements=judgements,
                                   n_boot=n_boot, seed=seed, failed=failed, flags=flags, each=each))
    summary = dict(result["summary"])
    _add_sent(summary, store.sent())
    return summary


MAX_DIGESTS = 4096
"""Sessions whose digests a run keeps in memory for its summary (~7 KB each: their acts.jsonl and sessions.jsonl
lines); the summary reads the others from the store."""


def _add_sent(summary: dict[str, Any], sent: dict[str, int]) -> None:
    """Requests sent per party beside the calls the sessions recorded: those unanswered (retried, failed, or in
    flight when the run was killed) are counted as spent, apart, at most the mean cost of an answered call."""
    from uxbench.runtime.cost import unanswered_cost

    usage = summary.get("usage") or {}
    for party, entry in usage.items():
        entry["requests_sent"] = sent.get(party)
        entry.update(unanswered_cost({"requests": entry.get("calls"), "cache_hits": entry.get("cached_calls"),
                                      "cost_usd": entry.get("cost_usd"), "requests_sent": sent.get(party)}))
    for party, n in sent.items():  # a party whose every session was lost has sent requests and no usage
        if party not in usage and n:
            usage[party] = {"calls": 0, "cached_calls": 0, "cost_usd": None, "requests_sent": n,
                            "unanswered_requests": n, "unanswered_cost_usd_max": None}
    summary["usage"] = usage


async def run_plans(models: _Models, store: SimStore, plans: list[SessionPlan], in_flight: int, emit: ProgressFn,
                    already: int, total: int, flags: dict[str, list[dict[str, Any]]] | None = None,
                    digests: dict[str, SessionDigest] | None = None) -> None:
    """Run sessions on a bounded pool, committing each as it ends; `flags` (when given) receives the gate's flags
    of each session as stored, and `digests` the digests of the first MAX_DIGESTS (`summary.session_digest`), so
    that the summary neither checks nor reads them again once the last session ended."""
    from uxbench.sim.gate import gate_flags

    stored_personas = store.personas() if flags is not None or digests is not None else {}
    done_turns = store.progress()[1]
    state = {"done": already, "turns": done_turns, "ok": 0, "errors": 0}
    guard = FailureGuard("sessions", store.path, "Check the model names, base_url and API keys")
    last_shown = [0.0]

    def turn() -> None:  # the turns of sessions in flight count at once (at most 10 updates a second)
        state["turns"] += 1
        now = time.monotonic()
        if now - last_shown[0] >= 0.1:
            last_shown[0] = now
            emit(SimEvent("turn", state["done"], total, turns=state["turns"], successes=state["ok"],
                          errors=state["errors"]))

    parties = dataclasses.replace(models.parties, on_turn=turn)

    async def work(plan: SessionPlan) -> None:
        record: SessionRecord = await run_session(plan, parties)
        stored = store.put(record)
        persona = stored_personas.get(stored.persona_id)
        found = gate_flags(stored, persona) if persona is not None and flags is not None else None
        if flags is not None and found is not None:
            flags[stored.session_id] = found
        if digests is not None and len(digests) < MAX_DIGESTS:
            digests[stored.session_id] = session_digest(stored, persona, found)
        state["done"] += 1
        if record.termination.reason == "error":
            state["errors"] += 1
        if record.termination.reason == "error" and not record.termination.detail.startswith("premature stop"):
            guard.failure(record.termination.detail)  # the first sessions all failing: a configuration error
        else:  # a premature stop is the simulator's behaviour (an outcome the UFS scores), not a broken setup
            guard.success()
            state["ok"] += int(record.success)
        emit(SimEvent("session", state["done"], total, turns=state["turns"], successes=state["ok"],
                      errors=state["errors"]))

    await run_pool(iter(plans), work, max(1, min(in_flight, len(plans) or 1)))


async def _judge_step(models: _Models, store: SimStore, prepared: Prepared, emit: ProgressFn) -> None:
    from uxbench.sim.judge import judge_session

    assert models.judge is not None
    key = SATISFACTION_JUDGE_PREFIX + models.judge.spec
    judged = store.judged_ids(key)
    personas = store.personas()
    wanted = [p.session_id for p in prepared.plans if p.session_id not in judged]
    todo = (r for r in store.iter_sessions(wanted))  # streamed: memory flat in the number of sessions
    total = len(prepared.plans)
    state = {"done": total - len(wanted)}
    emit(SimEvent("judge_start", state["done"], total, resumed=state["done"], run_dir=store.path))
    price = _price(models.judge)

    async def work(record: SessionRecord) -> None:
        body = await judge_session(record, personas[record.persona_id], models.judge, price)
        store.put_judgement(record.session_id, key, body, ok=body["errors"] == 0)
        state["done"] += 1
        emit(SimEvent("judge", state["done"], total))

    await run_pool(iter(todo), work, max(1, min(models.judge.limiter.max_concurrency, 64)))


# -- several processes ----------------------------------------------------------------------------------------
def _shard_main(spec_json: str, identity_hash: str, shard: int, procs: int, parent: int) -> int:
    """A worker process: its share of the pending sessions (index % procs == shard), into the shared store."""
    spec = SimSpec.model_validate_json(spec_json)
    prepared = prepare(spec)
    if prepared.identity_hash != identity_hash:
        raise ConfigError("the personas or templates changed while the run was starting; rerun the command")
    store = SimStore(prepared.run_dir)
    done = store.done_ids()
    mine = [p for p in prepared.plans if p.index % procs == shard and p.session_id not in done]

    async def main() -> None:
        watchdog = asyncio.ensure_future(_exit_with_parent(parent))
        models = _Models(spec)
        models.count_sent(store)
        try:
            await run_plans(models, store, mine, models.sessions_in_flight(spec), lambda _e: None, 0, len(mine))
        finally:
            watchdog.cancel()
            await models.aclose()
            store.close()

    asyncio.run(main())
    return len(mine)


async def _exit_with_parent(parent: int) -> None:
    """A worker whose parent died (killed) stops at once: a rerun must not meet it still writing."""
    while True:
        await asyncio.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


async def _run_processes(spec: SimSpec, prepared: Prepared, store: SimStore, pending: list[SessionPlan],
                         emit: ProgressFn, already: int, total: int) -> None:
    import concurrent.futures
    import multiprocessing

    procs = min(spec.procs, len(pending))
    context = multiprocessing.get_context("spawn")
    spec_json = spec.model_dump_json()
    loop = asyncio.get_running_loop()
    with concurrent.futures.ProcessPoolExecutor(max_workers=procs, mp_context=context) as pool:
        futures = [loop.run_in_executor(pool, _shard_main, spec_json, prepared.identity_hash, k, spec.procs,
                                        os.getpid()) for k in range(spec.procs)]
        watcher = asyncio.gather(*futures)
        last = -1
        while not watcher.done():
            await asyncio.wait([watcher], timeout=0.25)
            count, turns = store.progress()
            if count != last:
                emit(SimEvent("session", count, total, turns=turns))
                last = count
        await watcher
