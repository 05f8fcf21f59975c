"""The scoring step of Tasks 2/3: a judge grades the stored generations, one score record per (sample, judge).

Resumable like generation: scores are committed as they finish, a rerun scores only what is missing (failed
scores are retried), and generations are read from the run store, never regenerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from uxbench.data.schema import AnyCase
from uxbench.models.model import Model
from uxbench.orchestrate.progress import ProgressFn
from uxbench.orchestrate.score_loop import StepInfo, run_score_loop
from uxbench.orchestrate.spec import JudgeSpec
from uxbench.runs import manifest as mf
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.scoring.scorer import ReplyScorer, build_scorer
from uxbench.tasks.base import Task

_CASE = TypeAdapter(AnyCase)


@dataclass
class JudgeRole:
    """A judge ready to score: its key in the run, what the manifest says of it, the scorer and the model."""

    key: str
    info: dict[str, Any]
    scorer: ReplyScorer
    spec: JudgeSpec


def judge_role(judge: JudgeSpec) -> JudgeRole:
    """The judge's identity (spec, args without secrets, settings, template hashes) and key."""
    scorer = build_scorer(judge.settings, judge_name=f"The judge {judge.model}")
    info: dict[str, Any] = {
        "spec": judge.model,
        "args": mf.redact_args(judge.args),
        "mode": scorer.mode,
        "settings": scorer.settings(),
        "template_hashes": scorer.template_hashes(),
    }
    key = f"{scorer.mode}-{mf.slug(judge.model, 32)}-{mf.content_hash(info, 8)}"
    return JudgeRole(key=key, info=info, scorer=scorer, spec=judge)


async def score_step(
    store: RunStore,
    task: Task,
    role: JudgeRole,
    model: Model,
    *,
    selected: list[str] | None,
    concurrency: int,
    progress: ProgressFn | None = None,
) -> dict[str, int]:
    """Score every selected, successfully generated sample that this judge has not scored yet."""

    async def ask(case: AnyCase, record: SampleRecord) -> dict[str, Any]:
        judgement = await role.scorer.score(task.judge_input(case, record), model)
        final = judgement.final
        extra = dict(judgement.extra)
        return {
            "label": judgement.label, "score": judgement.score, "score_status": extra.pop("score_status", None),
            "emitted_mismatch": bool(extra.pop("emitted_mismatch", False)),
            "shorten_step": int(extra.pop("shorten_step", 0)), "parse_note": judgement.note,
            "raw_output": final.text if final else None, "reasoning": final.reasoning if final else None,
            "extra": extra, **judgement.totals(),
        }

    info = StepInfo(key=role.key, phase="score", what="judge calls",
                    hint=f"Check the judge {role.spec.model}, its base_url and API key")
    out = await run_score_loop(store, info, wanted=None, ask=ask, selected=selected,
                               concurrency=concurrency, progress=progress)
    return {"scored_now": out.done_now, "failed_now": out.failed_now, "already_scored": out.already}


def judges_in_manifest(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    judges = manifest.get("judges")
    return dict(judges) if isinstance(judges, dict) else {}

