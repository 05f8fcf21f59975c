"""The strategy step of Task 3: an LLM (`--strategy-model`) labels each generated recovery with one of the six
recovery strategies, beside the rules' label that every record already carries.

Labels are stored like scores, in the run's `scores` table, under a key `strategy-<model>-<hash>` (the hash
covers the classifier's spec, redacted args, settings and template hashes), with `label` = the strategy:
`status ok` and no label = an unparseable answer (counted, not retried); `status error` = the call failed for
good (retried on the next run). Resumable like scoring: labels are committed as they finish and a rerun
labels only what is missing. The manifest lists classifiers under `strategy_classifiers`, apart from `judges`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from uxbench.data.schema import AnyCase, RecoveryCase
from uxbench.errors import ConfigError, UxbenchError
from uxbench.models.model import Model
from uxbench.orchestrate.progress import ProgressFn
from uxbench.orchestrate.score_loop import StepInfo, run_score_loop
from uxbench.orchestrate.spec import StrategySpec
from uxbench.runs import manifest as mf
from uxbench.runs.records import SampleRecord
from uxbench.runs.store import RunStore
from uxbench.scoring.strategies_llm import STRATEGY_KEY_PREFIX, StrategyClassifier

_CASE = TypeAdapter(AnyCase)
PHASE = "strategy"


@dataclass
class ClassifierRole:
    """A strategy classifier ready to label: its key in the run, what the manifest says of it, the spec."""

    key: str
    info: dict[str, Any]
    classifier: StrategyClassifier
    spec: StrategySpec


def classifier_role(spec: StrategySpec) -> ClassifierRole:
    classifier = StrategyClassifier(spec.lang)
    info: dict[str, Any] = {
        "spec": spec.model,
        "args": mf.redact_args(spec.args),
        "mode": "strategy",
        "settings": classifier.settings(),
        "template_hashes": classifier.template_hashes(),
    }
    key = f"{STRATEGY_KEY_PREFIX}{mf.slug(spec.model, 32)}-{mf.content_hash(info, 8)}"
    return ClassifierRole(key=key, info=info, classifier=classifier, spec=spec)


def classifiers_in_manifest(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = manifest.get("strategy_classifiers")
    return dict(found) if isinstance(found, dict) else {}


def require_recovery(task_name: str) -> None:
    if task_name != "recovery":
        raise ConfigError(
            f"--strategy-model labels Task 3 recoveries, but this run's task is {task_name}. Use it with "
            "--task recovery (or on a recovery run directory)."
        )


async def strategy_step(
    store: RunStore, role: ClassifierRole, model: Model, *, selected: list[str] | None, concurrency: int,
    progress: ProgressFn | None = None,
) -> dict[str, int]:
    """Label every selected, generated, non-empty recovery that this classifier has not labelled yet."""

    async def ask(case: AnyCase, record: SampleRecord) -> dict[str, Any]:
        if not isinstance(case, RecoveryCase):
            raise UxbenchError(f"{store.path}: sample {record.sample_id} is not a recovery case.")
        answer = await role.classifier.classify(case.complaint, record.raw_output or "", model, case.lang)
        final = answer.final
        return {"label": answer.strategy, "score_status": "text", "parse_note": answer.note,
                "raw_output": final.text if final else None, "reasoning": final.reasoning if final else None,
                "extra": {"lang": answer.lang, "calls": len(answer.outputs)}, **answer.totals()}

    info = StepInfo(key=role.key, phase=PHASE, what="strategy labels",
                    hint=f"Check the strategy model {role.spec.model}, its base_url and API key")
    out = await run_score_loop(store, info, wanted=lambda r: bool((r.raw_output or "").strip()), ask=ask,
                               selected=selected, concurrency=concurrency, progress=progress, keep_results=True)
    return {"labelled_now": out.done_now, "failed_now": out.failed_now,
            "unparseable_now": sum(1 for r in out.results if r.label is None), "already_labelled": out.already}
