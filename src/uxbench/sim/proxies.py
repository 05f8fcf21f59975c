"""`uxbench sim proxies RUN...`: UserProxyBench's figures over tool-task runs that share the agent and the tasks
and differ only in the user proxy (seed 002; SIMULATORS.md).

For each proxy (one run each):
- **mean task reward** (the benchmark's own evaluator) with a cluster-bootstrap interval over tasks, and its
  paired difference from the first run (the same task and trial on both sides); the **largest difference**
  between any two proxies, with its paired interval;
- the **share of successful episodes with a user-instruction violation**: UFS items compiled from the task's
  scenario by code (`fidelity_items`), checked by code and, when a `uxbench sim fidelity --judge` pass exists, by
  the judge (blind to the reward); the judge's agreement with the code items is reported;
- the **premature-disclosure rate** (sessions with a fact said before it was asked / sessions with one checked);
- **tool calls per successful episode** with and without premature disclosure, their difference with an
  interval (pooled over the proxies, and per proxy), and the agent's questions per session;
- **UFS** per proxy, and the **cost-fidelity frontier** (`sim/frontier.py`): the cheapest proxy with UFS >= target.

The figures are for the agent used and the tasks run; the report says which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from uxbench.errors import ConfigError
from uxbench.metrics.cluster_diff import cluster_mean_difference, within_cluster_difference
from uxbench.metrics.session import cluster_ratio
from uxbench.sim.fidelity import SessionFidelity, aggregate, judge_key, session_fidelity
from uxbench.sim.fidelity_items import DISCLOSURE_FAMILIES
from uxbench.sim.store import SimStore
from uxbench.sim.types import SessionRecord

AGENT_KEYS = ("model", "agent_prompt", "max_tool_calls", "generation")


@dataclass
class ProxyRun:
    run_dir: Path
    label: str
    manifest: dict[str, Any]
    records: list[SessionRecord]
    code: list[SessionFidelity]
    """Code-only fidelity of each session."""
    full: list[SessionFidelity]
    """With the judge's answers when `--judge` has a pass (else the same as `code`)."""
    judged: bool

    def key(self, record: SessionRecord) -> tuple[str, int]:
        return (record.task_id or record.persona_id, record.trial)


def _label(manifest: dict[str, Any]) -> str:
    sim = (manifest.get("simulator") or {}).get("spec")
    assessor = (manifest.get("assessor") or {}).get("spec")
    extra = "" if assessor in (None, "rules") else f", assessor {assessor}"
    return f"{sim} ({manifest.get('mode')}{extra})"


def _agent(manifest: dict[str, Any]) -> dict[str, Any]:
    identity = manifest.get("identity") or {}
    tools = identity.get("tool_tasks") or {}
    return {"model": identity.get("model"), "model_args": identity.get("model_args"),
            "agent_prompt": tools.get("agent_prompt"), "max_tool_calls": tools.get("max_tool_calls"),
            "temperature": (identity.get("generation") or {}).get("temperature"),
            "max_tokens": (identity.get("generation") or {}).get("max_tokens")}


def load_run(run_dir: Path, judge: str | None) -> ProxyRun:
    store = SimStore.open_existing(run_dir)
    try:
        manifest = store.read_manifest() or {}
        if "tool_tasks" not in (manifest.get("identity") or {}):
            raise ConfigError(f"{run_dir} is a persona run, not a tool-task run: `uxbench sim proxies` compares runs "
                              "of `uxbench sim run --tasks tau2:...` that differ only in the user proxy.")
        records = list(store.iter_sessions())
        personas = store.personas()
        answers = {sid: body.get("answer") for sid, body in store.judgements(judge_key(judge)).items()} if judge \
            else {}
    finally:
        store.close()
    if not records:
        raise ConfigError(f"{run_dir} holds no finished session: run it to the end first.")
    code = [session_fidelity(r, personas[r.persona_id], None) for r in records]
    full = [session_fidelity(r, personas[r.persona_id], answers.get(r.session_id)) for r in records] if answers \
        else code
    return ProxyRun(run_dir, _label(manifest), manifest, records, code, full, bool(answers))


def _violated(fid: SessionFidelity) -> bool:
    return any(r.status == "violated" for r in fid.results)


def _premature(fid: SessionFidelity) -> bool:
    return any(r.status == "violated" and r.family in DISCLOSURE_FAMILIES for r in fid.results)


def questions(record: SessionRecord) -> int:
    """The agent's questions to the user: its replies that ask something."""
    return sum(1 for t in record.turns if t.role == "assistant" and "?" in t.text)


def _clustered(keys: Sequence[str], num: Sequence[float], den: Sequence[float], n_boot: int, seed: int,
               bounds: tuple[float, float] | None = (0.0, 1.0), scale: float = 1.0) -> dict[str, Any]:
    by: dict[str, list[float]] = {}
    for k, a, b in zip(keys, num, den, strict=True):
        acc = by.setdefault(k, [0.0, 0.0])
        acc[0] += a
        acc[1] += b
    order = sorted(by)
    return cluster_ratio(np.array([by[k][0] for k in order]), np.array([by[k][1] for k in order]), n_boot=n_boot,
                         seed=seed, bounds=bounds, scale=scale)


def _paired(a: ProxyRun, b: ProxyRun, n_boot: int, seed: int, *,
            metric: Callable[[SessionRecord], float] = lambda r: r.reward or 0.0, successes: bool = False,
            bounds: tuple[float, float] | None = (-1.0, 1.0)) -> dict[str, Any]:
    """b minus a in `metric` (the reward by default) on the (task, trial) pairs both runs have (with
    `successes`, the pairs where both sessions succeeded), clustered by task."""
    ra = {a.key(r): r for r in a.records}
    rb = {b.key(r): r for r in b.records}
    common = sorted(k for k in set(ra) & set(rb) if not successes or (ra[k].success and rb[k].success))
    keys = [k[0] for k in common]
    diffs = [metric(rb[k]) - metric(ra[k]) for k in common]
    out = _clustered(keys, diffs, [1.0] * len(common), n_boot, seed, bounds=bounds)
    return {"a": a.label, "b": b.label, "diff": out["value"], "ci_low": out["ci_low"], "ci_high": out["ci_high"],
            "n_pairs": len(common), "n_tasks": out["n_clusters"],
            "significant": out["ci_low"] is not None and (out["ci_low"] > 0 or out["ci_high"] < 0)}


def _tool_calls(records: list[SessionRecord], fids: list[SessionFidelity], n_boot: int, seed: int) -> dict[str, Any]:
    """Tool calls per successful episode, with and without premature disclosure: their difference over all
    episodes (the seed's figure: with - without, a cluster-bootstrap interval over tasks), and held within tasks
    (the tasks with successful episodes of both kinds: which tasks have a disclosure to make cannot make the
    groups differ)."""
    rows = [(r.task_id or r.persona_id, float(r.tool_calls), _premature(f)) for r, f in zip(records, fids,
                                                                                          strict=True) if r.success]
    keys, calls, flags = [k for k, _, _ in rows], [c for _, c, _ in rows], [p for _, _, p in rows]
    diff = cluster_mean_difference(keys, calls, flags, n_boot=n_boot, seed=seed)
    within = within_cluster_difference(keys, calls, flags, n_boot=n_boot, seed=seed)
    return {"with_disclosure": diff["a"], "without_disclosure": diff["b"], "difference": diff["diff"],
            "ci_low": diff["ci_low"], "ci_high": diff["ci_high"], "n_with": diff["n_a"], "n_without": diff["n_b"],
            "n_tasks": diff["n_clusters"], "within_task": within}


def _agreement(run: ProxyRun) -> dict[str, Any] | None:
    """Item by item, the code verdict against the verdict once the judge has read the session."""
    if not run.judged:
        return None
    pairs = []
    for code, full in zip(run.code, run.full, strict=True):
        judged = {r.item: r for r in full.results}
        for r in code.results:
            other = judged.get(r.item)
            if r.checked and other is not None and other.checked and "judge" in other.by:
                pairs.append((r.status == "violated", other.status == "violated"))
    if not pairs:
        return {"n_items": 0, "agreement": None, "kappa": None}
    from uxbench.metrics.agreement import cohen_kappa

    agree = sum(a == b for a, b in pairs) / len(pairs)
    kappa = cohen_kappa(["violated" if a else "satisfied" for a, _ in pairs],
                        ["violated" if b else "satisfied" for _, b in pairs])
    return {"n_items": len(pairs), "agreement": round(agree, 6), "kappa": kappa}


def proxy_entry(run: ProxyRun, base: ProxyRun, n_boot: int, seed: int) -> dict[str, Any]:
    records, fids = run.records, run.full
    keys = [r.task_id or r.persona_id for r in records]
    rewards = [r.reward or 0.0 for r in records]
    success = [r for r in records if r.success]
    succ_keys = [r.task_id or r.persona_id for r, _ in zip(records, fids, strict=True) if r.success]
    succ_viol = [float(_violated(f)) for r, f in zip(records, fids, strict=True) if r.success]
    fidelity = aggregate(fids, n_boot=n_boot, seed=seed)
    return {
        "label": run.label, "run": str(run.run_dir), "n_sessions": len(records),
        "unscored": sum(r.reward is None for r in records),
        "mean_reward": _clustered(keys, rewards, [1.0] * len(records), n_boot, seed),
        "vs_first": None if run is base else _paired(base, run, n_boot, seed),
        "tool_calls_vs_first": None if run is base else _paired(
            base, run, n_boot, seed, metric=lambda r: float(r.tool_calls), successes=True, bounds=None),
        "questions_vs_first": None if run is base else _paired(
            base, run, n_boot, seed, metric=lambda r: float(questions(r)), bounds=None),
        "success_rate": _clustered(keys, [float(r.success) for r in records], [1.0] * len(records), n_boot, seed),
        "successes_with_violation": _clustered(succ_keys, succ_viol, [1.0] * len(succ_viol), n_boot, seed),
        "premature_disclosure_rate": fidelity.get("premature_disclosure_rate"),
        "ufs": fidelity.get("ufs"), "ufs_by": "code + judge" if run.judged else "code",
        "judge_agreement": _agreement(run),
        "tool_calls_success": _tool_calls(records, fids, n_boot, seed),
        "tool_calls_per_success": round(sum(r.tool_calls for r in success) / len(success), 4) if success else None,
        "questions_per_session": round(sum(questions(r) for r in records) / len(records), 4),
        "turns_per_session": round(sum(r.assistant_turns for r in records) / len(records), 4),
    }


def proxies_report(run_dirs: list[Path], *, judge: str | None = None, target: float | None = None,
                   n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    from uxbench.sim.frontier import frontier, run_entry

    if len(run_dirs) < 2:
        raise ConfigError("uxbench sim proxies compares user proxies: pass two or more tool-task runs that share the "
                          "agent and the tasks (one run per proxy).")
    runs = [load_run(Path(p), judge) for p in run_dirs]
    agents = [_agent(r.manifest) for r in runs]
    for run, agent in zip(runs[1:], agents[1:], strict=True):
        if agent != agents[0]:
            diff = sorted(k for k in agent if agent[k] != agents[0][k])
            raise ConfigError(f"{run.run_dir} has another agent than {runs[0].run_dir} ({', '.join(diff)} differ): "
                              "the proxies report holds the agent fixed and varies only the user proxy.")
    task_sets = [{(t[0], t[1]) for t in (r.manifest.get("identity") or {}).get("tool_tasks", {}).get("tasks", [])}
                 for r in runs]
    warnings = []
    if any(s != task_sets[0] for s in task_sets[1:]):
        common = set.intersection(*task_sets)
        if not common:
            raise ConfigError("the runs share no task (or the tasks' contents differ): run the same --tasks.")
        warnings.append(f"the runs do not hold the same tasks: differences are paired on the {len(common)} tasks "
                        "they share; each proxy's own figures are over its own tasks")
    if len({r.label for r in runs}) < len(runs):
        warnings.append("two runs have the same proxy (simulator and mode): they differ in something else")
    trials = {r.manifest.get("trials") for r in runs}
    entries = [proxy_entry(r, runs[0], n_boot, seed) for r in runs]
    pairs = [_paired(a, b, n_boot, seed) for a, b in combinations(runs, 2)]
    largest = max(pairs, key=lambda p: abs(p["diff"] or 0.0)) if pairs else None
    all_records = [rec for r in runs for rec in r.records]
    all_fids = [f for r in runs for f in r.full]
    front = frontier([run_entry(r.run_dir, judge, n_boot=n_boot, seed=seed) for r in runs], target=target)
    tasks = sorted({rec.task_id for rec in all_records if rec.task_id is not None})
    domains = sorted({str(t).split(":", 1)[-1].split("/", 1)[0] for t in tasks})
    agent = agents[0]
    statement = (f"These figures are for the agent {agent['model']} ({agent['agent_prompt']} prompt) on the "
                 f"{len(tasks)} {'/'.join(domains)} tasks run, {', '.join(sorted(str(t) for t in trials))} trial(s) "
                 "each; another agent or other tasks can give other figures.")
    return {
        "kind": "uxbench.sim.proxies", "statement": statement, "agent": agent, "n_tasks": len(tasks),
        "judge": judge, "proxies": entries, "pairs": pairs, "largest_difference": largest,
        "tool_calls_success_pooled": _tool_calls(all_records, all_fids, n_boot, seed),
        "frontier": front, "warnings": warnings + front.get("warnings", []), "n_boot": n_boot, "seed": seed,
    }
