"""Seeded, stratified sampling of kept candidates into the four benchmark tasks.

Which candidates a task may take:
- recovery (Task 3): bad cases whose next user turn complains, repeats or rephrases;
- judge_bad (Task 1, bad): bad cases;
- judge_good (Task 1, good): good cases;
- eval (Task 2): bad cases not marked needs_context (their query leans on something outside the text).

One case per conversation overall. Tasks pick in `task_priority` order (default recovery, judge_bad,
judge_good, eval: the scarcest pool first), so a conversation that could serve several tasks goes to the
first of them; later tasks sample from the conversations left.

Within a task, strata are (dimension, scenario). Each stratum first gets `floor_per_stratum` cases
(strata in a seeded order, while the target lasts); the rest of the target is shared in proportion to what
each stratum still has; gaps left by conversations already used are filled round-robin. No dimension
(and, with `scenario_cap_share`, no scenario) takes more than its cap share of the target, even if the
target is then missed. Inside a stratum the order is a seeded hash, QA-downgraded cases last: no bias
toward the highest judge scores. Same candidates and seed, same sample, whatever the input order.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict, Field

from uxbench.mining.agents.models import Candidate, SampleTask

TASKS: tuple[SampleTask, ...] = ("judge_bad", "judge_good", "eval", "recovery")
"""Export order of the tasks."""
Stratum = tuple[str, str]

ELIGIBLE: dict[SampleTask, Callable[[Candidate], bool]] = {
    "recovery": lambda c: c.recovery_eligible,
    "judge_bad": lambda c: c.kind == "bad",
    "judge_good": lambda c: c.kind == "good",
    "eval": lambda c: c.kind == "bad" and not c.needs_context,
}


class SampleConfig(BaseModel):
    """Targets are upper bounds; None takes every eligible case (one per conversation, no caps)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 0
    target_bad: int | None = Field(default=1000, ge=0)
    target_good: int | None = Field(default=1000, ge=0)
    target_eval: int | None = Field(default=4900, ge=0)
    target_recovery: int | None = Field(default=500, ge=0)
    floor_per_stratum: int = Field(default=2, ge=0)
    cap_share: float = Field(default=0.4, gt=0, le=1)
    """No dimension takes more than this share of a task's target."""
    scenario_cap_share: float | None = Field(default=None, gt=0, le=1)
    """The same for scenarios, when set."""
    task_priority: tuple[SampleTask, ...] = ("recovery", "judge_bad", "judge_good", "eval")

    def target(self, task: SampleTask) -> int | None:
        return {
            "judge_bad": self.target_bad, "judge_good": self.target_good,
            "eval": self.target_eval, "recovery": self.target_recovery,
        }[task]


class TaskSampleReport(BaseModel):
    target: int | None
    eligible: int
    """Eligible kept candidates before any conversation was used by an earlier task."""
    available: int
    """Eligible candidates whose conversation was still free when this task picked."""
    selected: int
    strata: dict[str, int] = Field(default_factory=dict)
    """Selected per 'dimension|scenario'."""


class SampleReport(BaseModel):
    seed: int = 0
    tasks: dict[str, TaskSampleReport] = Field(default_factory=dict)


def _key(seed: int, task: str, c: Candidate) -> tuple[int, str]:
    digest = hashlib.sha256(f"{seed}|{task}|{c.conversation_id}|{c.kind}|{c.turn_index}".encode()).hexdigest()
    return (1 if c.quality == "medium" else 0, digest)


def _stratum_order(seed: int, task: str, strata: Iterable[Stratum]) -> list[Stratum]:
    return sorted(strata, key=lambda s: hashlib.sha256(f"{seed}|{task}|{s[0]}|{s[1]}".encode()).hexdigest())


class _Picker:
    """Takes candidates of one task stratum by stratum, honouring caps and one per conversation."""

    def __init__(self, pool: list[Candidate], target: int | None, config: SampleConfig, used: set[str],
                 task: SampleTask) -> None:
        self.used = used
        self.target = target
        self.chosen: list[Candidate] = []
        self.queues: dict[Stratum, deque[Candidate]] = defaultdict(deque)
        for c in sorted(pool, key=lambda c: _key(config.seed, task, c)):
            self.queues[(c.dimension or "", c.scenario or "")].append(c)
        self.order = _stratum_order(config.seed, task, self.queues)
        self.dim_cap = math.inf if target is None else max(1, math.floor(config.cap_share * target))
        share = config.scenario_cap_share
        self.scen_cap = math.inf if target is None or share is None else max(1, math.floor(share * target))
        self.dims: Counter[str] = Counter()
        self.scens: Counter[str] = Counter()

    def budget(self) -> float:
        return math.inf if self.target is None else self.target - len(self.chosen)

    def open(self, s: Stratum) -> bool:
        return self.dims[s[0]] < self.dim_cap and self.scens[s[1]] < self.scen_cap

    def available(self, s: Stratum) -> int:
        return sum(1 for c in self.queues[s] if c.conversation_id not in self.used)

    def take(self, s: Stratum) -> bool:
        queue = self.queues[s]
        if self.budget() <= 0 or not self.open(s):
            return False
        while queue:
            c = queue.popleft()
            if c.conversation_id in self.used:
                continue
            self.used.add(c.conversation_id)
            self.chosen.append(c)
            self.dims[s[0]] += 1
            self.scens[s[1]] += 1
            return True
        return False

    def run(self, floor: int) -> list[Candidate]:
        for s in self.order:
            for _ in range(floor):
                if not self.take(s):
                    break
        self._proportional()
        progress = True
        while progress and self.budget() > 0:
            progress = False
            for s in self.order:
                progress = self.take(s) or progress
        return self.chosen

    def _proportional(self) -> None:
        budget = self.budget()
        avail = {s: self.available(s) for s in self.order}
        total = sum(avail.values())
        if total == 0 or budget <= 0 or budget == math.inf:
            return
        share = {s: min(avail[s], budget * avail[s] / total) for s in self.order}
        quota = {s: math.floor(v) for s, v in share.items()}
        left = int(min(budget, total)) - sum(quota.values())
        for s in sorted(self.order, key=lambda s: quota[s] - share[s])[: max(0, left)]:
            quota[s] += 1
        for s in self.order:
            for _ in range(quota[s]):
                if not self.take(s):
                    break


def sample_cases(
    candidates: Iterable[Candidate], config: SampleConfig | None = None, *, report: SampleReport | None = None
) -> list[Candidate]:
    """The selected cases (copies with `task` set), grouped by task in export order (judge_bad,
    judge_good, eval, recovery), each group in its seeded order. Only kept candidates are considered."""
    cfg = config or SampleConfig()
    kept = [c for c in candidates if c.status == "kept" and c.kept and c.dimension and c.scenario]
    used: set[str] = set()
    chosen: dict[SampleTask, list[Candidate]] = {}
    for task in dict.fromkeys(cfg.task_priority):
        eligible = [c for c in kept if ELIGIBLE[task](c)]
        pool = [c for c in eligible if c.conversation_id not in used]
        target = cfg.target(task)
        picked = _Picker(pool, target, cfg, used, task).run(cfg.floor_per_stratum)
        picked.sort(key=lambda c: _key(cfg.seed, task, c)[1])
        chosen[task] = [c.model_copy(update={"task": task}) for c in picked]
        if report is not None:
            strata = Counter(f"{c.dimension}|{c.scenario}" for c in picked)
            report.seed = cfg.seed
            report.tasks[task] = TaskSampleReport(
                target=target, eligible=len(eligible), available=len(pool), selected=len(picked),
                strata=dict(sorted(strata.items())),
            )
    return [c for task in TASKS for c in chosen.get(task, [])]
