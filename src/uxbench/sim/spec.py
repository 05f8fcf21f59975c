"""What `uxbench sim run` was asked (`SimSpec`), the run's identity, and its plan of sessions.

The run id is a hash of everything that decides the sessions: the personas (ids and content hashes), the model
under test, the simulator, the assessor, the mode, the turn limit, the trials, the seed, the language filter,
the generation settings, the simulator's template digests and the schema and policy versions. The same command
therefore finds the same directory and resumes it. Judges, concurrency and `--procs` change how, not what.

Seeds: session (persona, trial) gets `seed = digest(run seed, persona hash, trial)`, independent of the model
under test, so two runs of different assistants on the same personas meet the same users (paired comparison),
and trials of one persona meet different ones (pass^k). The digest is sha256, stable across processes (never
Python's `hash`, which is randomised per process).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from uxbench.errors import ConfigError
from uxbench.sim.persona import SCHEMA_VERSION, Persona
from uxbench.sim.persona_io import LoadedPersona, load_personas
from uxbench.sim.session import SessionPlan
from uxbench.sim.tooltask import ToolTask
from uxbench.sim.types import Mode

POLICY_VERSION = 2
"""Bumped when the policy's rules change what a seed produces (it enters the run id). 2: the rules assessor and the
scripted users read requests with `sim.asks` instead of literal ask patterns."""
EMBEDDED = "hf:embedded"


class RoleSpec(BaseModel):
    """A model in a role: `PROVIDER:MODEL` and its KEY=VALUE arguments."""

    model: str
    args: dict[str, str] = Field(default_factory=dict)


class SimSpec(BaseModel):
    """Everything `uxbench sim run` was asked."""

    personas: list[str] = Field(default_factory=lambda: ["demo"])
    """Persona files or directories; `demo` is the bundled set."""
    tasks: list[str] = Field(default_factory=list)
    """Tool tasks instead of personas (`tau2:airline`): each task's user is compiled from its scenario, the model
    under test is its agent, and the task's evaluator gives the reward."""
    agent_prompt: Literal["policy", "oracle"] = "policy"
    """Tool tasks: the agent's system prompt (oracle: with the task's resolution steps)."""
    max_tool_calls: int = Field(default=30, ge=1, le=500)
    """Tool tasks: tool calls the agent may make before one reply to the user."""
    model: RoleSpec = Field(default_factory=lambda: RoleSpec(model=EMBEDDED))
    """The assistant under test."""
    simulator: RoleSpec = Field(default_factory=lambda: RoleSpec(model=EMBEDDED))
    """The realiser (structured mode) or the whole simulated user (free mode); `scripted:user` is code."""
    assessor: RoleSpec = Field(default_factory=lambda: RoleSpec(model="rules"))
    """`rules` (code), or a model that reads each reply against the goal."""
    judge: RoleSpec | None = None
    """An independent judge of per-turn satisfaction (never enters the run id)."""
    mode: Mode = "structured"
    trials: int = Field(default=1, ge=1)
    max_personas: int | None = Field(default=None, ge=1)
    """Run only the first N personas (after the language filter, in file order); None: every one."""
    max_turns: int = Field(default=8, ge=1, le=200)
    """Assistant replies per session at most."""
    lang: Literal["zh", "en", "auto"] = "auto"
    """auto: every persona in its own language; zh / en: only the personas of that language."""
    seed: int = 0
    temperature: float | None = None
    """Of the model under test (None: the provider's default)."""
    max_tokens: int | None = None
    """Of the model under test."""
    sim_temperature: float | None = 0.7
    sim_max_tokens: int | None = 256
    concurrency: int | None = Field(default=None, ge=1)
    """Sessions in flight per process (and the most parallel calls per model); default: the model's, at most 64."""
    procs: int = Field(default=1, ge=1, le=64)
    demo: bool = False
    """The embedded model plays a role: the run is labelled DEMO."""
    out: Path | None = None
    runs_root: Path = Path("runs")
    fresh: bool = False
    use_cache: bool = True
    cache_path: Path | None = None
    max_attempts: int = Field(default=6, ge=1)
    timeout_s: float | None = None
    n_boot: int = Field(default=2000, ge=1)
    ci_seed: int = 0


@dataclass(frozen=True)
class Prepared:
    personas: list[LoadedPersona]
    identity: dict[str, Any]
    identity_hash: str
    run_id: str
    run_dir: Path
    plans: list[SessionPlan]
    skipped_tasks: tuple[tuple[str, str], ...] = ()
    """Tool tasks the source could not run here (task id, why): printed and kept in the manifest."""


def select_personas(spec: SimSpec) -> list[LoadedPersona]:
    """The personas of the spec's files (or compiled from its tool tasks), filtered by `--lang`; nothing left is
    an error."""
    if spec.tasks:
        return [LoadedPersona(persona, task.id, None) for task, persona in _tool_tasks(spec)]
    loaded = load_personas(spec.personas)
    if spec.lang != "auto":
        kept = [p for p in loaded if p.persona.lang == spec.lang]
        if not kept:
            langs = sorted({p.persona.lang for p in loaded})
            raise ConfigError(f"--lang {spec.lang}: none of the {len(loaded)} personas in {', '.join(spec.personas)} "
                              f"is in that language (they are {', '.join(langs)}); use --lang auto.")
        loaded = kept
    if spec.max_personas is not None:
        loaded = loaded[:spec.max_personas]
    if spec.assessor.model == "rules":
        for item in loaded:
            for goal in item.persona.goal:
                if not goal.check.by_code:
                    raise ConfigError(
                        f"{item.where}: persona '{item.persona.id}', goal item '{goal.id}' has only a judge question, "
                        "which the rules assessor cannot decide: add check.any_of or check.pattern, or pass "
                        "--assessor PROVIDER:MODEL.")
    return loaded


def _tool_tasks(spec: SimSpec) -> list[tuple[ToolTask, Persona]]:
    from uxbench.sim.task_compile import compile_persona
    from uxbench.sim.task_sources import select_tasks

    return [(task, compile_persona(task)) for task in select_tasks(spec.tasks).tasks]


def session_seed(run_seed: int, persona: Persona | str, trial: int) -> int:
    """The seed of one session, from the run's seed, the persona (or its content hash) and the trial."""
    persona_hash = persona if isinstance(persona, str) else persona.content_hash()
    digest = hashlib.sha256(f"{run_seed}\0{persona_hash}\0{trial}".encode()).hexdigest()
    return int(digest[:12], 16)


def prepare(spec: SimSpec) -> Prepared:
    """Read the personas, compute the identity and the plan (no directory is touched)."""
    from uxbench.runs import manifest as mf
    from uxbench.sim.realize import template_digests

    tasks: dict[str, ToolTask] = {}
    if spec.tasks:
        from uxbench.sim.task_compile import compile_persona
        from uxbench.sim.task_sources import select_tasks

        selected = select_tasks(spec.tasks)
        tasks = {task.id: task for task in selected.tasks}
        personas = [LoadedPersona(compile_persona(task), task.id, None) for task in selected.tasks]
    else:
        personas = select_personas(spec)
    hashes = [p.persona.content_hash() for p in personas]  # a dump of the whole persona: once each
    identity = {
        "kind": "sim", "schema_version": SCHEMA_VERSION, "policy_version": POLICY_VERSION,
        "personas": [[p.persona.id, h] for p, h in zip(personas, hashes, strict=True)],
        "model": spec.model.model, "model_args": mf.redact_args(spec.model.args),
        "simulator": spec.simulator.model, "simulator_args": mf.redact_args(spec.simulator.args),
        "assessor": spec.assessor.model, "assessor_args": mf.redact_args(spec.assessor.args),
        "mode": spec.mode, "trials": spec.trials, "max_turns": spec.max_turns, "lang": spec.lang, "seed": spec.seed,
        "generation": {"temperature": spec.temperature, "max_tokens": spec.max_tokens,
                       "sim_temperature": spec.sim_temperature, "sim_max_tokens": spec.sim_max_tokens},
        "templates": template_digests(),
    }
    if spec.tasks:  # only then: the ids of persona runs stay what they were
        identity["tool_tasks"] = {"selectors": spec.tasks, "agent_prompt": spec.agent_prompt,
                                  "max_tool_calls": spec.max_tool_calls, "sources": selected.versions,
                                  "tasks": [[t.id, t.digest] for t in selected.tasks]}
    identity_hash = mf.content_hash(identity)
    run_id = f"sim-{mf.model_slug(spec.model.model)}-{identity_hash[:10]}"
    if spec.out is None:  # a run named before run ids left paths out keeps its directory
        legacy = f"sim-{mf.slug(spec.model.model)}-{identity_hash[:10]}"
        run_id, run_dir = mf.run_dir_under(spec.runs_root, run_id, legacy)
    else:
        run_dir = spec.out
    plans = []
    for p_index, (item, persona_hash) in enumerate(zip(personas, hashes, strict=True)):
        persona = item.persona
        for trial in range(spec.trials):
            sid = hashlib.sha256(f"{identity_hash}\0{persona.id}\0{trial}".encode()).hexdigest()[:24]
            plans.append(SessionPlan(
                session_id=sid, index=p_index * spec.trials + trial, persona=persona,
                persona_hash=persona_hash, trial=trial, seed=session_seed(spec.seed, persona_hash, trial),
                mode=spec.mode, max_turns=spec.max_turns, task=tasks.get(str(persona.meta.get("task"))),
                agent_prompt=spec.agent_prompt,
            ))
    return Prepared(personas, identity, identity_hash, run_id, run_dir, plans,
                    tuple(selected.skipped) if spec.tasks else ())
